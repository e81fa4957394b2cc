import { stripCookies } from "./api-v1";
import { app } from "./app";
import type { AdminBindings } from "./env";

export { RateLimiter } from "#shared/limits/rate-limiter";
export { AssistantConversation } from "./assistant-conversation";

export default {
  // Bearer-only paths lose their cookies before anything else runs.
  fetch: (request: Request, env: AdminBindings, ctx: ExecutionContext) => app.fetch(stripCookies(request), env, ctx),
} satisfies ExportedHandler<AdminBindings>;
