/**
 * The {domains}-route consumer (docs/domains.md): the relay sends it every `domain.*` event (route
 * `domain`). `domain.verified` creates the hostname's custom hostname at the router (looked up first, so
 * a retry finds the one it made), keeps its id and status on the domain row and then points the HOSTS
 * entry at the store; `domain.removed` deletes the custom hostname and points the HOSTS entry at no store,
 * unless a verified domain has taken the hostname since. Other kinds change nothing. Idempotent by the
 * event id: its receipt is written in the same transaction as the row change, and a delivery that finds
 * the receipt does nothing.
 */
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db/database";
import { storeIdByHostname } from "../db/privileged";
import { domainRouteReceipt, storeDomain, type DomainRouteOutcome } from "../db/schema";
import { withStore, type StoreTx } from "../db/with-store";
import type { Consumer, RoutedEvent } from "../events/routes";
import { errorFields, type Logger } from "../log";
import { writeHostEntry, type HostsKv } from "../storefront/hosts";
import { ensureRouted, ensureUnrouted, type DomainRouter } from "./router";

export interface RouteDeps {
  db: Database;
  router: DomainRouter;
  hosts: HostsKv;
  log: Logger;
}

const verifiedPayload = z.object({ domainId: z.uuid(), hostname: z.string().min(1).max(253) });
const removedPayload = verifiedPayload.extend({ routerId: z.string().min(1).max(100).nullish() });

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

/** The receipt of this event, if it was applied already (read-only unit). */
async function applied(db: Database, message: RoutedEvent): Promise<boolean> {
  const rows = await withStore(db, message.storeId, (tx) => tx.select({ id: domainRouteReceipt.id }).from(domainRouteReceipt).where(eq(domainRouteReceipt.eventId, message.eventId)), {
    readOnly: true,
  });
  return rows.length > 0;
}

/** Inserts the receipt; false when another delivery wrote it first. */
async function receipt(tx: StoreTx, message: RoutedEvent, r: Receipt): Promise<boolean> {
  const rows = await tx
    .insert(domainRouteReceipt)
    .values({ storeId: tx.storeId, eventId: message.eventId, kind: message.kind, hostname: r.hostname, routerId: r.routerId ?? null, outcome: r.outcome })
    .onConflictDoNothing()
    .returning({ id: domainRouteReceipt.id });
  return rows.length > 0;
}

async function routeVerified(message: RoutedEvent, deps: RouteDeps): Promise<void> {
  const { db, router, log } = deps;
  const { domainId, hostname } = verifiedPayload.parse(message.payload);
  const context = { storeId: message.storeId, eventId: message.eventId, domainId, hostname };
  if (await applied(db, message)) return log.info("domains.route_duplicate", context);
  const current = and(eq(storeDomain.storeId, message.storeId), eq(storeDomain.id, domainId), eq(storeDomain.status, "verified"), eq(storeDomain.hostname, hostname));
  const [domain] = await withStore(db, message.storeId, (tx) => tx.select({ id: storeDomain.id }).from(storeDomain).where(current), { readOnly: true });
  if (!domain) {
    await withStore(db, message.storeId, (tx) => receipt(tx, message, { outcome: "skipped", hostname }));
    return log.info("domains.route_skipped", { ...context, reason: "the domain is no longer verified under this hostname" });
  }
  // Outside any transaction: the router may be slow, and a retry finds what this call made.
  const routed = await ensureRouted(router, hostname);
  const outcome = await withStore(db, message.storeId, async (tx) => {
    if (!(await receipt(tx, message, { outcome: "routed", hostname, routerId: routed.id }))) return "duplicate" as const;
    const updated = await tx
      .update(storeDomain)
      .set({ routerId: routed.id, routerStatus: routed.status, routerSslStatus: routed.sslStatus, routedAt: sql`now()`, updatedAt: sql`now()` })
      .where(current)
      .returning({ id: storeDomain.id });
    if (updated.length > 0) return "routed" as const;
    await tx.update(domainRouteReceipt).set({ outcome: "skipped" }).where(eq(domainRouteReceipt.eventId, message.eventId));
    return "gone" as const;
  });
  if (outcome === "routed") {
    await pointHost(deps, hostname, message.storeId);
    log.info("domains.routed", { ...context, routerId: routed.id, routerStatus: routed.status });
  } else if (outcome === "gone") {
    // Removed while it was being routed: its removal found nothing to delete, so undo what this made.
    if ((await storeIdByHostname(db, hostname)) === null) await ensureUnrouted(router, routed.id);
    log.info("domains.route_skipped", { ...context, reason: "the domain was removed while it was being routed" });
  } else {
    log.info("domains.route_duplicate", context);
  }
}

async function unrouteRemoved(message: RoutedEvent, deps: RouteDeps): Promise<void> {
  const { db, router, log } = deps;
  const { hostname, routerId: known, domainId } = removedPayload.parse(message.payload);
  const context = { storeId: message.storeId, eventId: message.eventId, domainId, hostname };
  if (await applied(db, message)) return log.info("domains.route_duplicate", context);
  // A verified domain (this store's again, or another's) may hold the hostname now: its route stands.
  if ((await storeIdByHostname(db, hostname)) !== null) {
    await withStore(db, message.storeId, (tx) => receipt(tx, message, { outcome: "skipped", hostname }));
    return log.info("domains.route_skipped", { ...context, reason: "the hostname is verified again" });
  }
  // The event names the router id the row had; a domain removed before its route was stored has none.
  const routerId = known ?? (await router.find(hostname))?.id ?? null;
  if (routerId) await ensureUnrouted(router, routerId);
  await pointHost(deps, hostname, null);
  await withStore(db, message.storeId, (tx) => receipt(tx, message, { outcome: "unrouted", hostname, routerId }));
  log.info("domains.unrouted", { ...context, routerId });
}
