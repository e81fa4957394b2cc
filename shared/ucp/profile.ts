import type { PublicJwk } from "./keys";

/**
 * The store's UCP business profile, served at `/.well-known/ucp` on each of its domains (issue 26 item 2;
 * docs/ucp.md): the protocol version we implement, the shopping service over REST and MCP, the checkout
 * capability with the extensions we honour (fulfillment, discount) and order updates, our payment handlers
 * and the store's public signing keys (a JWK Set under `keys`).
 */

/** The version of the specification we implement (ucp.dev, released 2026-08-25; test/fixtures/ucp/2026-08-25/SOURCE.md). */
export const UCP_VERSION = "2026-08-25";

const SPEC = `https://ucp.dev/${UCP_VERSION}`;

/** Where a store's UCP endpoints live on its domain: REST operations are appended to the base (`/checkout-sessions`). */
export const UCP_REST_BASE = "/api/ucp";
export const UCP_MCP_PATH = "/api/mcp";
/** Where the buyer takes over an open session on the store's domain (workers/storefront/ucp-handoff.tsx). */
export const continuePath = (sessionId: string) => `/cart/session/${sessionId}`;

export interface BusinessProfile {
  ucp: {
    version: string;
    services: Record<string, Record<string, unknown>[]>;
    capabilities: Record<string, Record<string, unknown>[]>;
    payment_handlers: Record<string, Record<string, unknown>[]>;
  };
  keys: PublicJwk[];
}

const capability = (path: string, schema: string, extra: Record<string, unknown> = {}) => [{ version: UCP_VERSION, spec: `${SPEC}/specification/${path}`, schema: `${SPEC}/schemas/shopping/${schema}`, ...extra }];

/**
 * The profile of a store reached at `origin` (https, no trailing slash), with its published keys: the newest
 * first, a replaced key listed until it retires (the specification's rotation grace of at least 7 days).
 */
export function businessProfile(origin: string, keys: readonly PublicJwk[]): BusinessProfile {
  const service = (transport: "rest" | "mcp", endpoint: string, schema: string) => ({
    version: UCP_VERSION,
    spec: `${SPEC}/specification/overview/`,
    transport,
    endpoint: `${origin}${endpoint}`,
    schema: `${SPEC}/services/shopping/${schema}`,
  });
  return {
    ucp: {
      version: UCP_VERSION,
      services: { "dev.ucp.shopping": [service("rest", UCP_REST_BASE, "rest.openapi.json"), service("mcp", UCP_MCP_PATH, "mcp.openrpc.json")] },
      capabilities: {
        "dev.ucp.shopping.checkout": capability("shopping/checkout/", "checkout.json"),
        // One parcel address per checkout: the store ships each order to one place.
        "dev.ucp.shopping.fulfillment": capability("fulfillment/", "fulfillment.json", { extends: "dev.ucp.shopping.checkout", config: { allows_multi_destination: { shipping: false } } }),
        "dev.ucp.shopping.discount": capability("discount/", "discount.json", { extends: "dev.ucp.shopping.checkout" }),
        "dev.ucp.shopping.order": capability("shopping/order/", "order.json"),
      },
      // No delegated payment: a session that needs payment answers requires_escalation with the store's own payment page.
      payment_handlers: {},
    },
    keys: [...keys],
  };
}
