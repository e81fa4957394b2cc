import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import { hashPassword } from "#shared/auth/password";
import { migrate, readMigrations } from "../../scripts/lib/migrate";
import { seedDemo } from "../../scripts/lib/seed";
import { connect, type ScaleDatabase } from "./db";
import { catalogSteps, type Step } from "./fixture-catalog";
import { ORDER_INSERTS, ORDER_STAGING, PAYMENT_INSERTS } from "./fixture-orders";
import { OUTBOX_INSERTS, SIDE_INSERTS, STAGING_TABLES } from "./fixture-rest";

/**
 * Builds the scale fixture once and keeps it: the database remembers the hash it was built from (the
 * migration files and the fixture's own source) in scale_fixture.fixture_version, and a later run with the
 * same hash reuses it. `--rebuild`, or any change to a migration or to these files, builds it afresh.
 */
const HERE = path.dirname(new URL(import.meta.url).pathname);
const SOURCES = ["fixture.ts", "fixture-catalog.ts", "fixture-orders.ts", "fixture-rest.ts"];

export interface FixtureInfo {
  hash: string;
  builtAt: string;
  buildSeconds: number;
  reused: boolean;
  counts: Record<string, number>;
  databaseBytes: number;
}

export function fixtureHash(): string {
  const h = createHash("sha256");
  for (const m of readMigrations()) h.update(`${m.version}:${m.checksum}\n`);
  for (const f of SOURCES) h.update(fs.readFileSync(path.join(HERE, f)));
  return h.digest("hex").slice(0, 16);
}

type Log = (m: string) => void;

async function builtHash(ownerUrl: string): Promise<{ hash: string | null; migrated: boolean }> {
  const c = await connect(ownerUrl);
  try {
    // A build that stopped half-way leaves the schema without the version table (or unreadable): stale.
    const { rows } = await c.query<{ v: boolean; m: boolean }>(
      `select exists (select 1 from pg_class t join pg_namespace n on n.oid = t.relnamespace
                      where n.nspname = 'scale_fixture' and t.relname = 'fixture_version')
                and has_schema_privilege('scale_fixture', 'usage') as v,
              to_regclass('public.schema_migrations') is not null as m`,
    );
    const migrated = Boolean(rows[0]?.m);
    if (!rows[0]?.v) return { hash: null, migrated };
    const found = await c.query<{ hash: string }>("select hash from scale_fixture.fixture_version order by built_at desc limit 1");
    return { hash: found.rows[0]?.hash ?? null, migrated };
  } finally {
    await c.end();
  }
}

async function readInfo(ownerUrl: string, reused: boolean): Promise<FixtureInfo> {
  const c = await connect(ownerUrl);
  try {
    const { rows } = await c.query<{ hash: string; built_at: Date; build_seconds: string; meta: { counts: Record<string, number> } }>(
      "select hash, built_at, build_seconds, meta from scale_fixture.fixture_version order by built_at desc limit 1",
    );
    const size = await c.query<{ n: string }>("select pg_database_size(current_database())::text as n");
    const row = rows[0]!;
    return {
      hash: row.hash, builtAt: row.built_at.toISOString(), buildSeconds: Number(row.build_seconds), reused,
      counts: row.meta.counts, databaseBytes: Number(size.rows[0]?.n ?? 0),
    };
  } finally {
    await c.end();
  }
}

/** A lane's work: steps, and waits for a step of the other lane to be done. */
type LaneEntry = Step | { wait: string };

class Gates {
  private readonly done = new Map<string, () => void>();
  private readonly waits = new Map<string, Promise<void>>();
  private gate(name: string): Promise<void> {
    let w = this.waits.get(name);
    if (!w) {
      w = new Promise<void>((resolve) => this.done.set(name, resolve));
      this.waits.set(name, w);
    }
    return w;
  }
  wait = (name: string) => this.gate(name);
  open = (name: string) => {
    void this.gate(name);
    this.done.get(name)?.();
  };
}

/** Runs a lane on one connection, a line per step with its seconds and the total so far. */
async function runLane(client: pg.Client, entries: LaneEntry[], lane: string, started: number, log: Log, gates = new Gates()): Promise<void> {
  for (const entry of entries) {
    if ("wait" in entry) {
      await gates.wait(entry.wait);
      continue;
    }
    const t0 = Date.now();
    const ticker = setInterval(() => log(`  … ${lane}${entry.name}: ${Math.round((Date.now() - t0) / 1000)} s so far`), 30_000);
    try {
      await client.query(entry.sql, entry.params);
    } catch (e) {
      throw new Error(`fixture step "${entry.name}" failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      clearInterval(ticker);
    }
    log(`${lane}${entry.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s (total ${((Date.now() - started) / 1000).toFixed(0)} s)`);
    gates.open(entry.name);
  }
}

const ALL_STEPS = [...ORDER_INSERTS, ...PAYMENT_INSERTS, ...SIDE_INSERTS, ...OUTBOX_INSERTS];
const step = (name: string): Step => {
  const found = ALL_STEPS.find((s) => s.name === name);
  if (!found) throw new Error(`no fixture step ${name}`);
  return found;
};

/**
 * Two lanes, one per core. Rows go in store by store (then by time): the indexes, all led by store_id, are
 * then filled one store's range at a time, which the cluster's 128 MB of shared buffers can take; in time
 * order across stores every insert lands on another store's leaf pages and the load takes several times as
 * long. The price: a store's rows sit together in the heap, where production interleaves them with every
 * other store's by time, so the scans of a big store read fewer pages than they would there. The planner
 * does not see that difference (store ids are random uuids, so their correlation with the heap order is ~0
 * either way): its choices are production's.
 */
const LANE_A: LaneEntry[] = [
  step("shop_order (lane a)"),
  { wait: "shop_order (lane b)" },
  ...["fulfillment_order", "order_line", "fulfillment_order_line", "payment_attempt", "refund", "shipment", "merchant_task"].map(step),
];
const LANE_B: LaneEntry[] = [step("shop_order (lane b)"), ...SIDE_INSERTS, { wait: "merchant_task" }, ...OUTBOX_INSERTS];

async function loaderSession(db: ScaleDatabase): Promise<pg.Client> {
  const c = await db.loader();
  await c.query("set work_mem = '256MB'; set maintenance_work_mem = '1GB'; set synchronous_commit = off; set statement_timeout = 0");
  return c;
}

const COUNTED = [
  "store", "customer", "product_variant", "shop_order", "order_line", "fulfillment_order", "fulfillment_order_line", "payment_attempt",
  "refund", "shipment", "inventory_adjustment", "outbox_event", "api_grant", "api_activity",
  "analytics_order_day", "analytics_customer_day", "analytics_stock_day", "order_search_token", "customer_search_token",
  "store_tally", "store_tally_delta",
];

/**
 * The store tallies' triggers (migration 0031) are off while the orders and stock go in, and the tallies
 * are counted once afterwards, as the migration's backfill counts them: the same totals (verify.ts checks
 * them against the rows) for ~30 s less of a build that must stay under 10 minutes. Every other trigger
 * runs as in production.
 */
const TALLY_TRIGGERS: [table: string, trigger: string][] = [
  ["shop_order", "store_tally_insert"], ["shop_order", "store_tally_update"], ["shop_order", "store_tally_delete"],
  ["inventory_level", "store_tally_insert"], ["inventory_level", "store_tally_update"], ["inventory_level", "store_tally_delete"],
  ["product_variant", "store_tally_update"], ["product_variant", "store_tally_delete"],
];
const tallyTriggers = (action: "enable" | "disable") => TALLY_TRIGGERS.map(([t, trigger]) => `alter table ${t} ${action} trigger ${trigger};`).join("\n");
const TALLY_RECOUNT = `
delete from store_tally_delta;
update store_tally t set open_unpaid = coalesce(o.unpaid, 0), open_payment_pending = coalesce(o.pending, 0),
       open_to_ship = coalesce(o.to_ship, 0), open_partly_shipped = coalesce(o.partly, 0),
       units_on_hand = coalesce(l.on_hand, 0), units_available = coalesce(l.available, 0), stock_value_minor = coalesce(l.value, 0)
  from store s
  left join (
    select store_id, count(*) filter (where payment_status = 'unpaid') as unpaid, count(*) filter (where payment_status = 'pending') as pending,
           count(*) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled') as to_ship,
           count(*) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled') as partly
      from shop_order where status = 'open' group by store_id) o on o.store_id = s.id
  left join (
    select l.store_id, sum(l.on_hand) as on_hand, sum(l.on_hand - l.reserved) as available, sum(l.on_hand::numeric * v.price_minor) as value
      from inventory_level l join product_variant v on v.store_id = l.store_id and v.id = l.variant_id group by l.store_id) l on l.store_id = s.id
 where t.store_id = s.id;`;

async function load(db: ScaleDatabase, hash: string, started: number, log: Log): Promise<void> {
  const a = await loaderSession(db);
  const b = await loaderSession(db);
  try {
    const passwordHash = await hashPassword("scale-password");
    await a.query(tallyTriggers("disable"));
    await runLane(a, [...catalogSteps(passwordHash), ...ORDER_STAGING], "", started, log);
    const gates = new Gates();
    await Promise.all([runLane(a, LANE_A, "[a] ", started, log, gates), runLane(b, LANE_B, "[b] ", started, log, gates)]);
    await runLane(a, [{ name: "store tallies", sql: `${tallyTriggers("enable")}\n${TALLY_RECOUNT}` }], "", started, log);
    await a.query(STAGING_TABLES.map((t) => `drop table if exists scale_fixture.${t};`).join("\n"));
    const big = ["shop_order", "order_line", "fulfillment_order_line", "inventory_adjustment", "outbox_event", "store_domain"];
    // The analytics rollups and the search tokens were written by the triggers as the rows went in
    // (migrations 0027, 0030); the store tallies were counted once at the end (TALLY_RECOUNT).
    const rest = [
      "fulfillment_order", "payment_attempt", "shipment", "customer", "api_activity", "refund",
      "analytics_order_day", "analytics_customer_day", "analytics_customer_total", "analytics_stock_day",
      "order_search_token", "customer_search_token", "store_tally", "store_tally_delta",
    ];
    const vacuum = (c: pg.Client, tables: string[], lane: string) =>
      runLane(c, tables.map((t) => ({ name: `vacuum analyze ${t}`, sql: `vacuum (analyze) ${t}` })), lane, started, log);
    await Promise.all([vacuum(a, big, "[a] "), vacuum(b, rest, "[b] ")]);
    await runLane(a, [{ name: "analyze (the rest)", sql: "analyze" }], "", started, log);
    const counts: Record<string, number> = {};
    for (const t of COUNTED) counts[t] = Number((await a.query<{ n: string }>(`select count(*)::text as n from ${t}`)).rows[0]?.n ?? 0);
    await a.query(`create table if not exists scale_fixture.fixture_version (
      hash text not null, built_at timestamptz not null default now(), build_seconds numeric not null, meta jsonb not null)`);
    // The owner reads the version (the loader may be the local superuser); nobody else sees the schema.
    await a.query(`revoke all on schema scale_fixture from public;
      do $$ declare owner text := (select pg_get_userbyid(datdba) from pg_database where datname = current_database());
      begin
        execute format('grant usage on schema scale_fixture to %I', owner);
        execute format('grant select on scale_fixture.fixture_version to %I', owner);
      end $$`);
    await a.query("insert into scale_fixture.fixture_version (hash, build_seconds, meta) values ($1, $2, $3)", [
      hash, ((Date.now() - started) / 1000).toFixed(1), JSON.stringify({ counts }),
    ]);
  } finally {
    await a.end();
    await b.end();
  }
}

/** The fixture, reused when its hash matches, otherwise (or with `rebuild`) built from an empty database. */
export async function ensureFixture(db: ScaleDatabase, options: { rebuild: boolean; reuse?: boolean; log: Log }): Promise<FixtureInfo> {
  const { log } = options;
  const hash = fixtureHash();
  const found = await builtHash(db.ownerUrl);
  if (found.hash === hash && !options.rebuild) {
    log(`Fixture ${hash} is in place: reusing it (--rebuild builds it afresh).`);
    return readInfo(db.ownerUrl, true);
  }
  if (found.hash && options.reuse && !options.rebuild) {
    log(`Fixture ${found.hash} is stale (now ${hash}); --reuse: measuring it as it is.`);
    return readInfo(db.ownerUrl, true);
  }
  log(found.hash ? `Fixture ${found.hash} is stale (now ${hash}) or --rebuild: building afresh.` : `No fixture yet: building ${hash}.`);
  const started = Date.now();
  if (found.migrated) {
    if (!db.droppable) throw new Error("The scale database given by URL is not empty: point SCALE_DATABASE_OWNER_URL at a fresh, empty database.");
    await db.recreate();
    log(`Recreated the scale database: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const applied = await migrate(db.ownerUrl);
  log(`Migrations: ${applied} applied, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await seedDemo(db.ownerUrl, () => {});
  log(`Demo seed: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await load(db, hash, started, log);
  log(`Fixture built in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  return readInfo(db.ownerUrl, false);
}
