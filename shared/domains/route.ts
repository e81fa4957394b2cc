/**
 * The {domains}-route consumer (docs/domains.md): the relay sends it every `domain.*` event (route
 * `domain`). `domain.verified` creates the hostname's custom hostname at the router (looked up first, so
 * a retry finds the one it made), keeps its id and status on the domain row and then points the HOSTS
 * entry at the store; `domain.removed` of a domain that was verified deletes the custom hostname and
 * points the HOSTS entry at whoever holds the hostname then (no store, unless a verified domain has taken
 * it since), while a claim that never verified touches neither: several stores may claim one hostname, and
 * what the router and HOSTS hold for it is the winner's (decision 0024). Other kinds change nothing. Idempotent by the
 * event id: its receipt is written in the same transaction as the row change, and a delivery that finds
 * the receipt does nothing. Two round trips: a unit reads what the event needs, the router is called
 * outside any transaction, a unit records the outcome.
 */
import { and, eq, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { domainRouteReceipt, storeDomain, type DomainRouteOutcome } from "../db/schema";
import { sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { Consumer, RoutedEvent } from "../events/routes";
import { errorFields, type Logger } from "../core/log";
import { writeHostEntry, type HostsKv } from "../storefront/hosts";
import { ensureRouted, ensureUnrouted, type CustomHostname, type DomainRouter } from "./router";
import { hostnameHolder, keepRouteReceipt } from "./statements";

export interface RouteDeps {
  db: Database;
  router: DomainRouter;
  hosts: HostsKv;
  log: Logger;
}

const verifiedPayload = z.object({ domainId: z.uuid(), hostname: z.string().min(1).max(253) });
/**
 * `status` and `verifiedAt` are the row's when it was removed (absent from events written before they were
 * carried: such an event is handled as a domain that may have been verified).
 */
const removedPayload = verifiedPayload.extend({
  routerId: z.string().min(1).max(100).nullish(),
  status: z.enum(["pending", "verified", "failed"]).optional(),
  verifiedAt: z.string().nullish(),
});

/** Whether a removed domain was ever verified, so ever routed or served: only a pending domain turns verified, and a verified one never turns back. */
const everServed = (p: z.infer<typeof removedPayload>): boolean => p.status === undefined || p.status === "verified" || p.verifiedAt != null || p.routerId != null;

/** A queue message's body as the relay sends it (shared/events/routes.ts RoutedEvent). */
export const routedEventSchema = z.object({
  eventId: z.uuid(),
  storeId: z.uuid(),
  kind: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  route: z.string(),
});

export const routeDomainEvent: Consumer<RouteDeps> = async (message, deps) => {
  if (message.kind === "domain.verified") return routeVerified(message, deps);
  if (message.kind === "domain.removed") return unrouteRemoved(message, deps);
  deps.log.debug("domains.route_ignored", { storeId: message.storeId, eventId: message.eventId, kind: message.kind });
};

/**
 * Points the hostname's HOSTS entry at the store (or at none). A KV write that fails is logged, never
 * retried through the queue: the change is committed, the receipt makes a retry a no-op, and the entry's
 * 60 s hold (shared/storefront/hosts.ts) bounds how long a stale one can answer.
 */
async function pointHost(deps: RouteDeps, hostname: string, storeId: string | null): Promise<void> {
  await writeHostEntry(deps.hosts, hostname, storeId).catch((e: unknown) => deps.log.warn("storefront.hosts_write_failed", { hostnames: [hostname], ...errorFields(e) }));
}

type Receipt = { outcome: DomainRouteOutcome; hostname: string; routerId?: string | null };

/** This event's receipt: a statement of the unit that applies it; it writes nothing when another delivery wrote one first. */
function receiptStep(q: Q, message: RoutedEvent, r: Receipt & { id?: string }) {
  return keepRouteReceipt(q, {
    id: r.id ?? crypto.randomUUID(),
    eventId: message.eventId,
    kind: message.kind,
    hostname: r.hostname,
    routerId: r.routerId ?? null,
    outcome: r.outcome,
  });
}

/** Writes the receipt of an event that changes nothing (its own unit). */
async function receipt(db: Database, message: RoutedEvent, r: Receipt): Promise<void> {
  await sendStoreUnit(db, message.storeId, (q) => plan([receiptStep(q, message, r)] as const, () => undefined), { readOnly: false });
}

/** This event's receipt, if a delivery applied it already. */
const appliedStep = (q: Q, message: RoutedEvent) =>
  q
    .select({ id: domainRouteReceipt.id })
    .from(domainRouteReceipt)
    .where(and(eq(domainRouteReceipt.storeId, CURRENT_STORE), eq(domainRouteReceipt.eventId, message.eventId)));

/** The store holding a hostname through a verified domain, now (the privileged lookup, as a statement of the unit). */
const holderStep = (q: Q, hostname: string) => hostnameHolder(q, hostname);

async function routeVerified(message: RoutedEvent, deps: RouteDeps): Promise<void> {
  const { db, router, log } = deps;
  const { domainId, hostname } = verifiedPayload.parse(message.payload);
  const context = { storeId: message.storeId, eventId: message.eventId, domainId, hostname };
  const current = sql`store_id = ${CURRENT_STORE} and id = ${domainId} and status = 'verified' and hostname = ${hostname}`;
  const seen = await sendStoreUnit(db, message.storeId, (q) =>
    plan([appliedStep(q, message), q.select({ id: storeDomain.id }).from(storeDomain).where(current)] as const, ([applied, domain]) => ({
      applied: applied.length > 0,
      verified: domain.length > 0,
    })),
  );
  if (seen.applied) return log.info("domains.route_duplicate", context);
  if (!seen.verified) {
    await receipt(db, message, { outcome: "skipped", hostname });
    return log.info("domains.route_skipped", { ...context, reason: "the domain is no longer verified under this hostname" });
  }
  // Outside any transaction: the router may be slow, and a retry finds what this call made.
  const routed = await ensureRouted(router, hostname);
  const outcome = await sendStoreUnit(db, message.storeId, (q) => recordRoutedPlan(q, message, current, hostname, routed), { readOnly: false });
  if (outcome.kind === "routed") {
    await pointHost(deps, hostname, message.storeId);
    log.info("domains.routed", { ...context, routerId: routed.id, routerStatus: routed.status });
  } else if (outcome.kind === "gone") {
    // Removed while it was being routed: its removal found nothing to delete, so undo what this made.
    if (outcome.holder === null) await ensureUnrouted(router, routed.id);
    log.info("domains.route_skipped", { ...context, reason: "the domain was removed while it was being routed" });
  } else {
    log.info("domains.route_duplicate", context);
  }
}

/**
 * The route's record: the receipt, then the domain row if it is still verified under the hostname (and
 * the receipt was this delivery's); a domain gone meanwhile turns this receipt into `skipped`, and the
 * unit answers who holds the hostname now.
 */
function recordRoutedPlan(q: Q, message: RoutedEvent, current: SQL, hostname: string, routed: CustomHostname): Plan<{ kind: "routed" | "gone" | "duplicate"; holder: string | null }> {
  const id = crypto.randomUUID();
  const mine = sql`exists (select 1 from domain_route_receipt where store_id = ${CURRENT_STORE} and id = ${id})`;
  return plan(
    [
      receiptStep(q, message, { id, outcome: "routed", hostname, routerId: routed.id }),
      q
        .update(storeDomain)
        .set({ routerId: routed.id, routerStatus: routed.status, routerSslStatus: routed.sslStatus, routedAt: sql`now()`, updatedAt: sql`now()` })
        .where(sql`${current} and ${mine}`)
        .returning({ id: storeDomain.id }),
      q
        .update(domainRouteReceipt)
        .set({ outcome: "skipped" })
        .where(
          and(
            eq(domainRouteReceipt.storeId, CURRENT_STORE),
            eq(domainRouteReceipt.id, id),
            sql`not exists (select 1 from store_domain where ${current} and router_id = ${routed.id})`,
          ),
        ),
      holderStep(q, hostname),
    ] as const,
    ([written, updated, , [holder]]) => ({
      kind: written.length === 0 ? "duplicate" : updated.length > 0 ? "routed" : "gone",
      holder: holder?.id ?? null,
    }),
  );
}

async function unrouteRemoved(message: RoutedEvent, deps: RouteDeps): Promise<void> {
  const { db, router, log } = deps;
  const payload = removedPayload.parse(message.payload);
  const { hostname, routerId: known, domainId } = payload;
  const context = { storeId: message.storeId, eventId: message.eventId, domainId, hostname };
  // A claim that never verified was never routed and never served this store: whatever the router and the
  // HOSTS entry hold for its hostname is another store's (or nobody's). Neither is looked up nor touched.
  if (!everServed(payload)) {
    await receipt(db, message, { outcome: "skipped", hostname });
    return log.info("domains.route_skipped", { ...context, reason: "a claim that never verified has no route" });
  }
  const seen = await sendStoreUnit(db, message.storeId, (q) =>
    plan([appliedStep(q, message), holderStep(q, hostname)] as const, ([applied, [holder]]) => ({ applied: applied.length > 0, holder: holder?.id ?? null })),
  );
  if (seen.applied) return log.info("domains.route_duplicate", context);
  // A verified domain (this store's again, or another's) may hold the hostname now: its route stands, and
  // its entry names it (the removal's own "no store", written at once by the door, may have come after).
  if (seen.holder !== null) {
    await receipt(db, message, { outcome: "skipped", hostname });
    await pointHost(deps, hostname, seen.holder);
    return log.info("domains.route_skipped", { ...context, reason: "the hostname is verified again" });
  }
  // The event names the router id the row had; a domain removed before its route was stored has none.
  const routerId = known ?? (await router.find(hostname))?.id ?? null;
  if (routerId) await ensureUnrouted(router, routerId);
  // The receipt's unit reads who holds the hostname once more: the entry names that store, never "no store"
  // over a hostname another store verified meanwhile.
  const holder = await sendStoreUnit(
    db,
    message.storeId,
    (q) => plan([receiptStep(q, message, { outcome: "unrouted", hostname, routerId }), holderStep(q, hostname)] as const, ([, [now]]) => now?.id ?? null),
    { readOnly: false },
  );
  await pointHost(deps, hostname, holder);
  log.info("domains.unrouted", { ...context, routerId });
}
