import type { Database } from "#shared/db/database";
import type { Logger } from "#shared/core/log";
import type { StorefrontProviders } from "./context";
import type { StorefrontBindings } from "./env";
import type { ShopStore } from "./store";

/** What the public app hands over with a shopper's request to the store's internal paths. */
export interface ShopRequest {
  db: Database;
  log: Logger;
  store: ShopStore;
  hostname: string;
  /** The path and query the shopper asked for (for the password page's return). */
  asked: string;
  /** The storefront's provider services (the store's payment gateway, the person check). */
  providers: StorefrontProviders;
  /** The Worker's bindings (the limiter the checkout page asks ahead, the local gateway's webhook origin). */
  env: StorefrontBindings;
  /** Work to finish after the answer (the public app's `defer`, kept alive by waitUntil). */
  defer: (work: Promise<unknown>) => void;
  /** The shopper-facing origin (the Host the shopper used, port included). */
  origin: string;
}

export type ShopEnv = { Variables: { shop: ShopRequest } };
