import type { BaseEnv } from "#shared/core/env";

export type StorefrontBindings = Cloudflare.StorefrontEnv &
  Partial<Record<keyof BaseEnv, string>> & {
    /** Where the local gateway's page sends its webhooks (the worker; `npm run dev` sets it). */
    PAYMENT_WEBHOOK_ORIGIN?: string;
  };
