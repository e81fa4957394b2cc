import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { plan } from "#shared/db/plan";
import { raw } from "#shared/db/steps";
import { readOn, withStore, type StoreTx } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { mulberry32 } from "../../test/prng";
import { storeWithCaller } from "../../test/procedures";
import { tallyRows } from "./tally";

const db = testDb();
/** A second database handle (a Database holds one connection): a writer racing the first. */
const racer = testDb();

/** The store's totals as the tally answers them (migration 0031), and as counting its rows answers them. */
interface Totals {
  unpaid: number;
  paymentPending: number;
  toShip: number;
  partlyShipped: number;
  onHand: number;
  available: number;
  value: number;
}

async function fromTally(tx: StoreTx): Promise<Totals> {
  const s = sql`${tx.storeId}::uuid`;
  const [row] = await readOn(tx, (q) =>
    plan(
      [
        raw<Totals & Record<string, unknown>>(
          q,
          sql`select coalesce(sum(t.open_unpaid), 0)::int as "unpaid", coalesce(sum(t.open_payment_pending), 0)::int as "paymentPending",
                coalesce(sum(t.open_to_ship), 0)::int as "toShip", coalesce(sum(t.open_partly_shipped), 0)::int as "partlyShipped",
                coalesce(sum(t.units_on_hand), 0)::float8 as "onHand", coalesce(sum(t.units_available), 0)::float8 as "available",
                coalesce(sum(t.stock_value_minor), 0)::float8 as "value"
              from ${tallyRows(s)} t`,
        ),
      ] as const,
      ([rows]) => rows,
    ),
  );
  return row!;
}

async function counted(tx: StoreTx): Promise<Totals> {
  const { rows } = await tx.$client.query<Totals>(
    `select
       (select count(*) from shop_order where store_id = $1 and status = 'open' and payment_status = 'unpaid')::int as "unpaid",
       (select count(*) from shop_order where store_id = $1 and status = 'open' and payment_status = 'pending')::int as "paymentPending",
       (select count(*) from shop_order where store_id = $1 and status = 'open' and payment_status = 'paid' and fulfillment_status = 'unfulfilled')::int as "toShip",
       (select count(*) from shop_order where store_id = $1 and status = 'open' and payment_status = 'paid' and fulfillment_status = 'partially_fulfilled')::int as "partlyShipped",
       (select coalesce(sum(on_hand), 0) from inventory_level where store_id = $1)::float8 as "onHand",
       (select coalesce(sum(on_hand - reserved), 0) from inventory_level where store_id = $1)::float8 as "available",
       (select coalesce(sum(l.on_hand::numeric * v.price_minor), 0) from inventory_level l
          join product_variant v on v.store_id = l.store_id and v.id = l.variant_id where l.store_id = $1)::float8 as "value"`,
    [tx.storeId],
  );
  return rows[0]!;
}

const both = (storeId: string) => withStore(db, storeId, async (tx) => ({ tally: await fromTally(tx), counted: await counted(tx) }));
const deltaRows = (storeId: string) =>
  withStore(db, storeId, async (tx) => Number((await tx.$client.query<{ n: string }>("select count(*) as n from store_tally_delta where store_id = $1", [tx.storeId])).rows[0]!.n));

const STATUSES = ["open", "open", "open", "completed", "cancelled", "expired"];
const PAYMENTS = ["unpaid", "pending", "authorized", "paid", "paid", "partially_paid", "refunded"];
const FULFILMENTS = ["unfulfilled", "partially_fulfilled", "fulfilled"];

let orderNumber = 5000;
async function insertOrders(tx: StoreTx, rows: { status: string; payment: string; fulfilment: string }[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((_, i) => `($1, $${i * 4 + 2}, 'tally@example.test', '{}', 'IN-MH', 'gateway', 'INR', 100, 100, $${i * 4 + 3}, $${i * 4 + 4}, $${i * 4 + 5})`);
  await tx.$client.query(
    `insert into shop_order (store_id, number, email, shipping_address, ship_to_state, payment_method, currency, subtotal, total, status, payment_status, fulfillment_status)
     values ${values.join(", ")}`,
    [tx.storeId, ...rows.flatMap((r) => [orderNumber++, r.status, r.payment, r.fulfilment])],
  );
}

describe("the store tally (open orders and stock kept by the writes, migration 0031)", () => {
  it("answers what counting the rows answers, after generated inserts, updates, price changes and deletes", async () => {
    const seed = 1926;
    const random = mulberry32(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const int = (n: number) => Math.floor(random() * n);
    const store = await makeStore(db);
    expect(await both(store.id), "a fresh store").toSatisfy(({ tally, counted }) => JSON.stringify(tally) === JSON.stringify(counted));
    for (let round = 0; round < 12; round++) {
      await withStore(db, store.id, async (tx) => {
        const q = (text: string, values: unknown[] = []) => tx.$client.query(text, values);
        const op = round % 6;
        if (op === 0) {
          // New products, variants at random prices, stock at two locations.
          const productId = ((await q("insert into product (store_id, title, handle) values ($1, 'Tally', $2) returning id", [tx.storeId, `tally-${round}-${int(1e9)}`])).rows[0] as { id: string }).id;
          const { rows: variants } = await q(
            "insert into product_variant (store_id, product_id, price_minor) select $1, $2, (random() * 100000)::bigint + g from generate_series(1, 3) g returning id",
            [tx.storeId, productId],
          );
          const { rows: locations } = await q("select id from location where store_id = $1", [tx.storeId]);
          if (locations.length < 2) locations.push(...(await q("insert into location (store_id, name) values ($1, 'Second') returning id", [tx.storeId])).rows);
          for (const v of variants as { id: string }[]) {
            for (const l of locations as { id: string }[]) {
              const onHand = int(50);
              await q("insert into inventory_level (store_id, variant_id, location_id, on_hand, reserved) values ($1, $2, $3, $4, $5)", [tx.storeId, v.id, l.id, onHand, int(onHand + 1)]);
            }
          }
        } else if (op === 1) {
          await insertOrders(tx, Array.from({ length: 1 + int(8) }, () => ({ status: pick(STATUSES), payment: pick(PAYMENTS), fulfilment: pick(FULFILMENTS) })));
        } else if (op === 2) {
          // Orders move: paid, shipped, cancelled, completed (one statement, many rows, as a job does).
          await q(
            `update shop_order set status = (array['open','completed','cancelled','expired'])[1 + floor(random() * 4)::int],
               payment_status = (array['unpaid','pending','paid','refunded'])[1 + floor(random() * 4)::int],
               fulfillment_status = (array['unfulfilled','partially_fulfilled','fulfilled'])[1 + floor(random() * 3)::int]
             where store_id = $1 and random() < 0.5`,
            [tx.storeId],
          );
          await q("update shop_order set updated_at = now() where store_id = $1", [tx.storeId]);
        } else if (op === 3) {
          // Stock moves (a reservation, a sale, a count), and prices change.
          await q("update inventory_level set on_hand = on_hand + 3, reserved = least(on_hand + 3, reserved + 2) where store_id = $1 and random() < 0.5", [tx.storeId]);
          await q("update inventory_level set reserved = 0 where store_id = $1 and random() < 0.3", [tx.storeId]);
          await q("update product_variant set price_minor = (random() * 100000)::bigint where store_id = $1 and random() < 0.5", [tx.storeId]);
        } else if (op === 4) {
          // A variant deleted (its levels go in the cascade), a level deleted, an order deleted.
          await q("delete from product_variant where id = (select id from product_variant where store_id = $1 order by random() limit 1)", [tx.storeId]);
          await q("delete from inventory_level where id = (select id from inventory_level where store_id = $1 order by random() limit 1)", [tx.storeId]);
          // An order with an issued tax invoice cannot be deleted (the invoice is a legal record: migration 0038).
          await q("delete from shop_order where id = (select id from shop_order where store_id = $1 and status = 'open' and not exists (select 1 from tax_invoice i where i.order_id = shop_order.id) order by random() limit 1)", [tx.storeId]);
        } else {
          // A whole product (variants, levels) and a location (its levels) deleted.
          await q("delete from product where id = (select id from product where store_id = $1 order by random() limit 1)", [tx.storeId]);
          await q("delete from location where id = (select id from location where store_id = $1 and name = 'Second' limit 1)", [tx.storeId]);
        }
      });
      const { tally, counted: rows } = await both(store.id);
      expect(tally, `seed ${seed}, round ${round}`).toEqual(rows);
    }
    expect(await deltaRows(store.id), "every change folded: nothing else was writing").toBe(0);
  });

  it("a writer never waits on the tally: while a fold holds it, another writer leaves its change as a delta row, read at once and folded by the next write", async () => {
    const store = await makeStore(db);
    // Two open orders placed on different days, so that the two writers below change different rows (no
    // row lock between them but the tally's; the analytics rollups are per day).
    const [first, next] = await withStore(db, store.id, async (tx) => {
      const { rows } = await tx.$client.query<{ id: string }>(
        `insert into shop_order (store_id, number, email, shipping_address, ship_to_state, payment_method, currency, subtotal, total, placed_at)
         values ($1, 7001, 'a@example.test', '{}', 'IN-MH', 'gateway', 'INR', 100, 100, now() - interval '3 days'),
                ($1, 7002, 'b@example.test', '{}', 'IN-MH', 'gateway', 'INR', 100, 100, now() - interval '5 days')
         returning id`,
        [tx.storeId],
      );
      return rows.map((r) => r.id);
    });
    const pay = (tx: StoreTx, order: string, status: string) =>
      tx.$client.query("update shop_order set payment_status = $2 where id = $1", [order, status]);
    let second: Promise<unknown> | undefined;
    await withStore(db, store.id, async (tx) => {
      // This transaction folds its change and so holds the store's tally row until it ends.
      await pay(tx, first!, "pending");
      // Another writer of the same store, on another connection, commits while this one is open: had it
      // waited for the tally row, it would never finish and this test would time out.
      second = withStore(racer, store.id, (other) => pay(other, next!, "paid"));
      await second;
    });
    expect(await deltaRows(store.id), "the second writer's change, not folded yet").toBe(1);
    const { tally, counted: rows } = await both(store.id);
    expect(tally).toEqual(rows);
    // The fixture's unpaid order, the first one pending, the next one paid.
    expect(tally).toMatchObject({ unpaid: 1, paymentPending: 1, toShip: 1 });
    await withStore(db, store.id, (tx) => pay(tx, first!, "paid"));
    expect(await deltaRows(store.id), "folded by the next write").toBe(0);
    const after = await both(store.id);
    expect(after.tally).toEqual(after.counted);
  });

  it("orders.waiting and analytics.summary answer from it; another store's writes change neither", async () => {
    const { store, call } = await storeWithCaller(db);
    const other = await makeStore(db);
    const waiting = () => call("orders.waiting", {});
    const stock = async () => ((await call("analytics.summary", { from: "2020-01-01", to: "2020-01-02" })) as { inventory: Record<string, number> }).inventory;
    const before = { waiting: await waiting(), stock: await stock() };
    expect(before.waiting).toMatchObject({ unpaid: 1, paymentPending: 0, toShip: 0, partlyShipped: 0 });
    expect(before.stock).toMatchObject({ unitsOnHand: 5, unitsAvailable: 5, stockValueMinor: 5000 });
    await withStore(db, other.id, async (tx) => {
      await insertOrders(tx, [{ status: "open", payment: "pending", fulfilment: "unfulfilled" }]);
      await tx.$client.query("update inventory_level set on_hand = on_hand + 100 where store_id = $1", [tx.storeId]);
    });
    expect({ waiting: await waiting(), stock: await stock() }).toEqual(before);
    await withStore(db, store.id, async (tx) => {
      await insertOrders(tx, [
        { status: "open", payment: "pending", fulfilment: "unfulfilled" },
        { status: "open", payment: "paid", fulfilment: "partially_fulfilled" },
      ]);
      await tx.$client.query("update inventory_level set on_hand = on_hand + 2, reserved = reserved + 1 where store_id = $1", [tx.storeId]);
    });
    expect(await waiting()).toMatchObject({ unpaid: 1, paymentPending: 1, toShip: 0, partlyShipped: 1 });
    expect(await stock()).toMatchObject({ unitsOnHand: 7, unitsAvailable: 6, stockValueMinor: 7000 });
  });
});
