import { app } from "./app";
import type { StorefrontBindings } from "./env";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<StorefrontBindings>;
