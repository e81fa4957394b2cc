import { ucpSigningKey } from "../db/schema";
import { EXAMPLE, narrow, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";
import type { PublicJwk } from "./keys";

/** The UCP area's statements in SQL (decision 0026): the store's signing keys (./store-keys.ts). */

const KID = "A".repeat(43);

/** The unit store's signing key replaced: kept published until `graceDays` from now. */
export const retireSigningKey = statement("ucp.retireSigningKey", {
  row: {},
  examples: [[7]],
  sql: (graceDays: number) =>
    sql`update ucp_signing_key set retires_at = now() + make_interval(days => ${graceDays}::int)
     where store_id = ${CURRENT_STORE} and retires_at is null`,
});

/** A new signing key of the unit's store (after its current one was retired in the same unit). */
export const insertSigningKey = statement("ucp.insertSigningKey", {
  row: { kid: ucpSigningKey.kid },
  examples: [[{ kid: KID, publicJwk: { kty: "EC", crv: "P-256" }, sealed: "v1.a.b" }]],
  sql: (k: { kid: string; publicJwk: Record<string, unknown>; sealed: string }) =>
    sql`insert into ucp_signing_key (store_id, kid, public_jwk, private_sealed)
     values (${CURRENT_STORE}, ${k.kid}, ${JSON.stringify(k.publicJwk)}::jsonb, ${k.sealed}) returning kid`,
});

/** The keys the store's profile publishes: the signing key first, then replaced keys until they retire. */
export const publishedSigningKeys = statement("ucp.publishedSigningKeys", {
  row: { public_jwk: narrow<PublicJwk>(ucpSigningKey.publicJwk) },
  examples: [[]],
  sql: () =>
    sql`select public_jwk from ucp_signing_key
     where store_id = ${CURRENT_STORE} and (retires_at is null or retires_at > now())
     order by retires_at is not null, created_at desc, kid`,
});

/** The key the store signs with now, sealed. */
export const currentSigningKey = statement("ucp.currentSigningKey", {
  row: { kid: ucpSigningKey.kid, private_sealed: ucpSigningKey.privateSealed },
  examples: [[]],
  sql: () => sql`select kid, private_sealed from ucp_signing_key where store_id = ${CURRENT_STORE} and retires_at is null`,
});


/**
 * An order update for the agent of the order's checkout session (./order-webhooks.ts), none twice per event:
 * only for an order placed through a session whose platform gave an order webhook URL, once money came in (the
 * session reads `completed` from then on; before, the agent follows the session, not an order).
 */
export const addOrderDelivery = statement("ucp.addOrderDelivery", {
  row: {},
  examples: [[{ orderId: EXAMPLE.id, eventId: EXAMPLE.id, kind: "order.paid", createdAt: EXAMPLE.at, paid: ["paid", "refunded"] }]],
  sql: (e: { orderId: string; eventId: string; kind: string; createdAt: Date; paid: readonly string[] }) =>
    sql`insert into ucp_order_delivery (store_id, order_id, event_id, event_kind, event_created_at)
     select s.store_id, s.order_id, ${e.eventId}::uuid, ${e.kind}, ${e.createdAt}
       from ucp_checkout_session s join shop_order o on o.store_id = s.store_id and o.id = s.order_id
      where s.store_id = ${CURRENT_STORE} and s.order_id = ${e.orderId}::uuid and s.webhook_url is not null
        and o.channel = 'ucp' and o.payment_status = any(${`{${e.paid.join(",")}}`}::text[])
     on conflict (store_id, event_id) do nothing`,
});
