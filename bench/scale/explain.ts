/**
 * npx tsx bench/scale/explain.ts <store slug> <procedure | "sql:<statement>"> [input JSON] [runs]
 *
 * One request against the scale database, as app_user in the store (as the bench measures it): a read
 * procedure's statements taken from its plan (items.ts planStatements), or one statement written out
 * (its bind parameters: the input JSON, an array). Prints each statement's time (min, p50 of `runs`, default
 * 10) and its EXPLAIN ANALYZE. "$SID" in the input stands for the store's id. For trying a change of a
 * statement or an index before it goes into the code or a migration; build the fixture first
 * (npm run bench:scale -- --fixture-only).
 *
 *   npx tsx bench/scale/explain.ts big customers.list '{"query":"sharma"}'
 *   npx tsx bench/scale/explain.ts big "sql:select count(*) from shop_order where store_id = \$1" '["$SID"]'
 */
import pg from "pg";
import { localUrl } from "../../scripts/lib/config";
import { SCALE_STACK } from "./db";
import { planStatements } from "./items";
import type { Statement } from "./measure";

async function main(): Promise<void> {
  const [slug, what, inputJson = "{}", runsArg = "10"] = process.argv.slice(2);
  if (!slug || !what) throw new Error("usage: explain.ts <store slug> <procedure | sql:…> [input JSON] [runs]");
  const runs = Math.max(1, Number(runsArg));
  const app = new pg.Client({ connectionString: process.env.SCALE_DATABASE_URL ?? localUrl("app", SCALE_STACK) });
  await app.connect();
  try {
    const sid = (await app.query<{ id: string | null }>("select privileged.store_id_by_slug($1) as id", [slug])).rows[0]?.id;
    if (!sid) throw new Error(`No store ${slug}`);
    const input: unknown = JSON.parse(inputJson.replaceAll("$SID", sid));
    const statements: Statement[] = what.startsWith("sql:") ? [{ sql: what.slice(4), params: Array.isArray(input) ? input : [] }] : await planStatements(what, input);
    for (const s of statements) {
      const times: number[] = [];
      let plan = "";
      for (let i = 0; i < runs; i++) {
        await app.query("begin read only");
        try {
          await app.query("select set_config('app.store_id', $1, true), set_config('app.contact', 'on', true)", [sid]);
          const t0 = performance.now();
          await app.query(s.sql, [...s.params]);
          times.push(performance.now() - t0);
          if (i === runs - 1) {
            const r = await app.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers, costs off) ${s.sql}`, [...s.params]);
            plan = r.rows.map((row) => row["QUERY PLAN"]).join("\n");
          }
        } finally {
          await app.query("rollback");
        }
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
      console.log(`--- ${s.sql.replace(/\s+/g, " ").slice(0, 160)}\n    params ${JSON.stringify(s.params)}\n    ms: min ${at(0)}, p50 ${at(0.5)} (${runs} runs)\n${plan}\n`);
    }
  } finally {
    await app.end();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
