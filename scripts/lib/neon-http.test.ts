import { randomUUID } from "node:crypto";
import { Client, neon, neonConfig, NeonDbError, Pool } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebSocket } from "ws";
import { startWsProxy, type RunningProxy } from "./ws-proxy";

// The Workers' driver, in Node, over its HTTP path (neon(), sql.transaction()) and its WebSocket path,
// against the test database through a proxy of this file's own.
let proxy: RunningProxy;
beforeAll(async () => {
  proxy = await startWsProxy(0, { captureStatements: true });
  neonConfig.fetchEndpoint = () => `http://127.0.0.1:${proxy.port}/sql`;
  neonConfig.webSocketConstructor = WebSocket;
  neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxy.port}/v2?address=${host}:${port}`;
  Object.assign(neonConfig, { useSecureWebSocket: false, pipelineTLS: false, forceDisablePgSSL: true, pipelineConnect: false });
});
afterAll(() => proxy.close());

const databaseUrl = () => inject("databaseUrl");
const withAppName = (name: string) => `${databaseUrl()}?application_name=${encodeURIComponent(name)}`;
const failure = (p: Promise<unknown>) => p.then(() => new Error("no error"), (e: unknown) => e);

/** POST /sql as the driver sends it, for what the driver cannot send. */
function post(body: string, headers: Record<string, string> = {}) {
  return fetch(`http://127.0.0.1:${proxy.port}/sql`, {
    method: "POST",
    body,
    headers: { "Neon-Connection-String": databaseUrl(), "Neon-Raw-Text-Output": "true", "Neon-Array-Mode": "true", ...headers },
  });
}

describe("POST /sql speaks Neon's protocol to the driver", () => {
  it("answers one query in the shape the driver parses: raw text by column, types by OID", async () => {
    const res = await post(JSON.stringify({ query: "select $1::int4 as one, null::text as nothing, 'x' as x", params: ["1"] }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      command: "SELECT",
      rowCount: 1,
      rows: [["1", null, "x"]],
      fields: [
        { name: "one", tableID: 0, columnID: 0, dataTypeID: 23, dataTypeSize: 4, dataTypeModifier: -1, format: "text" },
        { name: "nothing", tableID: 0, columnID: 0, dataTypeID: 25, dataTypeSize: -1, dataTypeModifier: -1, format: "text" },
        { name: "x", tableID: 0, columnID: 0, dataTypeID: 25, dataTypeSize: -1, dataTypeModifier: -1, format: "text" },
      ],
      rowAsArray: true,
    });

    const objects = await post(JSON.stringify({ query: "select 1 as a, null as b", params: [] }), { "Neon-Array-Mode": "false" });
    expect(await objects.json()).toMatchObject({ rows: [{ a: "1", b: null }], rowAsArray: false });

    const sql = neon(databaseUrl());
    expect(await sql`select ${41}::int + 1 as n, current_user as who`).toEqual([{ n: 42, who: "app_user" }]);
    const full = await sql.query("select 1 as a, 2 as a", [], { fullResults: true, arrayMode: true });
    expect(full).toMatchObject({ command: "SELECT", rowCount: 1, rows: [[1, 2]] });
  });

  it("runs a batch in one transaction: a failing statement undoes the ones before, and its error reaches NeonDbError", async () => {
    const sql = neon(databaseUrl());
    const [{ store }] = (await sql`select privileged.store_id_by_slug('demo') as store`) as [{ store: string }];
    const name = `rollback-probe-${randomUUID()}`;
    const insert = () =>
      sql`with s as (select set_config('app.store_id', ${store}, true) as id) insert into location (store_id, name) select id::uuid, ${name} from s returning id`;
    const error = await failure(sql.transaction([insert(), insert()]));
    expect(error).toBeInstanceOf(NeonDbError);
    expect(error).toMatchObject({ code: "23505", severity: "ERROR", schema: "public", table: "location", constraint: "location_store_id_name_key" });

    const [, rows] = await sql.transaction([sql`select set_config('app.store_id', ${store}, true)`, sql`select count(*)::int as n from location where name = ${name}`]);
    expect(rows).toEqual([{ n: 0 }]);

    const syntax = await failure(sql`select 1 +`);
    expect(syntax).toMatchObject({ name: "NeonDbError", code: "42601", position: "11", message: expect.stringMatching(/syntax error/) });
    const raised = await failure(sql`do $$ begin raise exception 'boom' using detail = 'the detail', hint = 'the hint', errcode = 'P0001'; end $$`);
    expect(raised).toMatchObject({ message: "boom", code: "P0001", detail: "the detail", hint: "the hint", where: expect.stringMatching(/PL\/pgSQL/) });
    expect(raised).toMatchObject({ file: expect.any(String), line: expect.any(String), routine: expect.any(String) });
  });

  it("opens the batch as asked: isolation level, read only (a write is refused with 25006), deferrable", async () => {
    const sql = neon(databaseUrl());
    const level = async (isolationLevel?: "ReadCommitted" | "RepeatableRead" | "Serializable") =>
      (await sql.transaction([sql`show transaction_isolation`], isolationLevel ? { isolationLevel } : {}))[0];
    expect(await level()).toEqual([{ transaction_isolation: "read committed" }]);
    expect(await level("RepeatableRead")).toEqual([{ transaction_isolation: "repeatable read" }]);
    expect(await level("Serializable")).toEqual([{ transaction_isolation: "serializable" }]);

    const options = { isolationLevel: "Serializable", readOnly: true, deferrable: true } as const;
    const [flags] = await sql.transaction([sql`select current_setting('transaction_read_only') as ro, current_setting('transaction_deferrable') as d`], options);
    expect(flags).toEqual([{ ro: "on", d: "on" }]);
    const write = await failure(sql.transaction([sql`create temp table read_only_probe (x int)`], { readOnly: true }));
    expect(write).toMatchObject({ name: "NeonDbError", code: "25006" });
  });

  it("keeps set_config(..., true) within its batch, and serves one batch after another on the same connection", async () => {
    const sql = neon(databaseUrl());
    await sql`select 1`;
    const opened = proxy.stats().opened;
    const [, seen] = await sql.transaction([sql`select set_config('app.probe', 'seen', true)`, sql`select current_setting('app.probe', true) as v`]);
    expect(seen).toEqual([{ v: "seen" }]);
    const [after] = await sql.transaction([sql`select current_setting('app.probe', true) as v`]);
    expect(after).not.toEqual([{ v: "seen" }]);
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as i`;
    expect(proxy.stats().opened).toBe(opened); // no connection setup per query
  });

  it("lets Postgres judge each password; refuses a target that is not loopback and requests it cannot read, with 400", async () => {
    const wrong = new URL(databaseUrl());
    wrong.password = "wrong";
    await neon(databaseUrl())`select 1`; // a logged-in connection of the right password waits in the pool
    expect(await failure(neon(wrong.toString())`select 1`)).toMatchObject({ name: "NeonDbError", code: "28P01" });

    const remote = neon("postgresql://app_user:secret@db.example.com:5432/commerce");
    expect(await failure(remote`select 1`)).toMatchObject({ name: "NeonDbError", code: "28000", message: expect.stringMatching(/loopback/) });

    const bad = async (res: Response) => ({ status: res.status, body: (await res.json()) as { message: string; code: string } });
    expect(await bad(await post("{not json"))).toMatchObject({ status: 400, body: { code: "08P01", message: expect.stringMatching(/not JSON/) } });
    expect(await bad(await post(JSON.stringify({ params: [] })))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/"query"/) } });
    expect(await bad(await post(JSON.stringify({ query: "select $1", params: [{ a: 1 }] })))).toMatchObject({ status: 400, body: { code: "08P01" } });
    expect(await bad(await post(JSON.stringify({ query: "select 1" }), { "Neon-Connection-String": "" }))).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/Neon-Connection-String/) },
    });
    const level = await post(JSON.stringify({ queries: [] }), { "Neon-Batch-Isolation-Level": "Snapshot" });
    expect(await bad(level)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/Isolation-Level/) } });
    expect((await fetch(`http://127.0.0.1:${proxy.port}/sql`)).status).toBe(405);
  });
});

describe("round trips per trace", () => {
  const zeros = { turns: 0, wsTurns: 0, httpQueries: 0, connections: 0 };
  const base = () => `http://127.0.0.1:${proxy.port}`;
  const get = async (path: string): Promise<unknown> => (await fetch(`${base()}${path}`)).json();

  it("counts each trace's HTTP queries, WebSocket turns and connections, the answer and the after phase apart", async () => {
    proxy.resetStats();
    const [one, two] = [`trace-${randomUUID()}`, `trace-${randomUUID()}`];
    const answer = (id: string) => neon(withAppName(`t:${id}`));
    const after = (id: string) => neon(withAppName(`t:${id}:after`));
    await answer(one)`select 1`;
    await answer(one).transaction((sql) => [sql`select ${"a"}::text`, sql`select 2`]);
    await after(one)`select 3`;
    const client = new Client(withAppName(`t:${one}`));
    await client.connect();
    await client.query("select 1");
    await client.end(); // startup, password, the query, Terminate
    await answer(two)`select 1`;
    await after(two)`select 1`;
    await after(two)`select 2`;
    await neon(databaseUrl())`select 1`; // no trace

    expect(proxy.trace(one)).toEqual({ traceId: one, turns: 6, wsTurns: 4, httpQueries: 2, connections: 1, after: { ...zeros, turns: 1, httpQueries: 1 } });
    expect(proxy.trace(two)).toEqual({ traceId: two, ...zeros, turns: 1, httpQueries: 1, after: { ...zeros, turns: 2, httpQueries: 2 } });
    expect(proxy.stats()).toMatchObject({ turns: 11, wsTurns: 4, httpQueries: 7 });
    expect(await get(`/stats/trace/${one}`)).toEqual(proxy.trace(one));
    expect(await get("/stats/trace/never-seen")).toEqual({ traceId: "never-seen", ...zeros, after: zeros });
    expect((await fetch(`${base()}/stats/trace/short`)).status).toBe(400);

    expect(await get(`/stats/trace/${one}?statements=1`)).toMatchObject({
      statements: [
        { query: "select 1", params: [], batchIndex: null, phase: "answer" },
        { query: "select $1::text", params: ["a"], batchIndex: 0, phase: "answer" },
        { query: "select 2", params: [], batchIndex: 1, phase: "answer" },
        { query: "select 3", params: [], batchIndex: null, phase: "after" },
      ],
    });
    expect(await fetch(`${base()}/stats/reset`, { method: "POST" })).toMatchObject({ status: 204 });
    expect(proxy.trace(one)).toEqual({ traceId: one, ...zeros, after: zeros });
  });

  it("keeps at most 200 statements a trace", async () => {
    const id = `trace-${randomUUID()}`;
    const sql = neon(withAppName(`t:${id}`));
    await sql.transaction((tx) => Array.from({ length: 201 }, (_, i) => tx`select ${i}::int`));
    const { statements } = proxy.trace(id, { statements: true });
    expect(statements).toHaveLength(200);
    expect(statements?.at(-1)).toMatchObject({ batchIndex: 199, params: ["199"] });
  });
});

/** A literal or two for each column type; a new type in the schema fails the test below until it has one here. */
const SAMPLES: Record<string, string[]> = {
  uuid: ["'0b5c3c9e-8f0e-4c1a-9d7e-2a3b4c5d6e7f'::uuid"],
  text: ["'plain'", `'ünïcødé ✓ "quoted" \\ back, comma'`, "''"],
  int2: ["(-32768)::int2"],
  int4: ["2147483647::int4", "(-1)::int4"],
  int8: ["9007199254740993::int8", "(-9223372036854775808)::int8"],
  numeric: ["'12345678901234567890.000000000123'::numeric", "'NaN'::numeric"],
  float8: ["'1.5e300'::float8", "'-Infinity'::float8"],
  bool: ["true", "false"],
  bpchar: ["'INR'::char(3)", "'a'::char(3)"],
  date: ["'2024-02-29'::date"],
  timestamptz: ["'2024-02-29 23:59:59.123+05:30'::timestamptz", "'1970-01-01 00:00:00+00'::timestamptz"],
  timestamp: ["'2024-02-29 23:59:59.123'::timestamp"],
  interval: ["'1 day 02:03:04'::interval"],
  jsonb: [`'{"a":[1,2.5,{"b":null}],"ü":"x \\"q\\"","big":12345678901234567890}'::jsonb`, "'[]'::jsonb"],
  json: [`'{"a": [1, 2], "b": "c"}'::json`],
  bytea: ["'\\x00ff10'::bytea"],
  _text: [`array['a', 'b c', null, '"q"', '', 'NULL', 'x,y']::text[]`, "'{}'::text[]"],
  _uuid: ["array['0b5c3c9e-8f0e-4c1a-9d7e-2a3b4c5d6e7f']::uuid[]"],
  _int4: ["array[1, null, 3]::int4[]"],
  citext: ["'MiXeD'::citext"],
};
/** Types checked whether or not the schema uses them yet. */
const ALWAYS = ["int2", "numeric", "float8", "timestamp", "interval", "json", "bytea", "_uuid", "_int4"];

/** What the driver must give for some literals, so both paths cannot agree on a wrong value. */
const KNOWN: [string, unknown][] = [
  ["9007199254740993::int8", "9007199254740993"],
  ["'12345678901234567890.000000000123'::numeric", "12345678901234567890.000000000123"],
  [`array['a', 'b c', null, '"q"', '', 'NULL', 'x,y']::text[]`, ["a", "b c", null, '"q"', "", "NULL", "x,y"]],
  ["'\\x00ff10'::bytea", Buffer.from([0, 255, 16])],
  ["'2024-02-29 23:59:59.123+05:30'::timestamptz", new Date("2024-02-29T18:29:59.123Z")],
  ["'a'::char(3)", "a  "],
];

describe("column types round-trip through the driver's HTTP path unchanged", () => {
  it("gives for every type the schema uses what the driver's WebSocket Pool gives, and takes it back as a parameter", async () => {
    const sql = neon(databaseUrl());
    const used = (await sql`
      select distinct c.udt_name as name, t.typtype as kind
      from information_schema.columns c
      join pg_type t on t.typname = c.udt_name and t.typnamespace = (select oid from pg_namespace where nspname = c.udt_schema)
      where c.table_schema = 'public'`) as { name: string; kind: string }[];
    expect(used.map((u) => u.name)).toEqual(expect.arrayContaining(["uuid", "text", "int4", "int8", "bool", "timestamptz", "date", "jsonb", "_text"]));
    const enums = (await sql`select t.typname as name, array_agg(e.enumlabel order by e.enumsortorder) as labels
      from pg_enum e join pg_type t on t.oid = e.enumtypid group by t.typname`) as { name: string; labels: string[] }[];
    const samples = new Map<string, string[]>();
    for (const { name, kind } of used) {
      const labels = enums.find((e) => e.name === name)?.labels;
      const literals = kind === "e" && labels ? labels.map((l) => `'${l.replaceAll("'", "''")}'::"${name}"`) : SAMPLES[name];
      expect(literals, `no sample literal for column type ${name}: add one to SAMPLES`).toBeDefined();
      samples.set(name, literals!);
    }
    for (const name of ALWAYS) samples.set(name, SAMPLES[name]!);
    const haveCitext = (await sql`select 1 from pg_type where typname = 'citext'`).length > 0;
    if (!haveCitext) samples.delete("citext");

    const pool = new Pool({ connectionString: databaseUrl(), max: 1 });
    try {
      for (const [type, literals] of samples) {
        for (const literal of literals) {
          const [{ v: viaHttp }] = (await sql.query(`select ${literal} as v`)) as [{ v: unknown }];
          const viaWs: unknown = (await pool.query(`select ${literal} as v`)).rows[0].v;
          expect(viaHttp, `${literal} over HTTP`).toEqual(viaWs);
          // The driver sends a JS array as a Postgres array, so JSON goes as text (as callers must send it).
          const param = type === "json" || type === "jsonb" ? JSON.stringify(viaHttp) : viaHttp;
          const [{ v: back }] = (await sql.query(`select $1::"${type}" as v`, [param])) as [{ v: unknown }];
          expect(back, `${literal} sent back as a parameter`).toEqual(viaHttp);
          const known = KNOWN.find(([l]) => l === literal);
          if (known) expect(viaHttp).toEqual(known[1]);
        }
      }
    } finally {
      await pool.end();
    }
  });
});
