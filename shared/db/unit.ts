import type { Database, HttpUnitOptions } from "./database";
import type { Plan } from "./plan";
import { openStore } from "./openings";
import { collector, onClient, type Q, type Step, type StatementClient } from "./steps";

/**
 * A unit of work in one round trip (ARCHITECTURE §3, docs/database.md "Two paths"): the opening (a
 * `unit.open_*` call that sets the store and admits the caller, see ./openings.ts) and a plan's
 * statements, sent as one non-interactive transaction over Neon's HTTP path. A unit without its opening
 * sees no store's rows (row-level security), so it fails closed.
 */
export interface UnitSpec<O, R> {
  opening(q: Q): Step<R[]>;
  plan(q: Q): Plan<O>;
  options: HttpUnitOptions;
}

export interface UnitResult<O, R> {
  /** The opening's one row (the admitted caller). */
  opened: R;
  /** Turns the plan's rows into its answer (it may throw, e.g. NOT_FOUND). */
  finish(): O;
}

export async function sendUnit<O, R>(db: Database, spec: UnitSpec<O, R>): Promise<UnitResult<O, R>> {
  const { q, run } = collector();
  const opening = spec.opening(q);
  const plan = spec.plan(q);
  const [openingRows, ...rest] = await run([opening, ...plan.steps], (statements) => db.sendHttp(statements, spec.options));
  const opened = (openingRows as R[])[0];
  if (opened === undefined) throw new Error("A unit's opening answered no row");
  return { opened, finish: () => plan.finish(rest) };
}

/**
 * A unit in a store known already, with no caller to admit (the storefront, jobs, webhooks: the store
 * comes from the hostname, the job or the verified URL). One round trip.
 */
export async function sendStoreUnit<O>(db: Database, storeId: string, build: (q: Q) => Plan<O>, options: HttpUnitOptions = { readOnly: true }): Promise<O> {
  const sent = await sendUnit(db, { opening: (q) => openStore(q, storeId), plan: build, options });
  return sent.finish();
}

/**
 * Runs a plan on a transaction that is already open on a WebSocket connection (its store set): the
 * same statements, one by one. Tests and units that hold a lock across steps use it.
 */
export async function runPlanOn<O>(client: StatementClient, build: (q: Q) => Plan<O>): Promise<O> {
  const { q, run } = collector();
  const plan = build(q);
  const results = await run(plan.steps, onClient(client));
  return plan.finish(results);
}
