/**
 * Test helpers for the domain job and consumer: domains made at a controlled time (as the application makes
 * rows: app_user inside withStore), their state, and the routed event the relay would send for an outbox row.
 */
import { and, desc, eq, lt } from "drizzle-orm";
import { afterEach } from "vitest";
import { makeStore, type TestStore } from "../harness";
import type { Database } from "#shared/db/database";
import { domainCheck, outboxEvent, storeDomain, type DomainCheckResult } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { verificationRecord } from "#shared/domains/dns";

export interface TestDomain {
  id: string;
  hostname: string;
  /** The TXT record that verifies it. */
  record: { name: string; value: string };
}

/** A pending domain added at `createdAt`, optionally with a check already recorded. */
export async function domainAt(
  db: Database,
  storeId: string,
  hostname: string,
  createdAt: Date,
  check?: { nextAt: Date; result?: DomainCheckResult },
): Promise<TestDomain> {
  return withStore(db, storeId, async (tx) => {
    const [row] = await tx
      .insert(storeDomain)
      .values({ storeId, hostname, createdAt, updatedAt: createdAt })
      .returning({ id: storeDomain.id, token: storeDomain.verificationToken });
    if (check) {
      await tx.insert(domainCheck).values({ storeId, domainId: row!.id, lastCheckedAt: createdAt, lastResult: check.result ?? "not_found", nextCheckAt: check.nextAt });
    }
    return { id: row!.id, hostname, record: verificationRecord(hostname, row!.token) };
  });
}

/** A domain's row and its check (null when gone). */
export async function domainState(db: Database, storeId: string, domainId: string) {
  return withStore(db, storeId, async (tx) => {
    const [row] = await tx
      .select({
        status: storeDomain.status,
        failedReason: storeDomain.failedReason,
        verifiedAt: storeDomain.verifiedAt,
        routerId: storeDomain.routerId,
        routerStatus: storeDomain.routerStatus,
        routerSslStatus: storeDomain.routerSslStatus,
        routedAt: storeDomain.routedAt,
        checks: domainCheck.checks,
        lastResult: domainCheck.lastResult,
        lastCheckedAt: domainCheck.lastCheckedAt,
        nextCheckAt: domainCheck.nextCheckAt,
      })
      .from(storeDomain)
      .leftJoin(domainCheck, eq(domainCheck.domainId, storeDomain.id))
      .where(and(eq(storeDomain.storeId, tx.storeId), eq(storeDomain.id, domainId)));
    return row ?? null;
  });
}

/** The RoutedEvent the relay sends for the store's newest outbox row of `kind` (route `domain`). */
export async function routedEvent(db: Database, storeId: string, kind: string): Promise<RoutedEvent> {
  const [row] = await withStore(db, storeId, (tx) =>
    tx.select().from(outboxEvent).where(and(eq(outboxEvent.storeId, tx.storeId), eq(outboxEvent.kind, kind))).orderBy(desc(outboxEvent.createdAt)).limit(1),
  );
  if (!row) throw new Error(`no ${kind} event in store ${storeId}`);
  return { eventId: row.id, storeId, kind, payload: row.payload, createdAt: row.createdAt.toISOString(), route: "domain" };
}

/**
 * Fresh stores for tests whose domains are dated in the past (a controlled clock before 2010, so that a
 * job run by such a test sees only its own due domains): each test's stores lose those domains after it.
 */
export function storesWithDatedDomains(db: Database): () => Promise<TestStore> {
  const made: TestStore[] = [];
  afterEach(async () => {
    for (const s of made.splice(0)) {
      await withStore(db, s.id, (tx) => tx.delete(storeDomain).where(and(eq(storeDomain.storeId, tx.storeId), lt(storeDomain.createdAt, new Date("2010-01-01T00:00:00Z")))));
    }
  });
  return async () => {
    const s = await makeStore(db);
    made.push(s);
    return s;
  };
}
