import type { BaseEnv } from "#shared/core/env";

export type StorefrontBindings = Cloudflare.StorefrontEnv & Partial<Record<keyof BaseEnv, string>>;
