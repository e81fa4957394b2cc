import pg from "pg";
import { asExplained, seqScansOf, summarize, summarizeAll, type Explained, type PlanSummary, type SeqScan } from "./plan";

/**
 * The measuring harness. Each item is the statements of one request (a read plan's statements, which a
 * unit sends together in one round trip) with their parameters, run as app_user the way a store unit of
 * work runs them: inside a transaction (READ ONLY unless the item says otherwise) that first sets
 * `app.store_id` (and `app.contact`, as an admitted member's unit does) with set_config(…, true), then
 * rolled back. Timing: warm-ups, then up to `runs` runs (p50/p95 of the request's statements together,
 * parse and plan included, as the Workers send them with bind parameters), each run in a transaction of its
 * own, interleaved with the reference store's runs (below). Then once under EXPLAIN
 * (ANALYZE, BUFFERS, FORMAT JSON), each statement: the plans are walked for sequential scans of the history
 * tables (plan.ts WATCHED_TABLES) and summarised.
 *
 * A call of a privileged lookup (`privileged: {fn, args}`) shows only a function scan under EXPLAIN, so
 * its body is explained as well: read from the catalog, prepared as the function's owner (app_privileged,
 * search_path pinned as in the function) with a generic plan, which is what a SQL function body gets.
 * That needs the owner role (a member of app_privileged): pass ownerUrl.
 *
 * Each item is also run for a reference store (by default `referenceStoreId` with the item's own
 * parameters; an item may name its own), and the ratio of the p50s is reported. The two are timed in the
 * same loop: the warm-ups of both, then alternating runs (item, reference, item, reference, …), so that the
 * machine's noise falls on both alike; the reference is measured afresh for each item (never reused from
 * another item's runs), and the budget stops the loop after a whole pair. An item whose work is its output
 * (`output`: the rows a job inserts, deletes or locks) is also timed per output row.
 */

export interface MeasureItem {
  name: string;
  /** Which store this instance is for, as printed: e.g. "big", "small", or "global" for a cross-store lookup. */
  label: string;
  storeId: string;
  /** The request's statements, in the order its unit sends them. */
  statements: readonly Statement[];
  /** Default true; false for a statement that locks rows (FOR UPDATE), which a read-only transaction refuses. */
  readOnly?: boolean;
  /** Default true: a sequential scan of a watched table in a hot item fails the run. */
  hot?: boolean;
  privileged?: { fn: string; args: readonly unknown[] };
  /** The same request for the reference store; null: no comparison (e.g. a global lookup). */
  reference?: { storeId: string; statements: readonly Statement[] } | null;
  /**
   * Bulk work whose output grows with the store (a recipient inserted, a row deleted, an event locked): how
   * many output rows the statements' answers say the request made. The item is then judged per output row.
   */
  output?: Output;
}

export interface Output {
  /** What one output row is, e.g. "recipient". */
  unit: string;
  /** The output rows, from the answers of the request's statements (in order). */
  count: (answers: readonly (readonly Record<string, unknown>[])[]) => number;
}

/** An item's output in one store: rows made, and its p50 per row (null when it made none). */
export interface OutputTiming {
  rows: number;
  msPerRow: number | null;
}

export interface Statement {
  sql: string;
  params: readonly unknown[];
}

export interface Timing {
  runs: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
}

export interface MeasureResult {
  name: string;
  label: string;
  storeId: string;
  hot: boolean;
  timing: Timing;
  rows: number;
  plan: PlanSummary;
  bodyPlan?: PlanSummary;
  seqScans: SeqScan[];
  reference?: { storeId: string; timing: Timing; output?: OutputTiming };
  /** p50 of this item over p50 of the reference store's. */
  ratio?: number;
  output?: OutputTiming & { unit: string };
}

export interface MeasureOptions {
  appUrl: string;
  ownerUrl?: string;
  referenceStoreId?: string;
  warmup?: number;
  runs?: number;
  /** Stop an item's runs (with its reference's, interleaved) after this long (at least 5 runs of each are made). */
  budgetMs?: number;
  log?: (m: string) => void;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export function timingOf(samples: number[]): Timing {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { runs: s.length, p50: round(q(0.5)), p95: round(q(0.95)), mean: round(s.reduce((a, b) => a + b, 0) / s.length), min: round(s[0]!) };
}

async function inStoreTx<T>(c: pg.Client, storeId: string, readOnly: boolean, fn: () => Promise<T>): Promise<T> {
  await c.query(readOnly ? "begin transaction read only" : "begin");
  try {
    await c.query("select set_config('app.store_id', $1, true), set_config('app.contact', 'on', true)", [storeId]);
    return await fn();
  } finally {
    await c.query("rollback");
  }
}

interface Timed {
  timing: Timing;
  rows: number;
  output?: OutputTiming;
}

const outputTiming = (output: Output | undefined, answers: Record<string, unknown>[][], timing: Timing): OutputTiming | undefined => {
  if (!output) return undefined;
  const rows = output.count(answers);
  return { rows, msPerRow: rows > 0 ? Math.round((timing.p50 / rows) * 1e6) / 1e6 : null };
};

/** One store's side of an item's timing: its statements, samples and the answers of its last run. */
interface Side {
  storeId: string;
  statements: readonly Statement[];
  samples: number[];
  answers: Record<string, unknown>[][];
}

/** One run of a side's statements, in a store transaction of its own; the ms its statements took. */
async function run(c: pg.Client, item: MeasureItem, side: Side): Promise<number> {
  return inStoreTx(c, side.storeId, item.readOnly ?? true, async () => {
    const t0 = performance.now();
    const answers: Record<string, unknown>[][] = [];
    for (const s of side.statements) answers.push((await c.query<Record<string, unknown>>(s.sql, [...s.params])).rows);
    const ms = performance.now() - t0;
    side.answers = answers;
    return ms;
  });
}

/**
 * Times the item in its store and, if given, the reference in its store, interleaved: the warm-ups of each
 * (item, reference, …), then runs in pairs (item, reference, item, reference, …) until `runs` pairs, or the
 * budget once at least 5 pairs are done. Returns the item's timing, then the reference's.
 */
async function time(
  c: pg.Client,
  item: MeasureItem,
  reference: { storeId: string; statements: readonly Statement[] } | undefined,
  o: Required<Pick<MeasureOptions, "warmup" | "runs" | "budgetMs">>,
): Promise<[Timed, Timed | undefined]> {
  const side = (storeId: string, statements: readonly Statement[]): Side => ({ storeId, statements, samples: [], answers: [] });
  const sides = [side(item.storeId, item.statements), ...(reference ? [side(reference.storeId, reference.statements)] : [])];
  const started = performance.now();
  for (let i = 0; i < o.warmup + o.runs; i++) {
    for (const s of sides) {
      const ms = await run(c, item, s);
      if (i >= o.warmup) s.samples.push(ms);
    }
    if (sides.every((s) => s.samples.length >= 5) && performance.now() - started > o.budgetMs) break;
  }
  const timed = (s: Side): Timed => {
    const timing = timingOf(s.samples);
    const output = outputTiming(item.output, s.answers, timing);
    return { timing, rows: s.answers.reduce((n, a) => n + a.length, 0), ...(output ? { output } : {}) };
  };
  return [timed(sides[0]!), sides[1] ? timed(sides[1]) : undefined];
}

async function explain(c: pg.Client, storeId: string, item: MeasureItem): Promise<Explained[]> {
  return inStoreTx(c, storeId, item.readOnly ?? true, async () => {
    const plans: Explained[] = [];
    for (const s of item.statements) {
      const r = await c.query<{ "QUERY PLAN": unknown }>(`explain (analyze, buffers, format json) ${s.sql}`, [...s.params]);
      plans.push(asExplained(r.rows[0]?.["QUERY PLAN"]));
    }
    return plans;
  });
}

/** The body of privileged.<fn>, explained as its owner would run it (generic plan, pinned search_path). */
export async function explainPrivilegedBody(owner: pg.Client, fn: string, args: readonly unknown[]): Promise<Explained> {
  const { rows } = await owner.query<{ src: string; names: string[] | null; types: string[] }>(
    `select p.prosrc as src, p.proargnames as names, array(select format_type(t, null) from unnest(p.proargtypes) t) as types
     from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'privileged' and p.proname = $1`,
    [fn],
  );
  const f = rows[0];
  if (!f || rows.length !== 1) throw new Error(`privileged.${fn}: expected exactly one function`);
  let body = f.src.trim().replace(/;\s*$/, "");
  (f.names ?? []).forEach((name, i) => {
    body = body.replace(new RegExp(`\\b${name}\\b`, "g"), `$${i + 1}`);
  });
  const types = f.types.slice(0, args.length);
  // EXECUTE under EXPLAIN takes no bind parameters: the arguments are written in as typed literals.
  const literals = args.map((a, i) => `${owner.escapeLiteral(a instanceof Date ? a.toISOString() : String(a))}::${types[i]}`).join(", ");
  await owner.query("begin transaction read only");
  try {
    await owner.query("set local role app_privileged; set local search_path = pg_catalog, public; set local plan_cache_mode = force_generic_plan");
    await owner.query(`prepare scale_body (${types.join(", ")}) as ${body}`);
    const r = await owner.query<{ "QUERY PLAN": unknown }>(`explain (analyze, buffers, format json) execute scale_body (${literals})`);
    return asExplained(r.rows[0]?.["QUERY PLAN"]);
  } finally {
    await owner.query("rollback");
    await owner.query("deallocate all");
  }
}

export async function measure(items: readonly MeasureItem[], options: MeasureOptions): Promise<MeasureResult[]> {
  const o = { warmup: options.warmup ?? 3, runs: options.runs ?? 30, budgetMs: options.budgetMs ?? 20_000 };
  const log = options.log ?? (() => {});
  const app = new pg.Client({ connectionString: options.appUrl });
  await app.connect();
  const owner = options.ownerUrl ? new pg.Client({ connectionString: options.ownerUrl }) : undefined;
  await owner?.connect();
  const results: MeasureResult[] = [];
  try {
    for (const item of items) {
      const ref = item.reference === null ? undefined : (item.reference ?? (options.referenceStoreId ? { storeId: options.referenceStoreId, statements: item.statements } : undefined));
      const [{ timing, rows, output }, t] = await time(app, item, ref, o);
      const explained = await explain(app, item.storeId, item);
      const seqScans = explained.flatMap((e, i) => seqScansOf(e, explained.length > 1 ? `statement ${i + 1}` : "statement"));
      let bodyPlan: PlanSummary | undefined;
      if (item.privileged && owner) {
        const body = await explainPrivilegedBody(owner, item.privileged.fn, item.privileged.args);
        bodyPlan = summarize(body);
        seqScans.push(...seqScansOf(body, `privileged.${item.privileged.fn}`));
      }
      const reference: MeasureResult["reference"] =
        ref && t ? { storeId: ref.storeId, timing: t.timing, ...(t.output ? { output: t.output } : {}) } : undefined;
      const result: MeasureResult = {
        name: item.name, label: item.label, storeId: item.storeId, hot: item.hot ?? true, timing, rows, plan: summarizeAll(explained),
        ...(bodyPlan ? { bodyPlan } : {}), seqScans,
        ...(reference ? { reference, ratio: Math.round((timing.p50 / Math.max(reference.timing.p50, 0.001)) * 100) / 100 } : {}),
        ...(output && item.output ? { output: { unit: item.output.unit, ...output } } : {}),
      };
      results.push(result);
      const scans = seqScans.length ? `  SEQ SCAN: ${seqScans.map((s) => s.table).join(", ")}` : "";
      const perRow = output?.msPerRow != null ? `, ${(output.msPerRow * 1000).toFixed(2)} µs per ${item.output!.unit} (${output.rows})` : "";
      log(`${item.name} [${item.label}]: p50 ${timing.p50.toFixed(2)} ms, p95 ${timing.p95.toFixed(2)} ms (${timing.runs} runs, ${rows} rows)${perRow}${reference ? `, ×${result.ratio} the reference` : ""}${scans}`);
    }
  } finally {
    await app.end();
    await owner?.end();
  }
  return results;
}

/** Hot items whose plan read a watched table sequentially. */
export const seqScanFailures = (results: readonly MeasureResult[]) => results.filter((r) => r.hot && r.seqScans.length > 0);
