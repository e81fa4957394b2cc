import { app } from "./app";
import type { StorefrontBindings } from "./env";

export { RateLimiter } from "#shared/limits/rate-limiter";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<StorefrontBindings>;
