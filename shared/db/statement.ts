import { getTableName, type Column, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Database } from "./database";
import { CURRENT_STORE, sql, type Q, type Sent, type Step } from "./steps";

/**
 * Statements in SQL (docs/decisions/0026-one-sql-rule.md): what drizzle does not express plainly (a
 * CTE-heavy change in one round trip, row locks in a set order, jsonb built in the database) is written
 * as SQL, declared here with its row, in the named statement modules only (`shared/<area>/statements.ts`).
 *
 * A declaration names the statement, describes each column of its row by the schema column it is (so the
 * TypeScript type comes from the schema, nullability included) or, for a computed value, by its Postgres
 * type, and gives example arguments. It answers a function used as `raw()` was: `(q, ...args)` builds the
 * same SQL with the same bind parameters, sent in its unit like any step. Every declaration is registered,
 * so shared/db/statement.test.ts asks Postgres to describe each one and compares it with its row.
 *
 * (Not to be confused with ./statements.ts: the opening statements of a WebSocket unit, sent inline.)
 */

/** A computed column of a row: its Postgres type, whether it may be null, and its value in TypeScript. */
export interface Field<T = unknown> {
  readonly type: string;
  readonly nullable: boolean;
  /** The schema column it is, when it is one read through a join that may find no row (`orNull`). */
  readonly column?: Column;
  /** Type only: the value the driver gives for it. */
  readonly value?: T;
}

export type RowSpec = Readonly<Record<string, Column | Field>>;

// What the driver hands a plain row (its parsers, not drizzle's): 64-bit integers and numerics as text.
type AsText = "PgBigInt53" | "PgBigInt64" | "PgBigSerial53" | "PgBigSerial64" | "PgNumeric" | "PgNumericNumber" | "PgNumericBigInt";
type DriverValue<C extends Column> = C["_"]["columnType"] extends AsText
  ? string
  : C["_"]["columnType"] extends "PgDateString" | "PgDate"
    ? Date
    : C["_"]["data"];
export type ColumnValue<C extends Column> = DriverValue<C> | (C["_"]["notNull"] extends true ? never : null);

export type RowOf<S extends RowSpec> = { -readonly [K in keyof S]: S[K] extends Field<infer T> ? T : S[K] extends Column ? ColumnValue<S[K]> : never };

function field<T>(type: string): Field<T> {
  return { type, nullable: false };
}

/** Postgres types of computed columns, as the driver reads them. */
export const pg = {
  text: <T extends string = string>() => field<T>("text"),
  uuid: () => field<string>("uuid"),
  int4: <T extends number = number>() => field<T>("integer"),
  /** Read as text: a JavaScript number cannot hold every int8. */
  int8: () => field<string>("bigint"),
  float8: () => field<number>("double precision"),
  /** Read as text, exactly as written. */
  numeric: () => field<string>("numeric"),
  bool: () => field<boolean>("boolean"),
  timestamptz: () => field<Date>("timestamp with time zone"),
  jsonb: <T>() => field<T>("jsonb"),
  json: <T>() => field<T>("json"),
  textArray: <T extends string = string>() => field<T[]>("text[]"),
  uuidArray: () => field<string[]>("uuid[]"),
  int4Array: () => field<number[]>("integer[]"),
};

function isField(x: Column | Field): x is Field {
  return !("table" in x);
}

/** A column or computed value that may be null here (a schema column read through an outer join, a scalar subquery). */
export function orNull<C extends Column>(column: C): Field<ColumnValue<C> | null>;
export function orNull<T>(f: Field<T>): Field<T | null>;
export function orNull(x: Column | Field): Field {
  return isField(x) ? { ...x, nullable: true } : { type: sqlType(x), nullable: true, column: x };
}

/** A column or computed value whose TypeScript type is narrower than its Postgres type (a status, a jsonb shape). */
export function narrow<T>(x: Column | Field): Field<T> {
  return isField(x) ? (x as Field<T>) : { type: sqlType(x), nullable: !x.notNull, column: x };
}

/** The Postgres type a schema column has, as `to_regtype` reads it. */
export function sqlType(column: Column): string {
  const type = column.getSQLType();
  return type === "bigserial" ? "bigint" : type === "serial" ? "integer" : type;
}

/** One column of a declared row, as the test compares it with Postgres' description. */
export interface Described {
  name: string;
  type: string;
  nullable: boolean;
  /** The table and column it is, when declared as a schema column. */
  source: { table: string; column: string } | null;
}

export function describeRow(row: RowSpec): Described[] {
  return Object.entries(row).map(([name, x]) => {
    const column = isField(x) ? x.column : x;
    return {
      name,
      type: isField(x) ? x.type : sqlType(x),
      nullable: isField(x) ? x.nullable : !x.notNull,
      source: column ? { table: getTableName(column.table), column: column.name } : null,
    };
  });
}

export interface StatementSpec<A extends unknown[], S extends RowSpec> {
  /** What it answers (empty for a statement that answers no rows). */
  row: S;
  /** Arguments to build it with when it is described (every branch of its text, at least one set). */
  examples: readonly A[];
  sql: (...args: A) => SQL;
}

/** A declared statement: called like `raw()` was, and described by its declaration. */
export interface Declared<A extends unknown[] = never[], S extends RowSpec = RowSpec> {
  (q: Q, ...args: A): Step<RowOf<S>[]>;
  readonly statementName: string;
  readonly row: S;
  readonly examples: readonly A[];
  /** The text and bind parameters it sends for these arguments (drizzle's own rendering of the SQL). */
  query(...args: A): { sql: string; params: unknown[] };
}

/** The row a declared statement answers. */
export type RowOfStatement<D> = D extends { readonly row: infer S extends RowSpec } ? RowOf<S> : never;

/** Values of the right shape for examples: Parse needs no row to exist. */
export const EXAMPLE = {
  id: "00000000-0000-4000-8000-000000000001",
  /** The unit's store, as plans name it. */
  store: CURRENT_STORE,
  /** A store id written in, as a transaction's plans name it (`${tx.storeId}::uuid`). */
  storeId: sql`${"00000000-0000-4000-8000-000000000002"}::uuid`,
  at: new Date("2026-01-01T00:00:00Z"),
  hash: "0".repeat(64),
};

const registry = new Map<string, Declared<never[]>>();
const dialect = new PgDialect();

/**
 * Declares a statement (in a statement module only). Its name is `<area>.<name>`, unique: the test
 * reports drift by it.
 */
export function statement<A extends unknown[], S extends RowSpec>(name: string, spec: StatementSpec<A, S>): Declared<A, S> {
  if (registry.has(name)) throw new Error(`Statement ${name} is declared twice`);
  if (spec.examples.length === 0) throw new Error(`Statement ${name} needs at least one example to be described by`);
  const run = (q: Q, ...args: A) => q.execute(spec.sql(...args)) as unknown as Step<RowOf<S>[]>;
  const declared = Object.assign(run, {
    statementName: name,
    row: spec.row,
    examples: spec.examples,
    query: (...args: A) => {
      const { sql, params } = dialect.sqlToQuery(spec.sql(...args));
      return { sql, params };
    },
  });
  registry.set(name, declared as unknown as Declared<never[]>);
  return declared;
}

/** Every statement declared so far (the test imports every statement module first). */
export function declaredStatements(): Declared<never[]>[] {
  return [...registry.values()];
}

/** A declared statement sent alone over the HTTP path, outside any unit (a lookup before a store is known): one round trip. */
export function sendAlone<A extends unknown[], S extends RowSpec>(db: Database, s: Declared<A, S>, ...args: A): Promise<RowOf<S>[]> {
  const { sql: text, params } = s.query(...args);
  return db.rows<RowOf<S>>(text, params);
}

/** The same for a statement that writes (a transaction that is not read-only). */
export function changeAlone<A extends unknown[], S extends RowSpec>(db: Database, s: Declared<A, S>, ...args: A): Promise<RowOf<S>[]> {
  const { sql: text, params } = s.query(...args);
  return db.rows<RowOf<S>>(text, params, { readOnly: false });
}

/** A declared statement on the WebSocket pool, outside any store (the people's own tables: user_account, session): one round trip. */
export async function poolRows<A extends unknown[], S extends RowSpec>(db: Database, s: Declared<A, S>, ...args: A): Promise<RowOf<S>[]> {
  const { sql: text, params } = s.query(...args);
  return (await db.pool.query(text, params)).rows as RowOf<S>[];
}

/** A declared statement as a unit's HTTP path sends it, among hand-built ones (a unit opened by a privileged lookup). */
export function sentOf<A extends unknown[], S extends RowSpec>(s: Declared<A, S>, ...args: A): Sent {
  return { ...s.query(...args), method: "execute" };
}
