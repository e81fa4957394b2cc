import type { BaseEnv } from "#shared/core/env";
import type { RateLimiter } from "#shared/limits/rate-limiter";

export type AdminBindings = Omit<Cloudflare.AdminEnv, "RATE_LIMITER"> & {
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
} & Partial<Record<keyof BaseEnv, string>>;
