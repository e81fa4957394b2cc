/**
 * npm run bench:scale — does the platform stay fast with 10,000 stores and a million orders?
 *
 *   1. a database of its own (`commerce_scale` in the local cluster, or SCALE_DATABASE_OWNER_URL), migrated
 *      and seeded with the demo data, then the scale fixture (fixture*.ts), built once and reused while
 *      the migrations and the fixture's source are unchanged (`--rebuild` forces a build);
 *   2. the hot statements of today's code (items.ts) for the big store and a small one, each compared with
 *      the demo store, plus the jobs' cross-store id lists; measured as app_user (measure.ts);
 *   3. bench/results/scale.json and a table; the run fails (exit 1) when a hot item's plan reads one of the
 *      history tables sequentially (`--no-fail` reports without failing).
 *
 * Options: --rebuild, --reuse (measure the database as it is, even when its fixture is stale: e.g. after
 * applying a migration by hand while trying it), --verify (check the fixture's invariants, verify.ts),
 * --fixture-only, --runs N (default 100), --only <text> (items whose name contains it; the report then goes to
 * .data/scale-partial.json, not bench/results/scale.json), --no-fail.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "../../scripts/lib/config";
import { openScaleDatabase } from "./db";
import { ensureFixture } from "./fixture";
import { hotItems, itemSources } from "./items";
import { measure, seqScanFailures } from "./measure";
import { groupResults, perRowTable, planDigest, table } from "./report";
import { compareStores } from "./stores";
import { verifyFixture } from "./verify";

const log = (m: string) => console.log(`[scale] ${m}`);

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(name);

async function main(): Promise<number> {
  const started = Date.now();
  const db = await openScaleDatabase(log);
  log(`Scale database: ${db.where}`);
  const fixture = await ensureFixture(db, { rebuild: flag("--rebuild"), reuse: flag("--reuse"), log });
  log(`Fixture: ${JSON.stringify(fixture.counts)}; ${(fixture.databaseBytes / 2 ** 30).toFixed(2)} GiB`);
  if (flag("--verify")) {
    const loader = await db.loader();
    try {
      const broken = Object.values(await verifyFixture(loader, log)).filter((n) => n !== 0).length;
      if (broken) throw new Error(`The fixture breaks ${broken} invariant(s): see above.`);
    } finally {
      await loader.end();
    }
  }
  if (flag("--fixture-only")) return 0;

  const stores = await compareStores(db.appUrl);
  log(`Compared: big ${stores.big.id}, small ${stores.small.slug} ${stores.small.id}, demo ${stores.demo.id}`);
  const now = new Date();
  const only = option("--only");
  const items = (await hotItems(stores, now)).filter((i) => !only || i.name.includes(only));
  const runs = Number(option("--runs") ?? 100);
  const results = await measure(items, { appUrl: db.appUrl, ownerUrl: db.ownerUrl, runs, warmup: 3, budgetMs: 20_000, log });
  const reports = groupResults(results, itemSources());
  const failures = seqScanFailures(results);

  // A partial run (--only) never replaces the report of a full one.
  const out = only ? path.join(ROOT, ".data", "scale-partial.json") : path.join(ROOT, "bench", "results", "scale.json");
  fs.writeFileSync(
    out,
    `${JSON.stringify(
      {
        benchmark: "scale",
        at: now.toISOString(),
        machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
        fixture,
        stores: { big: stores.big, small: stores.small, demo: stores.demo },
        runsPerItem: runs,
        note: "ms per request (its statements, as its unit sends them) as app_user inside a store transaction (set_config), bind parameters, parse and plan included; ratios of p50s; seqScans: sequential scans of the history tables in the EXPLAIN ANALYZE plans (of the statements, or of a privileged function's body). An item whose `from` says PENDING measures the statement as its owner is to change it.",
        items: reports,
        seqScanFailures: failures.map((f) => ({ name: f.name, store: f.label, tables: f.seqScans.map((s) => `${s.table} (${s.in})`) })),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\n${table(reports)}\n`);
  const perRow = perRowTable(reports);
  if (perRow) console.log(`${perRow}\n`);
  console.log(`${planDigest(reports)}\n`);
  log(`Written to ${path.relative(ROOT, out)} in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  if (failures.length === 0) return 0;
  const list = [...new Set(failures.map((f) => f.name))].join(", ");
  log(`Sequential scans of history tables in hot items: ${list}`);
  return flag("--no-fail") ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`[scale] ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
