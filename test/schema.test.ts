import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import * as schema from "#shared/db/schema";
import { testDb } from "./harness";

const db = testDb();

const tables = Object.values(schema).filter((v) => is(v, PgTable)) as PgTable[];

/** The drizzle schema must describe the tables the migrations made, column for column. */
describe("drizzle schema matches the migrations", () => {
  it("has the same columns, types' nullability and defaults presence for every table", async () => {
    expect(tables.length).toBeGreaterThan(0);
    for (const table of tables) {
      const config = getTableConfig(table);
      const { rows } = await db.pool.query<{ column_name: string; is_nullable: string; has_default: boolean }>(
        `select column_name, is_nullable, column_default is not null as has_default
         from information_schema.columns where table_schema = 'public' and table_name = $1 order by column_name`,
        [config.name],
      );
      const inDb = rows.map((r) => ({ column: r.column_name, nullable: r.is_nullable === "YES", hasDefault: r.has_default }));
      const inDrizzle = config.columns
        .map((c) => ({ column: c.name, nullable: !c.notNull, hasDefault: c.hasDefault }))
        .sort((a, b) => a.column.localeCompare(b.column));
      expect({ table: config.name, columns: inDrizzle }).toEqual({ table: config.name, columns: inDb });
    }
  });
});
