import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pgErrorOf } from "#shared/db/pg-errors";
import { withStore } from "#shared/db/with-store";
import { loadHostAndFacts } from "#shared/storefront/store-facts";
import { createLogger } from "#shared/core/log";
import { testDb, uniqueSuffix, type TestStore } from "../../test/harness";
import { callerFor, outboxPayloads } from "../../test/procedures";
import type { DnsResolver } from "./dns";
import { localDns, setLocalDnsEntry } from "./dns-local";
import type { LocalKv } from "./local-kv";
import { domainAt, domainState, storesWithDatedDomains, type TestDomain } from "../../test/fakes/domains";
import { verifyDomains, verifyStore } from "../jobs/domains-verify";

/**
 * Claims on one hostname by several stores (issue 20 item 6; docs/domains.md "Claims") against real
 * Postgres and the local DNS: the first store whose record is found wins the hostname, the others' claims
 * fail as `taken`, and the storefront resolves only the winner. The clock is 2002 (verify.test.ts's is
 * 2001): the domains are dated then, and each test removes its stores' domains afterwards.
 */
const db = testDb();
// A second and third connection: two stores verifying at once each need their own (a Database holds one).
const db2 = testDb();
const holder = testDb();
const kv = (env as unknown as { HOSTS: LocalKv }).HOSTS;
const quiet = createLogger({ test: true }, "error");
const MINUTE = 60_000;
const T = new Date("2002-06-01T12:00:00Z");
const at = (ms: number) => new Date(T.getTime() + ms);

const store = storesWithDatedDomains(db);

const hostname = () => `claimed-${uniqueSuffix()}.example.com`;
/** Publishes the TXT records of every claim given: each store's own token under the one name. */
const publish = (...claims: TestDomain[]) => setLocalDnsEntry(kv, claims[0]!.record.name, { txt: claims.map((c) => c.record.value) });
/** The local DNS, but `name` must not be asked (a claim on a hostname another store holds is not looked up). */
const unasked = (name: string): DnsResolver => ({
  provider: "local",
  txt: (asked) => (asked === name ? Promise.reject(new Error(`looked up ${asked}`)) : localDns(kv).txt(asked)),
});
/** The constraint (or SQLSTATE) a write was refused by. */
const refusal = (p: Promise<unknown>) => p.then(() => "written", (e: unknown) => pgErrorOf(e)?.constraint ?? pgErrorOf(e)?.code ?? String(e));
const listed = async (s: TestStore, id: string) =>
  ((await callerFor(db, s.ownerUserId, s.id)("domains.list")) as { items: { id: string; status: string; failure: unknown }[] }).items.find((d) => d.id === id);

describe("domain claims", () => {
  it("a hostname pending in two stores: the first verified wins; the other's claim fails as taken at once, unlooked-up, and its merchant is told why", async () => {
    const [a, b] = [await store(), await store()];
    const host = hostname();
    const da = await domainAt(db, a.id, host, at(-5 * MINUTE));
    // B's claim is not due for an hour: a hostname another store won makes it due at once.
    const dbClaim = await domainAt(db, b.id, host, at(-5 * MINUTE), { nextAt: at(60 * MINUTE) });
    await publish(da);
    expect(await verifyStore({ db, now: T }, a.id, localDns(kv))).toMatchObject({ verified: 1 });
    expect((await loadHostAndFacts(db, host)).storeId).toBe(a.id);

    const result = await verifyDomains({ db, log: quiet, now: at(MINUTE) }, { dns: unasked(dbClaim.record.name), storesPerRun: 5_000 });
    expect(result).toMatchObject({ failedStores: 0 });
    expect(await domainState(db, b.id, dbClaim.id)).toMatchObject({ status: "failed", failedReason: "taken", verifiedAt: null, checks: 1, lastCheckedAt: at(-5 * MINUTE) });
    expect(await outboxPayloads(db, b.id, "domain.failed")).toEqual([{ domainId: dbClaim.id, hostname: host, reason: "taken" }]);
    expect(await outboxPayloads(db, b.id, "domain.verified")).toEqual([]);
    expect(await listed(b, dbClaim.id)).toMatchObject({ status: "failed", failure: { reason: "taken", message: expect.stringContaining("Another store verified this hostname first") } });
    expect(await domainState(db, a.id, da.id)).toMatchObject({ status: "verified", failedReason: null });
    // The storefront still answers the winner.
    expect((await loadHostAndFacts(db, host)).storeId).toBe(a.id);
  });

  it("two stores verifying one hostname at once: one wins, the other's claim fails as taken; neither store's work fails", async () => {
    const [a, b] = [await store(), await store()];
    const host = hostname();
    const da = await domainAt(db, a.id, host, at(-MINUTE));
    const dbClaim = await domainAt(db2, b.id, host, at(-MINUTE));
    await publish(da, dbClaim);
    // A third connection holds the hostname's claim lock until both stores' units wait for it, so both
    // have read the hostname free and found their records: their decisions meet here.
    const { both } = await withStore(holder, a.id, async (tx) => {
      await tx.$client.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`store_domain:${host}`]);
      const both = Promise.all([verifyStore({ db, now: T }, a.id, localDns(kv)), verifyStore({ db: db2, now: T }, b.id, localDns(kv))]);
      for (let waited = 0; ; waited += 50) {
        const { rows } = await tx.$client.query<{ n: number }>(
          `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database and d.datname = current_database()
           where l.locktype = 'advisory' and not l.granted
             and l.classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295 and l.objid::bigint = hashtextextended($1, 0) & 4294967295`,
          [`store_domain:${host}`],
        );
        if (rows[0]!.n === 2) break;
        if (waited > 15_000) throw new Error("the two stores' units never waited for the claim lock");
        await new Promise((r) => setTimeout(r, 50));
      }
      // Not awaited here: they wait for this transaction, which commits when this returns.
      return { both };
    });
    const [ra, rb] = await both;
    const outcomes = [ra, rb].map((r) => (r.verified === 1 ? "verified" : r.taken === 1 ? "taken" : JSON.stringify(r)));
    expect(outcomes.sort()).toEqual(["taken", "verified"]);
    const winner = ra.verified === 1 ? a : b;
    const loser = winner === a ? b : a;
    const [won, lost] = winner === a ? [da, dbClaim] : [dbClaim, da];
    expect(await domainState(db, winner.id, won.id)).toMatchObject({ status: "verified", verifiedAt: T });
    expect(await domainState(db, loser.id, lost.id)).toMatchObject({ status: "failed", failedReason: "taken", lastResult: "verified" });
    expect(await outboxPayloads(db, winner.id, "domain.verified")).toEqual([{ domainId: won.id, hostname: host }]);
    expect(await outboxPayloads(db, loser.id, "domain.failed")).toEqual([{ domainId: lost.id, hostname: host, reason: "taken" }]);
    expect(await outboxPayloads(db, loser.id, "domain.verified")).toEqual([]);
    expect((await loadHostAndFacts(db, host)).storeId).toBe(winner.id);
  });

  it("the storefront resolves a hostname only through a verified domain: claims alone serve nothing", async () => {
    const [a, b] = [await store(), await store()];
    const host = hostname();
    const claims = [await domainAt(db, a.id, host, at(-MINUTE)), await domainAt(db, b.id, host, at(-MINUTE))];
    expect(await loadHostAndFacts(db, host)).toEqual({ storeId: null, facts: null });
    // A's claim lapses (failed); B's is still pending: neither serves.
    await withStore(db, a.id, (tx) => tx.$client.query("update store_domain set status = 'failed', failed_reason = 'lapsed' where id = $1", [claims[0]!.id]));
    expect(await loadHostAndFacts(db, host)).toEqual({ storeId: null, facts: null });
    await publish(claims[1]!);
    await verifyStore({ db, now: T }, b.id, localDns(kv));
    expect(await loadHostAndFacts(db, host)).toMatchObject({ storeId: b.id, facts: { id: b.id } });
  });

  it("the database keeps one verified domain per hostname and one domain per hostname in a store", async () => {
    const [a, b] = [await store(), await store()];
    const host = hostname();
    await domainAt(db, a.id, host, at(-MINUTE));
    const dbClaim = await domainAt(db, b.id, host, at(-MINUTE));
    await withStore(db, a.id, (tx) => tx.$client.query("update store_domain set status = 'verified', verified_at = now() where store_id = $1 and hostname = $2", [a.id, host]));
    const verifyB = withStore(db, b.id, (tx) => tx.$client.query("update store_domain set status = 'verified', verified_at = now() where id = $1", [dbClaim.id]));
    expect(await refusal(verifyB)).toBe("store_domain_verified_hostname");
    expect(await refusal(domainAt(db, b.id, host, at(-MINUTE)))).toBe("store_domain_store_id_hostname_key");
    // A failed claim names its reason, and only a failed one.
    const noReason = withStore(db, b.id, (tx) => tx.$client.query("update store_domain set status = 'failed' where id = $1", [dbClaim.id]));
    expect(await refusal(noReason)).toBe("store_domain_failed_reason_set");
  });
});
