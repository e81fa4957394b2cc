import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { jobDeps, runJobs } from "#shared/jobs/run";
import { createLogger } from "#shared/core/log";
import { testDb, type TestStore } from "../../test/harness";
import { logsOf } from "../../test/logs";
import { callerFor, outboxPayloads } from "../../test/procedures";
import type { DnsResolver } from "../domains/dns";
import { localDns, setLocalDnsEntry } from "../domains/dns-local";
import type { LocalKv } from "../domains/local-kv";
import { domainAt, domainState, storesWithDatedDomains } from "../../test/fakes/domains";
import { GIVE_UP_AFTER_MS, nextCheckAt, verifyDomains } from "./domains-verify";

/**
 * {domains}-verify against real Postgres and the local DNS. The clock is controlled and set in 2001: the
 * domains these tests add are dated then, so the job's privileged list holds only them (every other test's
 * domains are added now and not due in 2001), and each test removes its domains afterwards.
 */
const db = testDb();
const kv = (env as unknown as { HOSTS: LocalKv }).HOSTS;
const quiet = createLogger({ test: true }, "error");
const MINUTE = 60_000;
const T = new Date("2001-03-01T12:00:00Z");
const at = (ms: number) => new Date(T.getTime() + ms);

const store = storesWithDatedDomains(db);

const run = (now: Date, dns: DnsResolver = localDns(kv)) => verifyDomains({ db, log: quiet, now }, { dns, storesPerRun: 5_000 });
const host = (s: TestStore, label: string) => `${label}-${s.slug}.example.com`;
const publish = (d: { record: { name: string; value: string } }) => setLocalDnsEntry(kv, d.record.name, { txt: [d.record.value] });

describe("{domains}-verify", () => {
  it("looks up due domains only: found → verified with domain.verified, not found → pending with the check recorded", async () => {
    const s = await store();
    const found = await domainAt(db, s.id, host(s, "found"), at(-5 * MINUTE));
    const missing = await domainAt(db, s.id, host(s, "missing"), at(-5 * MINUTE));
    const later = await domainAt(db, s.id, host(s, "later"), at(-5 * MINUTE), { nextAt: at(MINUTE) });
    await publish(found);
    await publish(later); // published, but its check is not due yet

    const result = await run(T);
    expect(result).toMatchObject({ failedStores: 0 });
    expect(await domainState(db, s.id, found.id)).toMatchObject({ status: "verified", verifiedAt: T, lastResult: "verified", checks: 1 });
    expect(await domainState(db, s.id, missing.id)).toMatchObject({ status: "pending", lastResult: "not_found", checks: 1, lastCheckedAt: T, nextCheckAt: at(MINUTE) });
    expect(await domainState(db, s.id, later.id)).toMatchObject({ status: "pending", lastResult: "not_found", checks: 1, lastCheckedAt: at(-5 * MINUTE) });
    expect(await outboxPayloads(db, s.id, "domain.verified")).toEqual([{ domainId: found.id, hostname: found.hostname }]);

    // The merchant sees the check and its outcome.
    const { items } = (await callerFor(db, s.ownerUserId, s.id)("domains.list")) as { items: { id: string; lastCheck: unknown; verification: unknown }[] };
    expect(items.find((d) => d.id === missing.id)).toMatchObject({
      verification: { type: "TXT", name: `_commerce-verify.${missing.hostname}`, value: missing.record.value },
      lastCheck: { at: T, result: "not_found", message: "TXT record not found", checks: 1, nextAt: at(MINUTE) },
    });

    // A re-run at the same time changes nothing; a minute later the due ones are looked up again.
    await run(T);
    expect(await domainState(db, s.id, missing.id)).toMatchObject({ checks: 1 });
    expect(await outboxPayloads(db, s.id, "domain.verified")).toHaveLength(1);
    await run(at(MINUTE));
    expect(await domainState(db, s.id, missing.id)).toMatchObject({ status: "pending", checks: 2, lastCheckedAt: at(MINUTE) });
    expect(await domainState(db, s.id, later.id)).toMatchObject({ status: "verified", verifiedAt: at(MINUTE), checks: 2 });
    expect(await domainState(db, s.id, found.id)).toMatchObject({ status: "verified", verifiedAt: T, checks: 1 });
    expect((await outboxPayloads(db, s.id, "domain.verified")).map((p) => p.domainId)).toEqual([found.id, later.id]);
  });

  it("one store's failure never stops the others and is recorded for its merchant; DNS errors are the check's outcome", async () => {
    const [a, b, c] = [await store(), await store(), await store()];
    const da = await domainAt(db, a.id, host(a, "a"), at(-MINUTE));
    const db_ = await domainAt(db, b.id, host(b, "b"), at(-MINUTE));
    const dc = await domainAt(db, c.id, host(c, "c"), at(-MINUTE));
    await publish(da);
    await publish(db_);
    await setLocalDnsEntry(kv, dc.record.name, { fail: "servfail" });
    const local = localDns(kv);
    const crashing: DnsResolver = {
      provider: "local",
      txt: (name) => (name === db_.record.name ? Promise.reject(new Error("resolver crashed")) : local.txt(name)),
    };
    const job = "{domains}-verify" as const;
    const logs = await logsOf(() => verifyDomains({ db, log: createLogger({ test: true }, "info"), now: T, job }, { dns: crashing, storesPerRun: 5_000 }));
    expect(await domainState(db, a.id, da.id)).toMatchObject({ status: "verified" });
    expect(await domainState(db, b.id, db_.id)).toMatchObject({ status: "pending", lastResult: null, checks: null });
    expect(await domainState(db, c.id, dc.id)).toMatchObject({ status: "pending", lastResult: "servfail", checks: 1 });
    expect(logs.lines.filter((l) => l.msg === "job.store_failed")).toEqual([expect.objectContaining({ level: "error", storeId: b.id, error: "resolver crashed" })]);
    expect(logs.lines.find((l) => l.msg === "domains.verify_finished")).toMatchObject({ failedStores: 1 });
    // The shared store loop records the failure for that store's merchant only (the admin home shows it).
    const failures = (storeId: string) =>
      withStore(db, storeId, async (tx) => (await tx.$client.query("select job, error, failures from job_failure where store_id = $1 and job = $2", [storeId, job])).rows);
    expect(await failures(b.id)).toEqual([{ job, error: "resolver crashed", failures: 1 }]);
    expect(await failures(a.id)).toEqual([]);
    expect(await failures(c.id)).toEqual([]);

    await setLocalDnsEntry(kv, dc.record.name, { fail: "timeout" });
    await run(at(MINUTE));
    expect(await domainState(db, b.id, db_.id)).toMatchObject({ status: "verified", checks: 1 });
    expect(await domainState(db, c.id, dc.id)).toMatchObject({ status: "pending", lastResult: "timeout", checks: 2 });
  });

  it("gives up 7 days after the domain was added: failed with domain.failed, and never checked again", async () => {
    const s = await store();
    const old = await domainAt(db, s.id, host(s, "old"), at(-GIVE_UP_AFTER_MS - MINUTE), { nextAt: at(-MINUTE) });
    const young = await domainAt(db, s.id, host(s, "young"), at(-6 * 24 * 60 * MINUTE), { nextAt: at(-MINUTE) });
    const lateFind = await domainAt(db, s.id, host(s, "late"), at(-8 * 24 * 60 * MINUTE), { nextAt: at(-MINUTE) });
    await publish(lateFind);
    await setLocalDnsEntry(kv, old.record.name, { txt: ["commerce-verify=someone-else"] });
    await run(T);
    expect(await domainState(db, s.id, old.id)).toMatchObject({ status: "failed", failedReason: "lapsed", lastResult: "wrong_value", checks: 2 });
    const { items } = (await callerFor(db, s.ownerUserId, s.id)("domains.list")) as { items: { id: string; failure: unknown }[] };
    expect(items.find((d) => d.id === old.id)?.failure).toEqual({ reason: "lapsed", message: expect.stringContaining("not found within 7 days") });
    expect(items.find((d) => d.id === young.id)?.failure).toBeNull();
    expect(await domainState(db, s.id, young.id)).toMatchObject({ status: "pending", nextCheckAt: at(60 * MINUTE) });
    expect(await domainState(db, s.id, lateFind.id)).toMatchObject({ status: "verified" });
    expect(await outboxPayloads(db, s.id, "domain.failed")).toEqual([{ domainId: old.id, hostname: old.hostname, reason: "lapsed", lastResult: "wrong_value" }]);
    await publish(old);
    await run(at(2 * 60 * MINUTE));
    expect(await domainState(db, s.id, old.id)).toMatchObject({ status: "failed", checks: 2 });
    expect(await outboxPayloads(db, s.id, "domain.verified")).toHaveLength(1);
  });

  it("leaves alone a domain that was removed or verified between its lookup and the write", async () => {
    const s = await store();
    const removed = await domainAt(db, s.id, host(s, "removed"), at(-MINUTE));
    const raced = await domainAt(db, s.id, host(s, "raced"), at(-MINUTE));
    await publish(removed);
    await publish(raced);
    const local = localDns(kv);
    const meanwhile: DnsResolver = {
      provider: "local",
      async txt(name) {
        // What another request or an overlapping run does while this lookup is in flight.
        await withStore(db, s.id, (tx) =>
          name === removed.record.name
            ? tx.delete(storeDomain).where(eq(storeDomain.id, removed.id))
            : tx.update(storeDomain).set({ status: "verified", verifiedAt: at(-1) }).where(eq(storeDomain.id, raced.id)),
        );
        return local.txt(name);
      },
    };
    expect(await run(T, meanwhile)).toMatchObject({ failedStores: 0, skipped: 2 });
    expect(await domainState(db, s.id, removed.id)).toBeNull();
    expect(await domainState(db, s.id, raced.id)).toMatchObject({ status: "verified", verifiedAt: at(-1), checks: null });
    expect(await outboxPayloads(db, s.id, "domain.verified")).toEqual([]);
  });

  it("runs from the registry with the resolver of the configuration, and fails loudly without one in production", async () => {
    const s = await store();
    const d = await domainAt(db, s.id, host(s, "registry"), at(-MINUTE));
    await publish(d);
    const [report] = await runJobs(["{domains}-verify"], T, jobDeps(env, "test"));
    expect(report).toMatchObject({ job: "{domains}-verify", outcome: "ok" });
    expect(await domainState(db, s.id, d.id)).toMatchObject({ status: "verified" });
    const production = { ...(env as object), APP_ENV: "production", DOMAIN_DNS: undefined };
    const logs = await logsOf(() => runJobs(["{domains}-verify"], at(MINUTE), jobDeps(production, "test")));
    expect(logs.lines.find((l) => l.msg === "job.finished")).toMatchObject({ outcome: "failed", error: expect.stringContaining("DOMAIN_DNS") });
  });

  it("checks every run in a domain's first hour, every 10 minutes in its first day, then hourly", () => {
    expect(nextCheckAt(T, at(59 * MINUTE))).toEqual(at(60 * MINUTE));
    expect(nextCheckAt(T, at(60 * MINUTE))).toEqual(at(70 * MINUTE));
    expect(nextCheckAt(T, at(24 * 60 * MINUTE))).toEqual(at(25 * 60 * MINUTE));
  });
});
