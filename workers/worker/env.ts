import type { BaseEnv } from "#shared/core/env";
import type { HonoEnv } from "#shared/http/app";
import type { Providers } from "#shared/pipeline/providers";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import type { Scheduler } from "./scheduler";

/** Bindings from wrangler.toml (generated types, with the Durable Objects typed) plus the variables
 * and secrets of shared/core/env.ts. */
export type WorkerBindings = Omit<Cloudflare.WorkerEnv, "SCHEDULER" | "RATE_LIMITER"> & {
  SCHEDULER: DurableObjectNamespace<Scheduler>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
} & Partial<Record<keyof BaseEnv, string>>;

/** The provider services the worker calls: the gateways and couriers of the webhooks and jobs, app webhooks, domains, mail. */
export type WorkerProviders = Omit<Providers, "challenge" | "dnsConfig">;

export type WorkerHonoEnv = HonoEnv<WorkerBindings, {}, WorkerProviders>;
