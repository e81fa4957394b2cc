import type { Database, HttpUnitOptions } from "./database";
import type { Plan } from "./plan";
import { openStore } from "./openings";
import { emits } from "./changes";
import { AppError } from "../core/errors";
import { pgErrorOf, unitFailure } from "./pg-errors";
import { storefrontFactsIfChangedStatement, unitStore } from "./statements";
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

/**
 * A writing unit also carries, as its last statements, what its commit must tell the runtime (as
 * withStore's COMMIT message does): the store, when it wrote outbox rows (the relay is nudged), and the
 * storefront's facts when it changed what the storefront shows (pushed to the HOSTS cache).
 */
export async function sendUnit<O, R>(db: Database, spec: UnitSpec<O, R>): Promise<UnitResult<O, R>> {
  const { q, run } = collector();
  const opening = spec.opening(q);
  const plan = spec.plan(q);
  const writing = !spec.options.readOnly;
  const nudge = writing && emits(plan) && db.onOutboxWritten !== undefined;
  const probe = writing && db.onStorefrontChange !== undefined;
  const after: Step[] = [
    ...(nudge ? [unitStore(q)] : []),
    ...(probe ? [storefrontFactsIfChangedStatement(q)] : []),
  ];
  const [openingRows, ...rest] = await run([opening, ...plan.steps, ...after], (statements) => db.sendHttp(statements, spec.options)).catch(asAppError);
  const opened = (openingRows as R[])[0];
  if (opened === undefined) throw new Error("A unit's opening answered no row");
  const results = rest.slice(0, plan.steps.length);
  const tail = rest.slice(plan.steps.length) as Record<string, unknown>[][];
  const facts = probe ? tail.at(-1)?.[0] : undefined;
  if (facts) await db.onStorefrontChange?.(facts);
  const storeId = nudge ? (tail[0]?.[0] as { store_id?: string } | undefined)?.store_id : undefined;
  if (storeId) await db.onOutboxWritten?.(storeId);
  return { opened, finish: () => plan.finish(results) };
}

/** A refusal a statement raised becomes the AppError it stands for; anything else goes on as it is. */
function asAppError(e: unknown): never {
  throw unitFailure(e) ?? e;
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
  const results = await run(plan.steps, onClient(client)).catch((e: unknown) => {
    // On an open transaction a lost race cannot be read again: the transaction is aborted. Say so.
    if (pgErrorOf(e)?.code === "CR409") throw new AppError("CONFLICT", "This changed while it was being saved; reload and try again.", { reason: "concurrent_change" });
    return asAppError(e);
  });
  return plan.finish(results);
}
