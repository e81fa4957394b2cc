import { z } from "zod";

/**
 * Variables every Worker reads, validated once per isolate at the boundary (STYLE 2).
 * Bindings (KV, Queues, Durable Objects) are typed by `wrangler types`; these are the plain variables
 * and secrets, which wrangler cannot type.
 */
export const baseEnvSchema = z.object({
  APP_ENV: z.enum(["development", "test", "production"]).default("production"),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  // Postgres as the runtime role (app_user). On Neon: the pooled connection string of that role.
  DATABASE_URL: z
    .string({ error: "DATABASE_URL is required (see .dev.vars.example)" })
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgres:// connection string"),
  // Local stack only: host:port of the project's WebSocket-to-TCP proxy. Unset against Neon.
  DB_WS_PROXY: z
    .string()
    .regex(/^(127\.0\.0\.1|localhost|\[::1\]):\d{2,5}$/, "DB_WS_PROXY must be a loopback host:port")
    .optional(),
  // How long a request waits for a database connection (ms) before answering 503 (Neon's pooler queues).
  DB_CONNECT_TIMEOUT_MS: z.coerce
    .number<string>({ error: "DB_CONNECT_TIMEOUT_MS must be a number of milliseconds" })
    .int("DB_CONNECT_TIMEOUT_MS must be a whole number of milliseconds")
    .min(50, "DB_CONNECT_TIMEOUT_MS must be at least 50")
    .max(60_000, "DB_CONNECT_TIMEOUT_MS must be at most 60000")
    .default(5_000),
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;

export class EnvError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid Worker environment: ${issues.join("; ")}`);
    this.name = "EnvError";
  }
}

// Isolate cache: the env object is fixed for an isolate's life, so each is parsed once.
const parsed = new WeakMap<object, unknown>();

export function parseEnv<S extends z.ZodType<BaseEnv>>(schema: S, env: object): z.infer<S> {
  const hit = parsed.get(env);
  if (hit) return hit as z.infer<S>;
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new EnvError(result.error.issues.map((i) => `${i.path.join(".") || "env"}: ${i.message}`));
  }
  parsed.set(env, result.data);
  return result.data;
}

/** A variable holding JSON (e.g. LOCAL_GATEWAY_BEHAVIOUR), checked; empty or absent reads as `{}`. Throws naming it. */
export function parseJsonVariable<S extends z.ZodType>(name: string, json: string | undefined, schema: S): z.infer<S> {
  let value: unknown = {};
  if (json?.trim()) {
    try {
      value = JSON.parse(json);
    } catch {
      throw new Error(`${name} is not JSON`);
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${name}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}
