import { z } from "zod";
import { AppError } from "../core/errors";
import { toolCallSchema, type ChatModel, type Reply } from "./protocol";

/**
 * A chat model behind an OpenAI-compatible chat-completions endpoint (issue 24 item 4): a hosted gateway, or
 * a developer's own server (vLLM, llama.cpp, Ollama, LM Studio) named by MODEL_BASE_URL; the local model
 * answers the same shape (./local.ts localChatFetch). One POST per model call, non-streaming (the loop needs
 * the whole reply to see its tool calls), bounded in time. A failure is an AppError the conversation shows
 * (the provider's status and its own words, never the key); a reply that is not the protocol's shape is one
 * too, so a misbehaving server cannot make the loop act on garbage.
 */
export interface OpenAICompatibleOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** The network (tests and the local model hand their own). */
  fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
  /** How long one model call may take (default 60 s). */
  timeoutMs?: number;
}

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).partial().nullish(),
});

const unavailable = (message: string, data: Record<string, unknown> = {}) =>
  new AppError("SERVICE_UNAVAILABLE", `The assistant's model did not answer: ${message} Try again in a moment; if it keeps failing, check MODEL_BASE_URL and MODEL_NAME.`, {
    reason: "model_unavailable",
    ...data,
  });

export function openAICompatibleModel(options: OpenAICompatibleOptions): ChatModel {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return async (messages, tools) => {
    let res: Response;
    try {
      res = await send(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({ model: options.model, messages, ...(tools.length ? { tools, tool_choice: "auto" } : {}), stream: false }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
      });
    } catch (e) {
      const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      throw unavailable(timedOut ? "it took too long." : "its server could not be reached.");
    }
    const text = await res.text();
    if (!res.ok) {
      // The provider's own words, shortened: they say what is wrong (a model name, a quota); the key is never in them.
      let said = "";
      try {
        const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
        said = typeof body.error === "string" ? body.error : typeof body.error?.message === "string" ? body.error.message : typeof body.message === "string" ? body.message : "";
      } catch {
        said = "";
      }
      throw unavailable(`its server answered ${res.status}${said ? ` (${said.slice(0, 200)})` : ""}.`, { status: res.status });
    }
    let parsed: z.infer<typeof completionSchema>;
    try {
      parsed = completionSchema.parse(JSON.parse(text));
    } catch {
      throw unavailable("its answer was not a chat completion.");
    }
    const message = parsed.choices[0]!.message;
    const reply: Reply = { content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) };
    const prompt = parsed.usage?.prompt_tokens ?? 0;
    const completion = parsed.usage?.completion_tokens ?? 0;
    return { reply, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
  };
}
