/**
 * Reading EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON): the node tree, the sequential scans on the tables that
 * grow with a store's history, and a compact summary (one line per node, indented by depth).
 */

/** The tables whose sequential scan is a bug at scale: they hold every store's history. */
export const WATCHED_TABLES = ["shop_order", "order_line", "outbox_event", "api_activity", "inventory_adjustment", "customer"] as const;

export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  Alias?: string;
  "Index Name"?: string;
  "Parent Relationship"?: string;
  "Subplan Name"?: string;
  "Parallel Aware"?: boolean;
  "Scan Direction"?: string;
  Strategy?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Actual Total Time"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  "Heap Fetches"?: number;
  "Sort Method"?: string;
  "Sort Space Used"?: number;
  "Sort Space Type"?: string;
  "Hash Batches"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  "Index Cond"?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

export interface Explained {
  Plan: PlanNode;
  "Planning Time"?: number;
  "Execution Time"?: number;
}

export interface SeqScan {
  table: string;
  rows: number;
  removedByFilter: number;
  loops: number;
  /** Where it was found: the statement itself, or the body of a privileged function. */
  in: string;
}

export interface PlanSummary {
  executionMs: number;
  planningMs: number;
  sharedHitBlocks: number;
  sharedReadBlocks: number;
  /** Rows the plan's table scans read (returned and thrown away, times loops): what the request touched. */
  scannedRows: number;
  /** The tree, one line per node (indented by depth), up to a limit. */
  nodes: string[];
  /** The hot path: nodes that took at least a tenth of the time (time × loops), and every watched-table scan. */
  hot: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function isPlanNode(v: unknown): v is PlanNode {
  return isRecord(v) && typeof v["Node Type"] === "string" && (v.Plans === undefined || (Array.isArray(v.Plans) && v.Plans.every(isPlanNode)));
}

/** The single statement's output of EXPLAIN (FORMAT JSON), checked. */
export function asExplained(value: unknown): Explained {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (!isRecord(first) || !isPlanNode(first.Plan)) throw new Error("EXPLAIN did not return a JSON plan");
  return {
    Plan: first.Plan,
    ...(typeof first["Planning Time"] === "number" ? { "Planning Time": first["Planning Time"] } : {}),
    ...(typeof first["Execution Time"] === "number" ? { "Execution Time": first["Execution Time"] } : {}),
  };
}

export function walk(node: PlanNode, visit: (n: PlanNode, depth: number) => void, depth = 0): void {
  visit(node, depth);
  for (const child of node.Plans ?? []) walk(child, visit, depth + 1);
}

export function seqScansOf(plan: Explained, where: string): SeqScan[] {
  const found: SeqScan[] = [];
  walk(plan.Plan, (n) => {
    const table = n["Relation Name"];
    if (n["Node Type"] === "Seq Scan" && table && (WATCHED_TABLES as readonly string[]).includes(table)) {
      found.push({ table, rows: n["Actual Rows"] ?? 0, removedByFilter: n["Rows Removed by Filter"] ?? 0, loops: n["Actual Loops"] ?? 1, in: where });
    }
  });
  return found;
}

const ms = (v: number | undefined) => (v === undefined ? "" : v < 10 ? v.toFixed(2) : v.toFixed(0));

/** Rows a table scan read (returned, filtered out or rechecked away, over its loops); 0 for other nodes. */
export function scannedBy(n: PlanNode): number {
  if (!n["Relation Name"] || !n["Node Type"].endsWith("Scan")) return 0;
  const perLoop = (n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0) + (n["Rows Removed by Index Recheck"] ?? 0);
  return Math.round(perLoop * (n["Actual Loops"] ?? 1));
}

/** One node as text: type, what it reads, actual rows × loops, time, and what it threw away. */
export function describeNode(n: PlanNode): string {
  const type = `${n["Parallel Aware"] ? "Parallel " : ""}${n["Node Type"]}${n["Scan Direction"] === "Backward" ? " Backward" : ""}${n.Strategy && n["Node Type"] === "Aggregate" ? ` (${n.Strategy})` : ""}`;
  const what = [n["Index Name"] ? `using ${n["Index Name"]}` : "", n["Relation Name"] ? `on ${n["Relation Name"]}` : ""].filter(Boolean).join(" ");
  const parts = [`rows=${n["Actual Rows"] ?? "?"}${(n["Actual Loops"] ?? 1) > 1 ? `×${n["Actual Loops"]}` : ""}`, `${ms(n["Actual Total Time"])}ms`];
  if (n["Rows Removed by Filter"]) parts.push(`filtered=${n["Rows Removed by Filter"]}`);
  if (n["Heap Fetches"]) parts.push(`heap=${n["Heap Fetches"]}`);
  if (n["Sort Method"]) parts.push(`${n["Sort Method"]} ${n["Sort Space Used"] ?? ""}kB ${n["Sort Space Type"] ?? ""}`.trim());
  if ((n["Hash Batches"] ?? 1) > 1) parts.push(`batches=${n["Hash Batches"]}`);
  const cond = n["Index Cond"];
  if (cond) parts.push(`cond: ${cond.length > 70 ? `${cond.slice(0, 67)}...` : cond}`);
  const sub = n["Subplan Name"] ? `[${n["Subplan Name"]}] ` : "";
  return `${sub}${type}${what ? ` ${what}` : ""} (${parts.join(" ")})`;
}

/** The plan as indented lines; after `maxNodes` the rest is counted, not shown. */
export function summarize(plan: Explained, maxNodes = 40, maxHot = 10): PlanSummary {
  const nodes: string[] = [];
  const hot: string[] = [];
  const total = plan.Plan["Actual Total Time"] ?? 0;
  let hidden = 0;
  let scannedRows = 0;
  walk(plan.Plan, (n, depth) => {
    scannedRows += scannedBy(n);
    const line = `${"  ".repeat(depth)}${describeNode(n)}`;
    if (nodes.length < maxNodes) nodes.push(line);
    else hidden++;
    const spent = (n["Actual Total Time"] ?? 0) * (n["Actual Loops"] ?? 1);
    const watched = (WATCHED_TABLES as readonly string[]).includes(n["Relation Name"] ?? "");
    if (hot.length < maxHot && (spent >= total / 10 || watched)) hot.push(line);
  });
  if (hidden) nodes.push(`… ${hidden} more node(s)`);
  return {
    executionMs: plan["Execution Time"] ?? 0,
    planningMs: plan["Planning Time"] ?? 0,
    sharedHitBlocks: plan.Plan["Shared Hit Blocks"] ?? 0,
    sharedReadBlocks: plan.Plan["Shared Read Blocks"] ?? 0,
    scannedRows,
    nodes,
    hot,
  };
}

/** A request's statements as one summary: times and buffers added up, each statement's tree under a header. */
export function summarizeAll(plans: readonly Explained[], maxNodes = 40, maxHot = 10): PlanSummary {
  if (plans.length === 1) return summarize(plans[0]!, maxNodes, maxHot);
  const parts = plans.map((p) => summarize(p, maxNodes, maxHot));
  const sum = (f: (s: PlanSummary) => number) => Math.round(parts.reduce((a, s) => a + f(s), 0) * 1000) / 1000;
  return {
    executionMs: sum((s) => s.executionMs),
    planningMs: sum((s) => s.planningMs),
    sharedHitBlocks: sum((s) => s.sharedHitBlocks),
    sharedReadBlocks: sum((s) => s.sharedReadBlocks),
    scannedRows: sum((s) => s.scannedRows),
    nodes: parts.flatMap((s, i) => [`[statement ${i + 1}: exec ${ms(s.executionMs)} ms]`, ...s.nodes]),
    hot: parts.flatMap((s, i) => [`[statement ${i + 1}: exec ${ms(s.executionMs)} ms]`, ...s.hot]),
  };
}
