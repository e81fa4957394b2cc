import type { BaseEnv } from "#shared/core/env";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import type { AssistantConversation } from "./assistant-conversation";

export type AdminBindings = Omit<Cloudflare.AdminEnv, "RATE_LIMITER" | "ASSISTANT"> & {
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  ASSISTANT: DurableObjectNamespace<AssistantConversation>;
} & Partial<Record<keyof BaseEnv, string>>;
