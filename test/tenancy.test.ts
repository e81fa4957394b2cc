import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { makeStore, sqlErrorCode, testDb, type TestStore } from "./harness";

/**
 * Tenancy is enforced by the database (ARCHITECTURE §2). These tests read the catalog, so a table added
 * later with a store_id column is covered without anyone remembering to add it here.
 */
const db = testDb();

const policyExpr = (column: string) =>
  `(${column} = (NULLIF(current_setting('app.store_id'::text, true), ''::text))::uuid)`;

interface TenantTable {
  name: string;
  rls: boolean;
  forced: boolean;
}

async function tenantTables(): Promise<TenantTable[]> {
  const { rows } = await db.pool.query<TenantTable>(`
    select format('%I.%I', n.nspname, c.relname) as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'store_id' and not a.attisdropped
    where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
    order by 1`);
  return rows;
}

async function policiesOf(table: string) {
  const [schema, name] = table.split(".");
  const { rows } = await db.pool.query<{ policyname: string; cmd: string; roles: string[] | string; qual: string; with_check: string | null; permissive: string }>(
    "select policyname, cmd, roles::text[] as roles, qual, with_check, permissive from pg_policies where schemaname = $1 and tablename = $2",
    [schema, name],
  );
  return rows.map((r) => ({ ...r, roles: Array.isArray(r.roles) ? r.roles : String(r.roles).replace(/[{}]/g, "").split(",") }));
}

/** A second handle (a Database holds one connection), for a transaction that must be open beside another. */
const holder = testDb();

/**
 * Tables whose rows do not outlive their transaction as a rule, so makeStore() leaves none: how to leave one.
 * A tally delta row (migration 0031) is folded by the writer unless another transaction holds the store's
 * tally row, as a concurrent fold does: one is written while `holder` holds it.
 */
const TRANSIENT: Record<string, (storeId: string) => Promise<void>> = {
  "public.store_tally_delta": (storeId) =>
    withStore(holder, storeId, async (fold) => {
      await fold.$client.query("select 1 from store_tally where store_id = $1 for update", [storeId]);
      await withStore(db, storeId, (tx) => tx.$client.query("insert into store_tally_delta (store_id) values ($1)", [storeId]));
    }),
};

/**
 * One fixture row of `table` belonging to `store`, as JSON (read inside that store), with its row address:
 * rows are named by it, so that tables without an `id` (the search tokens) are covered the same way.
 */
async function fixtureRow(table: string, owner: TestStore): Promise<Record<string, unknown> & { ctid: string }> {
  const found = await withStore(db, owner.id, async (tx) => {
    const { rows } = await tx.$client.query<{ row: Record<string, unknown>; ctid: string }>(`select row_to_json(t) as row, t.ctid::text as ctid from ${table} t limit 1`);
    return rows[0];
  });
  if (!found) {
    const leave = TRANSIENT[table];
    if (leave) {
      await leave(owner.id);
      return fixtureRow(table, owner);
    }
    throw new Error(`No fixture row in ${table}: add one to makeStore() in test/harness.ts`);
  }
  return { ...found.row, ctid: found.ctid };
}

/** Inserts a copy of `row` (fresh id, given store) through json_populate_record, so it fits any table (its generated columns left to compute). */
async function copyInsert(table: string): Promise<string> {
  const { rows } = await db.pool.query<{ name: string }>(
    "select quote_ident(attname) as name from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum",
    [table],
  );
  const columns = rows.map((r) => r.name).join(", ");
  return `insert into ${table} (${columns}) select ${columns} from json_populate_record(null::${table}, $1::json)`;
}
const copyOf = ({ ctid: _, ...row }: Record<string, unknown>, storeId: string) => ({ ...row, id: crypto.randomUUID(), store_id: storeId });

describe("tenancy by row-level security", () => {
  it("every table with a store_id column has RLS enabled and forced, with the tenant policy only", async () => {
    const tables = await tenantTables();
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["public.member", "public.store_domain", "public.outbox_event"]));
    for (const t of tables) {
      expect({ table: t.name, rls: t.rls, forced: t.forced }).toEqual({ table: t.name, rls: true, forced: true });
      const policies = await policiesOf(t.name);
      const tenant = policies.find((p) => p.policyname === "tenant_isolation");
      expect(tenant, `${t.name} lacks the tenant_isolation policy`).toMatchObject({
        cmd: "ALL",
        permissive: "PERMISSIVE",
        roles: ["public"],
        qual: policyExpr("store_id"),
        with_check: policyExpr("store_id"),
      });
      // Any other policy may only let the privileged id lookups read.
      for (const other of policies.filter((p) => p.policyname !== "tenant_isolation")) {
        expect({ table: t.name, policy: other.policyname, cmd: other.cmd, roles: other.roles }).toEqual({
          table: t.name,
          policy: "privileged_lookup",
          cmd: "SELECT",
          roles: ["app_privileged"],
        });
      }
    }
  });

  it("the store table itself is keyed by id under the same rule", async () => {
    const { rows } = await db.pool.query<{ rls: boolean; forced: boolean }>(
      "select relrowsecurity as rls, relforcerowsecurity as forced from pg_class where oid = 'public.store'::regclass",
    );
    expect(rows[0]).toEqual({ rls: true, forced: true });
    const tenant = (await policiesOf("public.store")).find((p) => p.policyname === "tenant_isolation");
    expect(tenant).toMatchObject({ cmd: "ALL", qual: policyExpr("id"), with_check: policyExpr("id") });
  });

  it("the runtime role owns nothing and cannot bypass RLS", async () => {
    const { rows } = await db.pool.query<{ me: string; bypass: boolean; superuser: boolean; owned: string }>(`
      select current_user as me, r.rolbypassrls as bypass, r.rolsuper as superuser,
             (select count(*) from pg_class c where c.relowner = r.oid)::text as owned
      from pg_roles r where r.rolname = current_user`);
    expect(rows[0]).toEqual({ me: "app_user", bypass: false, superuser: false, owned: "0" });
    expect(await sqlErrorCode(db, "set role app_privileged")).toBe("42501");
    expect(await sqlErrorCode(db, "select * from schema_migrations")).toBe("42501");
  });

  it("with no store set, every tenant table reads zero rows and refuses inserts", async () => {
    const a = await makeStore(db);
    for (const { name } of await tenantTables()) {
      const row = await fixtureRow(name, a);
      const { rows } = await db.pool.query<{ n: string }>(`select count(*)::text as n from ${name}`);
      expect({ table: name, rows: rows[0]?.n }).toEqual({ table: name, rows: "0" });
      expect({ table: name, insert: await sqlErrorCode(db, await copyInsert(name), [JSON.stringify(copyOf(row, a.id))]) }).toEqual({
        table: name,
        insert: "42501",
      });
    }
    const { rows } = await db.pool.query("select id from store where id = $1", [a.id]);
    expect(rows).toHaveLength(0);
  });

  it("with store A set, store B's rows are invisible by address and cannot be changed, deleted or added to", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    for (const { name } of await tenantTables()) {
      const bRow = await fixtureRow(name, b);
      const result = await withStore(db, a.id, async (tx) => {
        const client = tx.$client;
        const read = await client.query(`select * from ${name} where ctid = $1::tid`, [bRow.ctid]);
        const updated = await client.query(`update ${name} set store_id = store_id where ctid = $1::tid`, [bRow.ctid]);
        const deleted = await client.query(`delete from ${name} where ctid = $1::tid`, [bRow.ctid]);
        return { read: read.rowCount, updated: updated.rowCount, deleted: deleted.rowCount };
      });
      expect({ table: name, ...result }).toEqual({ table: name, read: 0, updated: 0, deleted: 0 });

      // Writing a row for B while working in A fails the policy's WITH CHECK (and rolls back).
      const copy = await copyInsert(name);
      const insert = await withStore(db, a.id, async (tx) => {
        const client = tx.$client;
        return client.query(copy, [JSON.stringify(copyOf(bRow, b.id))]).then(
          () => "inserted",
          (e: { code?: string }) => e.code,
        );
      }).catch((e: { code?: string }) => e.code);
      expect({ table: name, insert }).toEqual({ table: name, insert: "42501" });

      // Moving one of A's rows into B is refused too.
      const aRow = await fixtureRow(name, a);
      const move = await withStore(db, a.id, async (tx) => {
        const client = tx.$client;
        await client.query(`update ${name} set store_id = $2 where ctid = $1::tid`, [aRow.ctid, b.id]);
      }).then(
        () => "moved",
        (e: { code?: string }) => e.code,
      );
      expect({ table: name, move }).toEqual({ table: name, move: "42501" });

      // B's row is untouched.
      const still = await fixtureRow(name, b);
      expect(still).toEqual(bRow);
    }
    const other = await withStore(db, a.id, (tx) => {
      return tx.$client.query("select id from store where id = $1", [b.id]);
    });
    expect(other.rowCount).toBe(0);
  });
});
