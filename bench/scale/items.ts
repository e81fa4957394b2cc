import type { Plan } from "#shared/db/plan";
import { collector, sql, type Q } from "#shared/db/steps";
import { pruneCutoffs, pruneStorePlan } from "#shared/jobs/activity-prune";
import { isSessionProcedure } from "#shared/procedures/define";
import { unitScope } from "#shared/procedures/scope";
import { findProcedure } from "#shared/registry/procedures";
import type { MeasureItem, Output, Statement } from "./measure";

/**
 * The hot requests. A read procedure's are taken from the code itself: its plan is built as a store unit
 * builds it (the store is `CURRENT_STORE`, the unit's `app.store_id`, exactly as the Workers send it: the
 * planner does not know which store it plans for) and its statements are measured together, as the unit
 * sends them in one round trip. The rest (a job's statement, a lookup) are copied from the source named
 * beside each item.
 *
 * A `pending` item measures the statements as their owner is to change them (issue 19, phase B), written
 * out here; the report names the change. Once today's statement no longer looks as it did, the run stops
 * and asks for the `pending` entry to be removed, so the code's own statements are measured again.
 */

export interface StoreContext {
  label: string;
  id: string;
  slug: string;
  hostname: string;
  tokenHash: string | null;
  /** The variant with the longest stock history. */
  variantId: string | null;
  /** The newest order. */
  orderId: string | null;
  /** The address with the most orders (a customer's orders). */
  email: string | null;
}

interface Def {
  name: string;
  /** Source of the SQL. */
  from: string;
  /** A read procedure ("orders.list") and its input for a store: the statements are the code's own. */
  procedure?: { key: string; input: (s: StoreContext, now: Date) => unknown };
  /** Or a store unit's plan, built by the code (a job's unit): its statements as the unit sends them. */
  plan?: (q: Q, now: Date) => Plan<unknown>;
  /** Or the statement, written out. */
  sql?: string;
  params?: (s: StoreContext, now: Date) => unknown[];
  /**
   * The statements as their owner is to change them (file, function, what), measured instead of today's.
   * `today` matches today's statement (the procedure's, or `sql`): once it no longer does, the change was
   * made and the run stops, asking for this to be removed.
   */
  pending?: { what: string; today: RegExp; statements: (s: StoreContext, now: Date) => Statement[] };
  readOnly?: boolean;
  /** A cross-store privileged lookup: one run (label "global"), body explained, no reference store. */
  global?: { fn: string; args: (now: Date) => unknown[] };
  /** A privileged lookup whose parameters differ per store (host, token): body explained too. */
  privileged?: { fn: string; args: (s: StoreContext) => unknown[] };
  /** Bulk work whose output grows with the store: judged per output row too (measure.ts `Output`). */
  output?: Output;
}

const NONE = "00000000-0000-0000-0000-000000000000";
/** The unit's store, as shared/db/openings.ts CURRENT_STORE writes it (for the statements written out here). */
const UNIT_STORE = "nullif(current_setting('app.store_id', true), '')::uuid";
const DAY = 86_400_000;
const IST = "+05:30";

/** analytics.summary's input: `days` IST days ending today. */
function istDays(now: Date, days: number): { from: string; to: string; utcOffset: string } {
  const today = new Date(now.getTime() + 5.5 * 3_600_000).toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${today}T00:00:00Z`) - (days - 1) * DAY).toISOString().slice(0, 10);
  return { from, to: today, utcOffset: IST };
}

/**
 * The statements of a read procedure's plan for `input`, as a store unit sends them: its scope is the
 * unit's (`unitScope`), but `can()` is true (the measurements run as an Owner would, without the
 * admission settings a unit's opening leaves).
 */
export async function planStatements(key: string, input: unknown): Promise<Statement[]> {
  const [router, name] = key.split(".") as [string, string];
  const proc = findProcedure(router, name);
  if (!proc || isSessionProcedure(proc) || !proc.read) throw new Error(`${key} is not a read procedure`);
  const parsed: unknown = proc.input.parse(input);
  const scope = { ...unitScope(false, () => { throw new Error("no caller while building"); }), can: () => sql<boolean>`true` };
  return statementsOfPlan(key, (q) => proc.read!(q, scope, parsed as never));
}

/** The statements of a plan, as a unit sends them. */
async function statementsOfPlan(what: string, build: (q: Q) => Plan<unknown>): Promise<Statement[]> {
  const { q, run } = collector();
  const plan = build(q);
  const sent: Statement[] = [];
  await run(plan.steps, (statements) => {
    sent.push(...statements.map((s) => ({ sql: s.sql, params: s.params })));
    return Promise.resolve(statements.map(() => []));
  }).catch(() => undefined);
  if (sent.length !== plan.steps.length) throw new Error(`${what}: the plan's statements could not be built`);
  return sent;
}

const MONEY_RECEIVED = "('partially_paid', 'paid', 'partially_refunded', 'refunded')";

const DEFS: Def[] = [
  { name: "orders.list", from: "procedures/orders.ts listOrders, no filter", procedure: { key: "orders.list", input: () => ({}) } },
  { name: "orders.list email", from: "listOrders, email (a customer's orders)", procedure: { key: "orders.list", input: (s) => ({ email: s.email ?? "nobody@example.com" }) } },
  { name: "orders.list status", from: "listOrders, status open", procedure: { key: "orders.list", input: () => ({ status: "open" }) } },
  { name: "orders.list query", from: "listOrders, query 'sharma' (a word of the email: search.ts)", procedure: { key: "orders.list", input: () => ({ query: "sharma" }) } },
  { name: "orders.list query 1002", from: "listOrders, query '1002' (an order number, and email words beginning with it)", procedure: { key: "orders.list", input: () => ({ query: "1002" }) } },
  { name: "orders.list query com", from: "listOrders, query 'com' (a word in most emails)", procedure: { key: "orders.list", input: () => ({ query: "com" }) } },
  { name: "orders.get", from: "procedures/orders.ts getOrder (orders/order-detail.ts, the timeline included)", procedure: { key: "orders.get", input: (s) => ({ id: s.orderId ?? NONE }) } },
  { name: "customers.list", from: "procedures/customers.ts listCustomers", procedure: { key: "customers.list", input: () => ({}) } },
  { name: "customers.list search", from: "listCustomers, query 'sharma'", procedure: { key: "customers.list", input: () => ({ query: "sharma" }) } },
  { name: "inventory.history", from: "procedures/inventory.ts inventoryHistory", procedure: { key: "inventory.history", input: (s) => ({ variantId: s.variantId ?? NONE }) } },
  { name: "analytics.summary 30d", from: "procedures/analytics.ts summary, 30 days at +05:30", procedure: { key: "analytics.summary", input: (_s, now) => istDays(now, 30) } },
  { name: "analytics.summary 365d", from: "procedures/analytics.ts summary, 365 days at +05:30", procedure: { key: "analytics.summary", input: (_s, now) => istDays(now, 365) } },
  { name: "orders.waiting", from: "procedures/overview.ts waitingOrders", procedure: { key: "orders.waiting", input: () => ({}) } },
  {
    name: "marketing buyers", from: "marketing/work.ts startDueCampaignsPlan, audience buyers (the SELECT of its insert)",
    sql: `select c.store_id, c.id, $1::uuid, c.email_lower from customer c
where c.store_id = ${UNIT_STORE} and c.accepts_marketing and c.email is not null
  and exists (select 1 from shop_order o where o.store_id = c.store_id and o.email_lower = c.email_lower and o.payment_status in ${MONEY_RECEIVED})`,
    params: () => [NONE],
    output: { unit: "recipient", count: (answers) => answers.reduce((n, a) => n + a.length, 0) },
  },
  {
    name: "relay pick", from: "events/relay.ts relayStore (FOR UPDATE SKIP LOCKED)", readOnly: false,
    sql: `select id, kind, payload, created_at, attempts from outbox_event
where store_id = $1 and processed_at is null and dead_at is null and available_at <= $2 order by seq limit $3 for update skip locked`,
    params: (s, now) => [s.id, now, 100],
  },
  {
    name: "prune (store unit)", from: "jobs/activity-prune.ts pruneStorePlan: old API activity, a batch of sent outbox rows naming no order (rolled back)", readOnly: false,
    plan: (q, now) => pruneStorePlan(q, pruneCutoffs(now)),
    output: { unit: "row deleted", count: (answers) => answers.reduce((n, a) => n + a.reduce((m, r) => m + (typeof r.n === "number" ? r.n : 0), 0), 0) },
  },
  {
    name: "host lookup", from: "db/privileged.ts storeIdByHostname", sql: "select privileged.store_id_by_hostname($1) as id",
    params: (s) => [s.hostname], privileged: { fn: "store_id_by_hostname", args: (s) => [s.hostname] },
  },
  {
    name: "token lookup", from: "db/statements.ts storeExpression (token door)", sql: "select privileged.store_id_by_token_hash($1) as id",
    params: (s) => [s.tokenHash ?? "0".repeat(64)], privileged: { fn: "store_id_by_token_hash", args: (s) => [s.tokenHash ?? "0".repeat(64)] },
  },
  ...(
    [
      ["job {outbox}-relay", "store_ids_with_pending_outbox", "$1", (_now: Date) => [500]],
      ["job {payments}-unpaid-expiry", "store_ids_with_unpaid_orders_due", "$1, $2, $3", (now: Date) => [now, new Date(now.getTime() + DAY), 500]],
      ["job {payments}-preorder-balance", "store_ids_with_preorder_balance_work", "$1, $2, $3", (now: Date) => [new Date(now.getTime() - 3 * DAY), new Date(now.getTime() - 7 * DAY), 500]],
      ["job {marketing}-tick", "store_ids_with_marketing_work", "$1, $2", (now: Date) => [now, 500]],
      ["job {shipping}-track", "store_ids_with_open_shipments", "$1", (_now: Date) => [500]],
      ["job {domains}-verify", "store_ids_with_domains_to_verify", "$1, $2", (now: Date) => [now, 100]],
      ["job {api}-activity-prune", "store_ids_with_old_activity", "$1, $2", (now: Date) => [pruneCutoffs(now).activity, 500]],
      ["job {api}-activity-prune outbox", "store_ids_with_sent_outbox", "$1, $2", (now: Date) => [pruneCutoffs(now).sentOutbox, 500]],
    ] as const
  ).map(([name, fn, placeholders, args]): Def => ({
    name, from: `db/privileged.ts (privileged.${fn})`, sql: `select id from privileged.${fn}(${placeholders}) as id`,
    params: (_s, now) => args(now), global: { fn, args },
  })),
];

async function statementsOf(d: Def, s: StoreContext, now: Date): Promise<Statement[]> {
  const built = d.procedure
    ? await planStatements(d.procedure.key, d.procedure.input(s, now))
    : d.plan
      ? await statementsOfPlan(d.name, (q) => d.plan!(q, now))
      : [{ sql: d.sql!, params: d.params?.(s, now) ?? [] }];
  if (!d.pending) return built;
  if (!built.some((b) => d.pending!.today.test(b.sql))) {
    throw new Error(`${d.name}: today's statement no longer matches ${d.pending.today} (the pending change was made?): remove \`pending\` from bench/scale/items.ts`);
  }
  return d.pending.statements(s, now);
}

/** The items for the big and the small store, each compared with the demo store; the job lists once. */
export async function hotItems(stores: { big: StoreContext; small: StoreContext; demo: StoreContext }, now: Date): Promise<MeasureItem[]> {
  const items: MeasureItem[] = [];
  for (const d of DEFS) {
    if (d.global) {
      const args = d.global.args(now);
      items.push({ name: d.name, label: "global", storeId: stores.big.id, statements: [{ sql: d.sql!, params: args }], reference: null, privileged: { fn: d.global.fn, args } });
      continue;
    }
    const reference = { storeId: stores.demo.id, statements: await statementsOf(d, stores.demo, now) };
    for (const s of [stores.big, stores.small]) {
      items.push({
        name: d.name, label: s.label, storeId: s.id, statements: await statementsOf(d, s, now),
        ...(d.readOnly === false ? { readOnly: false } : {}),
        ...(d.privileged ? { privileged: { fn: d.privileged.fn, args: d.privileged.args(s) } } : {}),
        ...(d.output ? { output: d.output } : {}),
        reference,
      });
    }
  }
  return items;
}

/** Where each item's SQL comes from, and the change still pending in its owner's code. */
export const itemSources = (): Record<string, string> =>
  Object.fromEntries(DEFS.map((d) => [d.name, d.pending ? `${d.from}; PENDING: ${d.pending.what}` : d.from]));
