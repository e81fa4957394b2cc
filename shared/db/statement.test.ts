import type { FieldDef, PoolClient } from "@neondatabase/serverless";
import { describe, expect, it } from "vitest";
import { testDb } from "../../test/harness";
import { CURRENT_STORE } from "./openings";
import { shopOrder, location } from "./schema";
import { declaredStatements, describeRow, orNull, pg, statement, type Declared } from "./statement";
import { sql } from "./steps";

/**
 * Every declared statement (docs/decisions/0026-one-sql-rule.md), described by Postgres and compared with
 * its declared row: the column names, their types, the schema column each is and whether it may be null.
 *
 * Postgres describes a statement without running it: Parse + Describe of the unnamed statement, the
 * messages the driver itself sends before it binds parameters, answer the result's columns (name, type
 * OID, and for a plain table column its table and attribute) from the parse analysis alone. So nothing is
 * written, no row has to exist, no store has to be set, and a write answers its RETURNING columns as
 * surely as a read. Running each statement in a transaction rolled back would need arguments that pass
 * every guard and foreign key of every write; `pg_prepared_statements.result_types` has the types but not
 * the names.
 */
const db = testDb();

// Every statement module (a statement declared elsewhere fails the source check below), loaded so
// their declarations are registered; taken before any test declares its own.
import.meta.glob(["../*/statements.ts", "../*/statements/*.ts", "../orders/routines.ts"], { eager: true });
const declared = declaredStatements();

/** Parse + Describe + Sync: the result's columns, or null for a statement that answers no rows. */
function describeText(client: PoolClient, text: string): Promise<FieldDef[] | null> {
  return new Promise((resolve, reject) => {
    let fields: FieldDef[] | null = null;
    const describing = {
      text,
      submit(connection: { parse(q: object): void; describe(q: object): void; sync(): void }) {
        connection.parse({ text, types: [] });
        connection.describe({ type: "S", name: "" });
        connection.sync();
      },
      handleRowDescription(message: { fields: FieldDef[] }) {
        fields = message.fields;
      },
      handleError: (e: unknown) => reject(e instanceof Error ? e : new Error(String(e))),
      handleReadyForQuery: () => resolve(fields),
      handleCommandComplete: () => undefined,
      handleEmptyQuery: () => undefined,
      handleDataRow: () => undefined,
      handlePortalSuspended: () => undefined,
    };
    void client.query(describing as never);
  });
}

interface Attribute {
  table: string;
  column: string;
  notNull: boolean;
}

/** What is wrong with a statement's declaration, for each of its examples (empty: it is as declared). */
async function drift(client: PoolClient, s: Declared<never[]>): Promise<string[]> {
  const problems: string[] = [];
  const declaredRow = describeRow(s.row);
  const { rows: oids } = await client.query<{ type: string; oid: number | null }>("select t as type, to_regtype(t)::oid as oid from unnest($1::text[]) t", [
    declaredRow.map((d) => d.type),
  ]);
  const oidOf = new Map(oids.map((r) => [r.type, r.oid === null ? null : Number(r.oid)]));
  for (const [i, args] of s.examples.entries()) {
    const at = `${s.statementName} (example ${i + 1})`;
    let fields: FieldDef[];
    try {
      fields = (await describeText(client, s.query(...args).sql)) ?? [];
    } catch (e) {
      problems.push(`${at}: Postgres refuses it: ${(e as Error).message}`);
      continue;
    }
    const attributes = await attributesOf(client, fields);
    const names = fields.map((f) => f.name);
    for (const name of new Set(names.filter((n, j) => names.indexOf(n) !== j))) problems.push(`${at}: answers two columns named ${name}`);
    for (const d of declaredRow) if (!names.includes(d.name)) problems.push(`${at}: declares ${d.name}, which it does not answer`);
    for (const f of fields) {
      const d = declaredRow.find((x) => x.name === f.name);
      if (!d) {
        problems.push(`${at}: answers ${f.name}, which its row does not declare`);
        continue;
      }
      const expected = oidOf.get(d.type);
      if (expected === null || expected === undefined) problems.push(`${at}: ${d.name} is declared as ${d.type}, which is no Postgres type`);
      else if (expected !== f.dataTypeID) problems.push(`${at}: ${d.name} is declared as ${d.type} (oid ${expected}), Postgres answers oid ${f.dataTypeID}`);
      const source = attributes.get(`${f.tableID}:${f.columnID}`);
      if (!source) continue;
      if (!d.source) problems.push(`${at}: ${d.name} is ${source.table}.${source.column}: declare it by its schema column`);
      else if (d.source.table !== source.table || d.source.column !== source.column) {
        problems.push(`${at}: ${d.name} is declared as ${d.source.table}.${d.source.column}, Postgres reads ${source.table}.${source.column}`);
      }
      if (!source.notNull && !d.nullable) problems.push(`${at}: ${d.name} is declared never null, but ${source.table}.${source.column} may be null`);
    }
  }
  return problems;
}

/** The table column each field is, when Postgres says it is one. */
async function attributesOf(client: PoolClient, fields: FieldDef[]): Promise<Map<string, Attribute>> {
  const plain = fields.filter((f) => f.tableID !== 0);
  if (plain.length === 0) return new Map();
  const { rows } = await client.query<{ key: string; table: string; column: string; not_null: boolean }>(
    `select a.attrelid || ':' || a.attnum as key, c.relname as table, a.attname as column, a.attnotnull as not_null
       from pg_attribute a join pg_class c on c.oid = a.attrelid
      where (a.attrelid, a.attnum) in (select * from unnest($1::oid[], $2::int2[]))`,
    [plain.map((f) => f.tableID), plain.map((f) => f.columnID)],
  );
  return new Map(rows.map((r) => [r.key, { table: r.table, column: r.column, notNull: r.not_null }]));
}

async function onClient<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

// Every source file of the Workers and the domain, as text (tests aside).
const sources = import.meta.glob(["../**/*.{ts,tsx}", "../../workers/**/*.{ts,tsx}", "!../**/*.test.{ts,tsx}", "!../../workers/**/*.test.{ts,tsx}"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** The statement modules (decision 0026): the db floor's own files, each area's statements, and the routines' one writer. */
function isStatementModule(path: string): boolean {
  return path.startsWith("./") || /\/statements(\.ts|\/[^/]+\.ts)$/.test(path) || path.endsWith("/orders/routines.ts");
}

/** Ways product code sends SQL text of its own, each with the words a failure shows. */
const SQL_TEXT: [string, RegExp][] = [
  ["imports raw() from db/steps", /import\s*(type\s*)?\{[^}]*\braw\b[^}]*\}\s*from\s*"[^"]*db\/steps"/],
  ["queries a client or the pool", /\$client\.query\(|\.pool\.query\(/],
  ["sends SQL text with Database.rows", /\bdb\.rows\b/],
  ["hands SQL text to a unit", /\bsql:\s*["'`]/],
  ["runs sql`…` with drizzle's execute", /\.execute\(\s*sql`/],
  ["declares a statement", /import\s*\{[^}]*\bstatement\b[^}]*\}\s*from\s*"[^"]*db\/statement"/],
];

function sqlOutsideModules(files: Record<string, string>): string[] {
  return Object.entries(files).flatMap(([path, text]) =>
    isStatementModule(path) ? [] : SQL_TEXT.filter(([, pattern]) => pattern.test(text)).map(([what]) => `${path} ${what}`),
  );
}

describe("declared statements", () => {
  it("no product file outside the statement modules writes SQL statements of its own", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(200);
    expect(sqlOutsideModules(sources)).toEqual([]);
  });

  it("the source check finds each way of writing SQL outside a module (it can fail)", () => {
    const found = sqlOutsideModules({
      "../orders/a.ts": 'import { raw, sql, type Q } from "../db/steps";',
      "../orders/b.ts": "await tx.$client.query(`update shop_order set note = $1`, [note]);",
      "../../workers/admin/c.ts": "await db.pool.query(\"delete from session where id_hash = $1\", [hash]);",
      "../procedures/d.ts": "const [row] = await db.rows<{ n: number }>(\"select 1 as n\");",
      "../storefront/e.ts": "await db.sendHttp([{ sql: \"select 1\", params: [], method: \"execute\" }], { readOnly: true });",
      "../jobs/f.ts": "return q.execute(sql`delete from api_activity`);",
      "../marketing/g.ts": 'import { pg, statement } from "../db/statement";',
      "../marketing/statements.ts": 'import { pg, statement } from "../db/statement";',
      "../orders/statements/locks.ts": 'import { raw } from "../../db/steps";',
      "./with-store.ts": "await tx.$client.query(`savepoint ${name}`);",
    });
    expect(found).toEqual([
      "../orders/a.ts imports raw() from db/steps",
      "../orders/b.ts queries a client or the pool",
      "../../workers/admin/c.ts queries a client or the pool",
      "../procedures/d.ts sends SQL text with Database.rows",
      "../storefront/e.ts hands SQL text to a unit",
      "../jobs/f.ts runs sql`…` with drizzle's execute",
      "../marketing/g.ts declares a statement",
    ]);
  });

  it("every statement of every statement module answers the row it declares", async () => {
    expect(declared.length).toBeGreaterThan(100);
    const problems = await onClient(async (client) => (await Promise.all(declared.map((s) => drift(client, s)))).flat());
    expect(problems).toEqual([]);
  });

  it("a declaration that drifts from what Postgres answers is caught", async () => {
    const id = "00000000-0000-4000-8000-000000000001";
    const right = statement("test.right", {
      row: { id: shopOrder.id, number: shopOrder.number, phone: shopOrder.phone, locationName: orNull(location.name), lines: pg.int4() },
      examples: [[CURRENT_STORE, id]],
      sql: (store: typeof CURRENT_STORE, orderId: string) =>
        sql`select o.id, o.number, o.phone, l.name as "locationName", (select count(*)::int from order_line where order_id = o.id) as lines
              from shop_order o left join location l on l.store_id = o.store_id and false where o.store_id = ${store} and o.id = ${orderId}`,
    });
    const wrong = [
      // a column of another type
      statement("test.wrongType", { row: { number: pg.text() }, examples: [[]], sql: () => sql`select number from shop_order` }),
      // a computed value of another type
      statement("test.wrongComputed", { row: { n: pg.int4() }, examples: [[]], sql: () => sql`select count(*) as n from shop_order` }),
      // a name the statement does not answer, and one it answers undeclared
      statement("test.wrongName", { row: { email: shopOrder.email }, examples: [[]], sql: () => sql`select email as "eMail" from shop_order` }),
      // another schema column of the same type
      statement("test.wrongColumn", { row: { email: shopOrder.phone }, examples: [[]], sql: () => sql`select email from shop_order` }),
      // a nullable column declared never null
      statement("test.wrongNull", { row: { phone: pg.text() }, examples: [[]], sql: () => sql`select phone from shop_order` }),
      // a table column declared as a computed value
      statement("test.notByColumn", { row: { phone: orNull(pg.text()) }, examples: [[]], sql: () => sql`select phone from shop_order` }),
      // SQL Postgres refuses
      statement("test.refused", { row: {}, examples: [[]], sql: () => sql`select no_such_column from shop_order` }),
    ];
    await onClient(async (client) => {
      expect(await drift(client, right as unknown as Declared<never[]>)).toEqual([]);
      const found = await Promise.all(wrong.map((s) => drift(client, s as unknown as Declared<never[]>)));
      expect(found).toEqual([
        ["test.wrongType (example 1): number is declared as text (oid 25), Postgres answers oid 23", "test.wrongType (example 1): number is shop_order.number: declare it by its schema column"],
        ["test.wrongComputed (example 1): n is declared as integer (oid 23), Postgres answers oid 20"],
        ["test.wrongName (example 1): declares email, which it does not answer", "test.wrongName (example 1): answers eMail, which its row does not declare"],
        ["test.wrongColumn (example 1): email is declared as shop_order.phone, Postgres reads shop_order.email"],
        ["test.wrongNull (example 1): phone is shop_order.phone: declare it by its schema column", "test.wrongNull (example 1): phone is declared never null, but shop_order.phone may be null"],
        ["test.notByColumn (example 1): phone is shop_order.phone: declare it by its schema column"],
        [expect.stringMatching(/^test\.refused \(example 1\): Postgres refuses it: column "no_such_column" does not exist/)],
      ]);
    });
  });
});
