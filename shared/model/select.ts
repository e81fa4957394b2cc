import { z } from "zod";
import { localChatFetch, LOCAL_MODEL, type LocalContext } from "./local";
import { openAICompatibleModel } from "./openai-compatible";
import type { ChatModel } from "./protocol";
import { DEFAULT_WORKERS_AI_MODEL, workersAIModel, type AiBinding } from "./workers-ai";

/**
 * Which chat model the store's assistant talks to, from the deployment's variables (issue 24 item 4):
 *
 *   MODEL_PROVIDER=local               the local model (./local.ts): development and tests only
 *   MODEL_PROVIDER=workers-ai          the Workers AI binding `AI`, MODEL_NAME a function-calling model
 *                                      (default DEFAULT_WORKERS_AI_MODEL)
 *   MODEL_PROVIDER=openai-compatible   MODEL_BASE_URL (https, or http on a loopback address for a developer's own
 *                                      server), MODEL_API_KEY (a secret, optional for a local server), MODEL_NAME
 *
 * Unset, it is the local model where that is allowed. A wrong value throws naming the variable and what it
 * must be, so a misconfigured deployment says what to fix at its first use.
 */
export type ModelSettings =
  | { provider: "local" }
  | { provider: "workers-ai"; model: string }
  | { provider: "openai-compatible"; baseUrl: string; apiKey: string | undefined; model: string };

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

const baseUrl = z
  .url({ message: "must be the server's base URL, e.g. https://api.example.com/v1" })
  .refine((u) => {
    const url = new URL(u);
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.test(url.hostname));
  }, "must use https (http only for a server on this machine: localhost or 127.0.0.1)")
  .refine((u) => !new URL(u).username && !new URL(u).password, "must not carry credentials: put the key in MODEL_API_KEY")
  .transform((u) => u.replace(/\/+$/, ""));

const modelName = z.string().trim().min(1, "must name the model").max(200);

const envSchema = z.discriminatedUnion("MODEL_PROVIDER", [
  z.object({ MODEL_PROVIDER: z.literal("local") }),
  z.object({ MODEL_PROVIDER: z.literal("workers-ai"), MODEL_NAME: modelName.default(DEFAULT_WORKERS_AI_MODEL) }),
  z.object({
    MODEL_PROVIDER: z.literal("openai-compatible"),
    MODEL_BASE_URL: baseUrl,
    MODEL_API_KEY: z.string().min(1).max(500).optional(),
    MODEL_NAME: modelName,
  }),
]);

const isDevelopment = (env: Readonly<Record<string, unknown>>) => env.APP_ENV === "development" || env.APP_ENV === "test";

/** The deployment's model as its variables name it; throws naming the variable. */
export function modelSettingsFromEnv(env: Readonly<Record<string, unknown>>): ModelSettings {
  const given = { MODEL_PROVIDER: isDevelopment(env) ? "local" : undefined, ...dropEmpty(env) };
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "MODEL_PROVIDER"}: ${i.message}`);
    throw new Error(`Model configuration: ${issues.join("; ")}. Set MODEL_PROVIDER to workers-ai or openai-compatible (see docs/assistant.md).`);
  }
  const e = parsed.data;
  if (e.MODEL_PROVIDER === "local") {
    if (!isDevelopment(env)) throw new Error("Model configuration: MODEL_PROVIDER: the local model is for development and tests only; choose workers-ai or openai-compatible");
    return { provider: "local" };
  }
  if (e.MODEL_PROVIDER === "workers-ai") return { provider: "workers-ai", model: e.MODEL_NAME };
  return { provider: "openai-compatible", baseUrl: e.MODEL_BASE_URL, apiKey: e.MODEL_API_KEY, model: e.MODEL_NAME };
}

/** Variables set to "" count as unset (wrangler's empty vars, .dev.vars placeholders). */
function dropEmpty(env: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith("MODEL_") && v !== ""));
}

/**
 * The model port for these settings: the local model through its own HTTP shape (so it is spoken to exactly as
 * a server is), an OpenAI-compatible server, or Workers AI through the binding (an `AI` binding is required).
 */
export function chatModelFor(settings: ModelSettings, deps: { ai?: AiBinding | undefined; local: () => LocalContext }): ChatModel {
  switch (settings.provider) {
    case "local":
      return openAICompatibleModel({ baseUrl: "http://local-model.invalid/v1", model: LOCAL_MODEL, fetch: localChatFetch(deps.local) });
    case "openai-compatible":
      return openAICompatibleModel({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, model: settings.model });
    case "workers-ai":
      if (!deps.ai) throw new Error("Model configuration: MODEL_PROVIDER=workers-ai needs the AI binding: add [ai] binding = \"AI\" to the admin's wrangler.toml environment.");
      return workersAIModel(deps.ai, settings.model);
  }
}
