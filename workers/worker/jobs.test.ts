import { env } from "cloudflare:workers";
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterAll, afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { CRON_TABLE, SUB_MINUTE_JOBS } from "#shared/jobs/cron";
import { JOBS } from "#shared/jobs/registry";
import { JOB_NAMES } from "#shared/jobs/types";
import type { WorkerBindings } from "./env";
import worker from "./index";
import { dispatchCron } from "./scheduled";
import { planTick, type Scheduler } from "./scheduler";

// runInDurableObject is typed for the default Env; the Scheduler's env is the worker's.
const tickAt = (stub: DurableObjectStub<Scheduler>, at: number) =>
  runInDurableObject(stub, (instance) => (instance as unknown as Scheduler).tick(at));

const bindings = { ...(env as unknown as WorkerBindings), LOG_LEVEL: "debug" } as WorkerBindings;

/** Structured log lines written while `fn` runs. */
async function logsOf(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const capture = (...args: unknown[]) => void lines.push(String(args[0]));
  const spies = [vi.spyOn(console, "log").mockImplementation(capture), vi.spyOn(console, "error").mockImplementation(capture)];
  try {
    await fn();
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

afterEach(() => vi.restoreAllMocks());

/**
 * The loop's passes run the relay and the marketing tick for real at the real time, over every store of the
 * shared test database: another file's test that relays its own store's rows would race them (test files share
 * runners and the database, docs/decisions/0033-shared-test-runners.md). So no Scheduler of this file runs a
 * job at the real time: the production one ("main", which the every-minute cron arms) is told its jobs are not
 * due for a day, every test ends with its Schedulers disarmed, and the passes these tests make run at PAST,
 * when nothing is due.
 */
const DAY = 86_400_000;
const main = () => bindings.SCHEDULER.get(bindings.SCHEDULER.idFromName("main"));
const armed: DurableObjectStub<Scheduler>[] = [];
const notDueUntil = (stub: DurableObjectStub<Scheduler>, at: number) =>
  runInDurableObject(stub, (_, state) => state.storage.put("next", Object.fromEntries(SUB_MINUTE_JOBS.map((name) => [name, at]))));
const disarm = (stub: DurableObjectStub<Scheduler>) => runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
beforeEach(() => notDueUntil(main(), Date.now() + DAY));
afterEach(async () => {
  for (const stub of [main(), ...armed.splice(0)]) await disarm(stub);
});
afterAll(() => runInDurableObject(main(), (_, state) => state.storage.deleteAll()));

/**
 * A time before any test's orders and shipments' deadlines: these tests check the routing, and the jobs
 * they reach run for real against the shared database, so they must not expire another test's orders.
 */
// A fixed time long past: the jobs run for real over the shared test database, and at the real time they
// would act on other tests' rows (e.g. the domains job on verify.test.ts's domains dated 2001).
const PAST = Date.UTC(2000, 0, 1);

describe("cron dispatch", () => {
  const crons = inject("crons");

  it("wrangler.toml and the cron table name the same expressions", () => {
    expect(crons.length).toBeGreaterThan(0);
    expect([...crons].sort()).toEqual(Object.keys(CRON_TABLE).sort());
  });

  it("every job of SPEC is reached by a cron or by the sub-minute loop, exactly once", () => {
    const reached = [...Object.values(CRON_TABLE).flatMap((e) => e.jobs), ...SUB_MINUTE_JOBS];
    expect([...reached].sort()).toEqual([...JOB_NAMES].sort());
    for (const name of SUB_MINUTE_JOBS) expect(JOBS[name].everyMs).toBeLessThan(60_000);
  });

  it.each(Object.keys(CRON_TABLE))("cron %s reaches its job handlers through the Worker's scheduled()", async (cron) => {
    const scheduledTime = PAST;
    const ctx = createExecutionContext();
    const logs = await logsOf(async () => {
      await worker.scheduled(createScheduledController({ cron, scheduledTime }), bindings, ctx);
      await waitOnExecutionContext(ctx);
    });
    const ran = logs.filter((l) => l.msg === "job.finished").map((l) => l.job);
    expect([...ran].sort()).toEqual([...CRON_TABLE[cron]!.jobs].sort());
    for (const line of logs.filter((l) => l.job)) expect(line.trigger).toBe(`cron:${cron}`);
  });

  it("the heartbeat logs the time and that the database is up", async () => {
    const scheduledTime = Date.UTC(2026, 10, 21, 12, 0, 0);
    const logs = await logsOf(() => dispatchCron("* * * * *", scheduledTime, bindings));
    const beat = logs.find((l) => l.msg === "heartbeat");
    expect(beat).toMatchObject({ level: "info", job: "{system}-heartbeat", time: "2026-11-21T12:00:00.000Z", db: "up" });
    expect(typeof beat?.dbLatencyMs).toBe("number");
  });

  it("the heartbeat reports a database that is down, and the failure is logged as an error", async () => {
    const down = { ...bindings, DATABASE_URL: "postgres://app_user:x@127.0.0.1:9/nowhere" } as WorkerBindings;
    const logs = await logsOf(() => dispatchCron("* * * * *", PAST, down));
    expect(logs.find((l) => l.msg === "heartbeat")).toMatchObject({ level: "error", db: "down" });
  });

  it("reports each job's outcome", async () => {
    const reports = await dispatchCron("* * * * *", PAST, bindings);
    expect(reports.map((r) => [r.job, r.outcome])).toEqual([
      ["{system}-heartbeat", "ok"],
      ["{payments}-unpaid-expiry", "ok"],
      ["{payments}-preorder-balance", "ok"],
    ]);
    expect((await dispatchCron("*/2 * * * *", PAST, bindings)).map((r) => [r.job, r.outcome])).toEqual([["{domains}-verify", "ok"]]);
  });

  it("an unknown cron expression runs nothing and says why", async () => {
    const logs = await logsOf(async () => expect(await dispatchCron("0 0 1 1 *", PAST, bindings)).toEqual([]));
    expect(logs.find((l) => l.msg === "cron.unknown")).toMatchObject({ level: "error", cron: "0 0 1 1 *" });
  });
});

describe("Scheduler: the sub-minute loop", () => {
  const fresh = () => {
    const stub = bindings.SCHEDULER.get(bindings.SCHEDULER.idFromName(`test-${crypto.randomUUID()}`));
    armed.push(stub);
    return stub;
  };

  it("the every-minute cron arms the loop's alarm", async () => {
    await disarm(main());
    await dispatchCron("* * * * *", PAST, bindings);
    const alarm = await runInDurableObject(main(), (_, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
  });

  it("plans the outbox relay every 5 s and the marketing tick every 30 s", () => {
    // Pure planning: the loop's own alarm (real time) cannot race a controlled clock here.
    const t0 = 1_700_000_000_000;
    let plan = planTick({}, t0);
    // The first pass runs both; after that each job keeps its own cadence.
    expect([...plan.due].sort()).toEqual(["{marketing}-tick", "{outbox}-relay"]);
    expect(plan.alarmAt).toBe(t0 + 5_000);
    plan = planTick(plan.next, t0 + 1_000);
    expect(plan.due).toEqual([]);
    expect(plan.alarmAt).toBe(t0 + 5_000);
    plan = planTick(plan.next, t0 + 5_000);
    expect(plan.due).toEqual(["{outbox}-relay"]);
    for (let t = t0 + 10_000; t < t0 + 30_000; t += 5_000) plan = planTick(plan.next, t);
    plan = planTick(plan.next, t0 + 30_000);
    expect([...plan.due].sort()).toEqual(["{marketing}-tick", "{outbox}-relay"]);
  });

  it("a pass of the loop runs what its plan says is due, and arms the alarm", async () => {
    const stub = fresh();
    // At PAST (nothing is due then), with the object's other events held, so the alarm it arms (in the past)
    // cannot fire a pass at the real time before it is read and removed.
    const [first, alarm, second] = await runInDurableObject(stub, (instance, state) =>
      state.blockConcurrencyWhile(async () => {
        const scheduler = instance as unknown as Scheduler;
        const ran = await scheduler.tick(PAST);
        const at = await state.storage.getAlarm();
        const again = await scheduler.tick(PAST + 1_000);
        await state.storage.deleteAlarm();
        return [ran, at, again] as const;
      }),
    );
    expect(first.map((r) => r.job).sort()).toEqual(["{marketing}-tick", "{outbox}-relay"]);
    // Armed (an alarm in the past is due at once: the runtime holds it at the present).
    expect(alarm).not.toBeNull();
    expect(second).toEqual([]);
  });

  it("once armed, the alarm runs by itself and re-arms within 5 s", async () => {
    const stub = fresh();
    // Its jobs are next due in 4 s: the pass the alarm makes now runs none of them, and re-arms for then.
    const due = Date.now() + 4_000;
    await notDueUntil(stub, due);
    await stub.ensureRunning();
    let alarm: number | null = null;
    for (let i = 0; i < 50 && alarm !== due; i++) {
      await new Promise((r) => setTimeout(r, 50));
      alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    }
    expect(alarm, "the alarm never ran and re-armed").toBe(due);
    await disarm(stub);
    expect(due - Date.now()).toBeLessThanOrEqual(5_000);
  });

  it("ensureRunning leaves an armed loop alone", async () => {
    const stub = fresh();
    await notDueUntil(stub, Date.now() + DAY);
    await runInDurableObject(stub, (_, state) => state.storage.setAlarm(Date.now() + 60_000));
    const before = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    await stub.ensureRunning();
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(before);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
  });
});

describe("queue consumers", () => {
  const message = (body: unknown) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body });

  it("an outbox nudge runs the relay and is acknowledged, even when the pass fails (the loop runs again in 5 s)", async () => {
    const batch = createMessageBatch("commerce-outbox-nudge", [message({}), message({})]);
    const ctx = createExecutionContext();
    // A database that is down: a pass over the shared test database would relay other files' rows (see above).
    const down = { ...bindings, DATABASE_URL: "postgres://app_user:x@127.0.0.1:9/nowhere" } as WorkerBindings;
    const logs = await logsOf(() => worker.queue(batch, down, ctx));
    const result = await getQueueResult(batch, ctx);
    expect(result.ackAll).toBe(true);
    expect(result.retryBatch.retry).toBe(false);
    expect(logs.some((l) => l.job === "{outbox}-relay")).toBe(true);
  });

  it("a queue without a consumer yet retries its messages instead of dropping them", async () => {
    const batch = createMessageBatch("commerce-no-consumer-yet", [message({ job: "x" })]);
    const ctx = createExecutionContext();
    await logsOf(() => worker.queue(batch, bindings, ctx));
    const result = await getQueueResult(batch, ctx);
    expect(result.ackAll).toBe(false);
    expect(result.retryBatch.retry).toBe(true);
  });
});
