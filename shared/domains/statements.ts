import { domainRouteReceipt } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/** Custom domains' statements in SQL (decision 0026): claims' locks (./claims.ts) and the route consumer's receipts (./route.ts). */

const { id: ID } = EXAMPLE;

/** Waits for, then holds until the unit ends, the lock of a hostname's claims (./claims.ts `hostnameLock`). */
export const lockHostname = statement("domains.lockHostname", {
  row: { locked: pg.text() },
  examples: [["shop.example.test"]],
  sql: (hostname: string) => sql`select pg_advisory_xact_lock(hashtextextended(${`store_domain:${hostname}`}, 0))::text as locked`,
});

/** The store holding a hostname through a verified domain, now (the privileged lookup, as a statement of the unit). */
export const hostnameHolder = statement("domains.hostnameHolder", {
  row: { id: orNull(pg.uuid()) },
  examples: [["shop.example.test"]],
  sql: (hostname: string) => sql`select privileged.store_id_by_hostname(${hostname}) as id`,
});

export interface RouteReceipt {
  id: string;
  eventId: string;
  kind: string;
  hostname: string;
  routerId: string | null;
  outcome: string;
}

/** An event's receipt; it writes nothing when another delivery wrote one first. */
export const keepRouteReceipt = statement("domains.keepRouteReceipt", {
  row: { id: domainRouteReceipt.id },
  examples: [[{ id: ID, eventId: ID, kind: "domain.verified", hostname: "shop.example.test", routerId: null, outcome: "skipped" }]],
  sql: (r: RouteReceipt) =>
    sql`insert into domain_route_receipt (id, store_id, event_id, kind, hostname, router_id, outcome)
        values (${r.id}, ${CURRENT_STORE}, ${r.eventId}, ${r.kind}, ${r.hostname}, ${r.routerId}, ${r.outcome})
        on conflict do nothing returning id`,
});
