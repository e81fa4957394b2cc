import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { ROOT } from "./config";

export const MIGRATIONS_DIR = path.join(ROOT, "migrations");
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
// Any fixed number: serialises concurrent migrators (two `npm test`s, dev and test) on one database.
const LOCK_KEY = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  const seen = new Set<number>();
  return files.map((file) => {
    const m = FILE.exec(file);
    if (!m) throw new Error(`migrations/${file}: name it NNNN_description.sql (lower case, underscores)`);
    const version = Number(m[1]);
    if (seen.has(version)) throw new Error(`migrations/${file}: version ${m[1]} is used twice`);
    seen.add(version);
    const sql = fs.readFileSync(path.join(dir, file), "utf8");
    return { version, name: m[2]!, sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
}

/**
 * Applies pending migrations in order, each in its own transaction and exactly once, recorded in
 * schema_migrations. Refuses to go on if an applied migration's file was changed since.
 * Must run as the owner role.
 */
export async function migrate(url: string, log: (m: string) => void = () => {}): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(`create table if not exists schema_migrations (
      version integer primary key, name text not null, checksum text not null,
      applied_at timestamptz not null default now())`);
    await client.query("revoke all on schema_migrations from public");
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
      "select version, name, checksum from schema_migrations order by version",
    );
    const applied = new Map(rows.map((r) => [r.version, r]));
    let count = 0;
    for (const m of readMigrations()) {
      const done = applied.get(m.version);
      if (done) {
        if (done.checksum !== m.checksum) {
          throw new Error(`Migration ${m.version}_${m.name} was changed after it was applied. Put the change in a new migration (or run npm run db:reset locally).`);
        }
        continue;
      }
      log(`Applying migration ${String(m.version).padStart(4, "0")}_${m.name}…`);
      await client.query("begin");
      try {
        await client.query(m.sql);
        await client.query("insert into schema_migrations (version, name, checksum) values ($1, $2, $3)", [m.version, m.name, m.checksum]);
        await client.query("commit");
      } catch (e) {
        await client.query("rollback");
        throw new Error(`Migration ${m.version}_${m.name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      count++;
    }
    return count;
  } finally {
    await client.query("select pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}
