import { eq, sql as dsql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { AppError } from "../core/errors";
import { pgErrorOf } from "./pg-errors";
import { openStore, storeOpeningStatement } from "./openings";
import { plan } from "./plan";
import { location, outboxEvent, store } from "./schema";
import { raw, sql } from "./steps";
import { runPlanOn, sendUnit } from "./unit";
import { withStore } from "./with-store";

/**
 * One-round-trip units over Neon's HTTP path (the local proxy plays Neon's endpoint): tenancy fails
 * closed without the opening, a failing statement rolls back the whole unit with its SQLSTATE, and a plan
 * reads the same values over HTTP as on a WebSocket transaction.
 */
const db = testDb();

const countOutbox = { sql: "select count(*)::int as n from outbox_event", params: [], method: "execute" as const };

describe("units over the HTTP path", () => {
  it("fail closed: without its opening a unit sees no store's rows, with it only its store's", async () => {
    const a = await makeStore(db);
    await makeStore(db);
    const [bare] = await db.sendHttp([countOutbox], { readOnly: true });
    expect(bare).toEqual([{ n: 0 }]);
    const [, opened] = await db.sendHttp([storeOpeningStatement(a.id), countOutbox], { readOnly: true });
    expect(opened).toEqual([{ n: 1 }]);
    // set_config(..., true) lives as long as its transaction: the next unit starts without a store again.
    expect((await db.sendHttp([countOutbox], { readOnly: true }))[0]).toEqual([{ n: 0 }]);
  });

  it("a failing statement rolls the whole unit back and reaches the caller with its SQLSTATE and data", async () => {
    const a = await makeStore(db);
    const failed = await sendUnit(db, {
      opening: (q) => openStore(q, a.id),
      plan: (q) =>
        plan(
          [
            q.insert(outboxEvent).values({ storeId: a.id, kind: "test.written", payload: {} }).returning({ id: outboxEvent.id }),
            raw(q, sql`select unit.fail('409', 'Already taken.', ${JSON.stringify({ reason: "taken" })}::jsonb)`),
          ] as const,
          () => "never",
        ),
      options: { readOnly: false },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // SQLSTATE CE409 with its message and data: the AppError the step-by-step code threw.
    expect(failed).toBeInstanceOf(AppError);
    expect(failed).toMatchObject({ code: "CONFLICT", message: "Already taken.", data: { reason: "taken" } });
    const left = await withStore(db, a.id, (tx) => tx.$client.query("select 1 from outbox_event where kind = 'test.written'"));
    expect(left.rows).toEqual([]);
  });

  it("a read-only unit cannot write, even by mistake", async () => {
    const a = await makeStore(db);
    const error = await db
      .sendHttp([storeOpeningStatement(a.id), { sql: "update store set name = 'x'", params: [], method: "execute" }], { readOnly: true })
      .then(
        () => undefined,
        (e: unknown) => pgErrorOf(e)?.code,
      );
    expect(error).toBe("25006");
  });

  it("a plan reads the same values over HTTP as on a WebSocket transaction (drizzle rows and raw rows)", async () => {
    const a = await makeStore(db);
    await withStore(db, a.id, (tx) => tx.insert(location).values({ storeId: a.id, name: "Pune", city: "Pune", sellsOnline: false }));
    const build = (q: Parameters<Parameters<typeof runPlanOn>[1]>[0]) =>
      plan(
        [
          q.select().from(store).where(eq(store.id, dsql`nullif(current_setting('app.store_id', true), '')::uuid`)),
          q.select().from(location).orderBy(location.name),
          raw<{ at: Date; n: string; big: string; j: unknown; arr: string[]; d: string | Date }>(
            q,
            sql`select now() - interval '1 day' as at, 12.50::numeric as n, 9007199254740993::int8 as big,
                       '{"a": [1, "b"]}'::jsonb as j, array['x', 'y'] as arr, date '2026-01-31' as d`,
          ),
        ] as const,
        (results) => results,
      );
    const overHttp = await sendUnit(db, { opening: (q) => openStore(q, a.id), plan: build, options: { readOnly: true } });
    const onTx = await withStore(db, a.id, (tx) => runPlanOn(tx.$client as never, build));
    const [stores, locations, [values]] = overHttp.finish();
    expect(stores[0]!.createdAt).toBeInstanceOf(Date);
    expect(locations.map((l) => [l.name, l.sellsOnline])).toContainEqual(["Pune", false]);
    expect(values!.at).toBeInstanceOf(Date);
    // Only now() differs between the two units: compare everything else.
    const strip = (r: typeof values) => ({ ...r!, at: undefined });
    expect([stores, locations, strip(values)]).toEqual([onTx[0], onTx[1], strip(onTx[2][0])]);
  });
});
