/**
 * npx tsx bench/search.ts — storefront search in a 50,000-product catalogue against the seeded demo store
 * (issue 23 item 5; docs/decisions/0035-storefront-search.md).
 *
 *   1. a database of its own (`commerce_search_bench` in the local cluster, SEARCH_DB_NAME to change it),
 *      migrated and seeded with the demo data, then one store `search-big` given 50,000 active products
 *      (titles and descriptions from a shop's words, three variants each with SKUs, stock in one location,
 *      one product in eight sold out); built once and kept while the migrations and this file are unchanged;
 *   2. the storefront's search statement, as the search page sends it (the code's own, one round trip), for
 *      a few queries in the big store and the same queries in the demo store, interleaved, as app_user
 *      under row-level security (bench/scale/measure.ts);
 *   3. bench/results/search.json: p50s and their ratios, the plans, sequential scans; it fails when a
 *      search does not read the postings by index (a one-word search by the ranking's index).
 *
 * Options: --rebuild, --runs N (default 60).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { collector } from "#shared/db/steps";
import { searchPlan, searchWords, type SearchQuery } from "#shared/storefront/search";
import { DEV_STACK, localUrl, ROOT, type LocalStack } from "../scripts/lib/config";
import { migrate, readMigrations } from "../scripts/lib/migrate";
import { dropDatabase, ensureLocalPostgres, superuserClient } from "../scripts/lib/pg-cluster";
import { seedDemo } from "../scripts/lib/seed";
import { connect } from "./scale/db";
import { measure, type MeasureItem, type Statement } from "./scale/measure";

const log = (m: string) => console.log(`[search] ${m}`);
const STACK: LocalStack = { ...DEV_STACK, database: process.env.SEARCH_DB_NAME ?? "commerce_search_bench" };
const PRODUCTS = 50_000;

function fixtureHash(): string {
  const h = createHash("sha256");
  for (const m of readMigrations()) h.update(`${m.version}:${m.checksum}\n`);
  h.update(fs.readFileSync(new URL(import.meta.url)));
  return h.digest("hex").slice(0, 16);
}

const words = (list: string) => `(array[${list.split(" ").map((w) => `'${w}'`).join(", ")}])`;
const ADJ = words("classic royal festive everyday handwoven embroidered printed pleated straight flared relaxed slim vintage modern bridal casual");
const MATERIAL = words("cotton silk linen georgette chiffon khadi rayon muslin velvet crepe wool organza chanderi tussar denim jute");
const ITEM = words("kurta saree dupatta lehenga anarkali stole shawl palazzo churidar blouse sherwani nehru-jacket dhoti tunic kaftan scarf");
const PHRASE = words("hand-finished seams|soft drape|breathable weave|machine wash cold|dry clean only|block-printed motifs|zari border|mirror work|temple border|a gift for the season".replace(/ /g, "_").replace(/\|/g, " "));

/**
 * The big store: its owner-free rows, set-based, triggers off for the load; then its search rows, by migration
 * 0043's refresh, whose insert trigger writes their postings and vocabulary in one pass (migration 0045).
 */
const FIXTURE = `
set session_replication_role = replica;
insert into store (id, slug, name, currency) values (gen_random_uuid(), 'search-big', 'Search Big', 'INR');
create temporary table big as select id from store where slug = 'search-big';
insert into location (store_id, name) select id, 'Warehouse' from big;
insert into product (store_id, title, handle, description, status, vendor, created_at)
select b.id,
  initcap(${ADJ}[1 + n % 16]) || ' ' || initcap(${MATERIAL}[1 + (n / 16) % 16]) || ' ' || initcap(replace(${ITEM}[1 + (n / 256) % 16], '-', ' ')),
  'p-' || n,
  'A ' || ${ADJ}[1 + (n / 7) % 16] || ' piece. ' || replace(${PHRASE}[1 + n % 10], '_', ' ') || ', ' || replace(${PHRASE}[1 + (n / 10) % 10], '_', ' ') || '.',
  'active', 'Looms ' || (n % 97), now() - interval '1 minute' * n
from big b, generate_series(1, ${PRODUCTS}) n;
insert into product_variant (store_id, product_id, title, sku, price_minor, position)
select p.store_id, p.id, s.t, 'SKU-' || p.handle || '-' || s.t, 49900 + (hashtext(p.handle) & 1023) * 1000, s.i
from product p join big b on b.id = p.store_id, (values (0, 'S'), (1, 'M'), (2, 'L')) s(i, t);
insert into inventory_level (store_id, variant_id, location_id, on_hand)
select v.store_id, v.id, l.id, case when hashtext(v.product_id::text) % 8 = 0 then 0 else 5 end
from product_variant v join big b on b.id = v.store_id join location l on l.store_id = v.store_id;
reset session_replication_role;
select public.product_search_refresh(b.id, array(select p.id from product p where p.store_id = b.id)) from big b;`;

async function ensureDatabase(): Promise<{ ownerUrl: string; appUrl: string }> {
  const local = await ensureLocalPostgres(STACK, log);
  const ownerUrl = localUrl("owner", STACK);
  const hash = fixtureHash();
  const su = superuserClient(local.paths, STACK, STACK.database);
  await su.connect();
  const built = await su.query<{ hash: string }>("select obj_description('public.product_search'::regclass) as hash").catch(() => ({ rows: [] as { hash: string }[] }));
  await su.end();
  if (built.rows[0]?.hash === hash && !process.argv.includes("--rebuild")) {
    log(`Reusing ${STACK.database} (fixture ${hash}).`);
    return { ownerUrl, appUrl: localUrl("app", STACK) };
  }
  const started = Date.now();
  await dropDatabase(local.paths, STACK);
  await ensureLocalPostgres(STACK, () => {});
  await migrate(ownerUrl);
  await seedDemo(ownerUrl, () => {});
  const loader = superuserClient(local.paths, STACK, STACK.database);
  await loader.connect();
  try {
    await loader.query(FIXTURE);
    await loader.query("vacuum analyze"); // the postings' visibility map: their index-only scans
    await loader.query(`comment on table product_search is '${hash}'`);
  } finally {
    await loader.end();
  }
  log(`Built ${STACK.database} with ${PRODUCTS} products in search-big: ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  return { ownerUrl, appUrl: localUrl("app", STACK) };
}

/** The search page's statements for a query, as its unit sends them (the code's own). */
async function statementsOf(query: SearchQuery): Promise<Statement[]> {
  const { q, run } = collector();
  const built = searchPlan(q, query);
  const sent: Statement[] = [];
  await run(built.steps, (statements) => {
    sent.push(...statements.map((s) => ({ sql: s.sql, params: s.params })));
    return Promise.resolve(statements.map(() => []));
  }).catch(() => undefined);
  if (sent.length !== 1) throw new Error(`${query.text}: expected one statement, the plan sent ${sent.length}`);
  return sent;
}

/** The plans of a statement and of the functions it calls (auto_explain's nested statements), run as app_user in the store. */
async function nestedPlans(storeId: string, statement: Statement): Promise<string> {
  const local = await ensureLocalPostgres(STACK, () => {});
  const su = superuserClient(local.paths, STACK, STACK.database);
  await su.connect();
  const plans: string[] = [];
  su.on("notice", (n) => plans.push(n.message ?? ""));
  try {
    await su.query("load 'auto_explain'");
    await su.query("set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set client_min_messages = log");
    await su.query("begin read only; set local role app_user");
    await su.query("select set_config('app.store_id', $1, true)", [storeId]);
    await su.query(statement.sql, [...statement.params]);
    await su.query("rollback");
  } finally {
    await su.end();
  }
  return plans.join("\n");
}

const QUERIES: { name: string; query: SearchQuery }[] = [
  { name: "typo (kurtha)", query: { text: "kurtha", page: 1, pageSize: 24 } },
  { name: "two words (saree silk)", query: { text: "saree silk", page: 1, pageSize: 24 } },
  { name: "rare word (sherwani velvet bridal)", query: { text: "sherwani velvet bridal", page: 1, pageSize: 24 } },
  { name: "two common words (cotton piece)", query: { text: "cotton piece", page: 1, pageSize: 24 } },
  { name: "filters (kurta, in stock, ₹500-₹1,000)", query: { text: "kurta", page: 1, pageSize: 24, inStockOnly: true, minPrice: 50000, maxPrice: 100000 } },
  { name: "suggest (kur)", query: { text: "kur", page: 1, pageSize: 6 } },
  { name: "page 5 (kurta)", query: { text: "kurta", page: 5, pageSize: 24 } },
];

async function main(): Promise<void> {
  const { ownerUrl, appUrl } = await ensureDatabase();
  const c = await connect(appUrl);
  const id = async (slug: string) => (await c.query<{ id: string }>("select privileged.store_id_by_slug($1) as id", [slug])).rows[0]!.id;
  const big = await id("search-big");
  const demo = await id("demo");
  await c.end();
  const runs = process.argv.includes("--runs") ? Number(process.argv[process.argv.indexOf("--runs") + 1]) : 60;
  const items: MeasureItem[] = [];
  for (const { name, query } of QUERIES) {
    const statements = await statementsOf(query);
    items.push({ name, label: "big", storeId: big, statements, reference: { storeId: demo, statements } });
  }
  const results = await measure(items, { appUrl, ownerUrl, runs, warmup: 5, budgetMs: 15_000, log });
  // A one-word page reads its postings in the ranking's order (equalities under RLS); several words are
  // intersected by the word keys' GIN index inside the privileged function (its plan, through auto_explain).
  const missed: string[] = [];
  for (const [i, { name, query }] of QUERIES.entries()) {
    const nodes = results.find((r) => r.name === name)?.plan.nodes ?? [];
    const oneWord = searchWords(query.text).length === 1;
    const plan = oneWord ? nodes.join("\n") : await nestedPlans(big, items[i]!.statements[0]!);
    const index = oneWord ? "search_posting_rank_idx" : "product_search_word_keys_idx";
    if (!plan.includes(index) || /Seq Scan on (search_posting|search_word|product_search)/.test(plan)) missed.push(name);
  }
  const out = path.join(ROOT, "bench", "results", "search.json");
  fs.writeFileSync(
    out,
    `${JSON.stringify(
      {
        benchmark: "search",
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, node: process.version },
        fixture: { bigStoreProducts: PRODUCTS, variantsPerProduct: 3 },
        note: "ms per search page (its one statement, as the unit sends it) as app_user in a store transaction; big: search-big (50,000 products), reference: the seeded demo store; ratio = p50 big / p50 demo",
        items: results.map((r) => ({ name: r.name, rows: r.rows, p50: r.timing.p50, p95: r.timing.p95, demoP50: r.reference?.timing.p50, ratio: r.ratio, plan: r.plan, seqScans: r.seqScans })),
      },
      null,
      2,
    )}\n`,
  );
  log(`Wrote ${path.relative(ROOT, out)}.`);
  if (missed.length) throw new Error(`The search did not read its index for: ${missed.join(", ")}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
