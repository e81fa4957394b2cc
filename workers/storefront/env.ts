import type { BaseEnv } from "#shared/http/env";

export type StorefrontBindings = Cloudflare.StorefrontEnv & Partial<Record<keyof BaseEnv, string>>;
