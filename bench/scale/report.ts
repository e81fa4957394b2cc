import type { MeasureResult, OutputTiming, Timing } from "./measure";
import type { PlanSummary, SeqScan } from "./plan";

/** One hot item across the stores, as bench/results/scale.json keeps it. */
export interface ItemReport {
  name: string;
  from: string;
  scope: "store" | "global";
  big?: Timing & { rows: number };
  small?: Timing & { rows: number };
  demo?: Timing;
  global?: Timing & { rows: number };
  ratio?: { bigToDemo?: number; smallToDemo?: number; bigToSmall?: number };
  /**
   * Bulk work (its output grows with the store): the output rows and ms per row in each store, and big over
   * demo per row. Such an item is judged per row: its whole-request ratio is the store's size.
   */
  output?: { unit: string; big?: OutputTiming; small?: OutputTiming; demo?: OutputTiming; perRowBigToDemo?: number };
  plan: Record<string, PlanSummary>;
  seqScans: (SeqScan & { store: string })[];
}

const ratio = (a: number, b: number) => Math.round((a / Math.max(b, 0.001)) * 100) / 100;

export function groupResults(results: readonly MeasureResult[], sources: Record<string, string>): ItemReport[] {
  const byName = new Map<string, MeasureResult[]>();
  for (const r of results) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  return [...byName.entries()].map(([name, rs]) => {
    const at = (label: string) => rs.find((r) => r.label === label);
    const big = at("big");
    const small = at("small");
    const global = at("global");
    const demo = big?.reference?.timing ?? small?.reference?.timing;
    const demoOutput = big?.reference?.output ?? small?.reference?.output;
    const unit = big?.output?.unit ?? small?.output?.unit;
    const perRow = (o: OutputTiming | undefined) => o?.msPerRow ?? undefined;
    const bigPerRow = perRow(big?.output);
    const demoPerRow = perRow(demoOutput);
    const plan: Record<string, PlanSummary> = {};
    for (const r of rs) {
      plan[r.label] = r.plan;
      if (r.bodyPlan) plan[`${r.label} (function body)`] = r.bodyPlan;
    }
    return {
      name, from: sources[name] ?? "", scope: global ? "global" : "store",
      ...(big ? { big: { ...big.timing, rows: big.rows } } : {}),
      ...(small ? { small: { ...small.timing, rows: small.rows } } : {}),
      ...(demo ? { demo } : {}),
      ...(global ? { global: { ...global.timing, rows: global.rows } } : {}),
      ...(big && small && demo
        ? {
            // Each store's ratio is of its own runs, interleaved with the demo store's (measure.ts).
            ratio: {
              bigToDemo: big.ratio ?? ratio(big.timing.p50, demo.p50),
              smallToDemo: small.ratio ?? ratio(small.timing.p50, demo.p50),
              bigToSmall: ratio(big.timing.p50, small.timing.p50),
            },
          }
        : {}),
      ...(unit
        ? {
            output: {
              unit,
              ...(big?.output ? { big: { rows: big.output.rows, msPerRow: big.output.msPerRow } } : {}),
              ...(small?.output ? { small: { rows: small.output.rows, msPerRow: small.output.msPerRow } } : {}),
              ...(demoOutput ? { demo: demoOutput } : {}),
              ...(bigPerRow !== undefined && demoPerRow ? { perRowBigToDemo: Math.round((bigPerRow / demoPerRow) * 100) / 100 } : {}),
            },
          }
        : {}),
      plan,
      seqScans: rs.flatMap((r) => r.seqScans.map((s) => ({ ...s, store: r.label }))),
    };
  });
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s);
const num = (v: number | undefined) => (v === undefined ? "-" : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0));

/** The table: p50/p95 per store in ms, the ratios, and the sequential scans found. */
export function table(reports: readonly ItemReport[]): string {
  const head = ["item", "big p50", "big p95", "small p50", "demo p50", "big/demo", "big/small", "seq scans (watched tables)"];
  const widths = [32, 9, 9, 10, 9, 9, 10, 0];
  const lines = [head.map((h, i) => (i === 0 || i === 7 ? pad(h, widths[i]!) : lpad(h, widths[i]!))).join(" ")];
  lines.push("-".repeat(110));
  for (const r of reports) {
    const big = r.big ?? r.global;
    const scans = [...new Set(r.seqScans.map((s) => `${s.table}${s.in.startsWith("statement") ? "" : " (body)"}@${s.store}`))].join(", ");
    lines.push([
      pad(r.name, widths[0]!), lpad(num(big?.p50), widths[1]!), lpad(num(big?.p95), widths[2]!), lpad(num(r.small?.p50), widths[3]!),
      lpad(num(r.demo?.p50), widths[4]!), lpad(num(r.ratio?.bigToDemo), widths[5]!), lpad(num(r.ratio?.bigToSmall), widths[6]!), scans || "none",
    ].join(" "));
  }
  return lines.join("\n");
}

/** Bulk items per output row: µs per row in each store and big over demo. */
export function perRowTable(reports: readonly ItemReport[]): string {
  const us = (o: OutputTiming | undefined) => (o?.msPerRow == null ? "-" : `${(o.msPerRow * 1000).toFixed(2)} µs × ${o.rows}`);
  return reports
    .filter((r) => r.output)
    .map((r) => `${pad(r.name, 32)} per ${r.output!.unit}: big ${us(r.output!.big)}, small ${us(r.output!.small)}, demo ${us(r.output!.demo)}; big/demo ${num(r.output!.perRowBigToDemo)}`)
    .join("\n");
}

/** The big store's plan (or the function body's, for a lookup): its hot path, a few lines per item. */
export function planDigest(reports: readonly ItemReport[]): string {
  return reports
    .map((r) => {
      const key = r.scope === "global" ? "global (function body)" : r.plan["big (function body)"] ? "big (function body)" : "big";
      const p = r.plan[key];
      if (!p) return `${r.name}: no plan`;
      const head = `${r.name} [${key}] exec ${num(p.executionMs)} ms, buffers hit ${p.sharedHitBlocks} read ${p.sharedReadBlocks}`;
      return [head, ...p.hot.map((n) => `    ${n}`)].join("\n");
    })
    .join("\n");
}
