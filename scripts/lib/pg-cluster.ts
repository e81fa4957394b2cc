import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { LOCAL_ROLES, ROOT, type LocalStack } from "./config";

/**
 * The project-local PostgreSQL cluster: created under .data/ from the machine's PostgreSQL binaries on
 * first use, then reused. Listens on 127.0.0.1 only; the superuser is reachable only via a Unix socket
 * that only the cluster's OS user (and root) may open. Durability is relaxed (fsync off): it is a
 * throwaway development cluster, and `npm run db:reset` rebuilds its data.
 */

export const INSTALL_HINT = `PostgreSQL server binaries were not found, and DATABASE_URL is not set.
Install PostgreSQL, then run the command again:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y postgresql
  Fedora:         sudo dnf install -y postgresql-server
  macOS:          brew install postgresql@16
Or point PG_BIN at the folder holding initdb, pg_ctl and postgres,
or set DATABASE_URL (and DATABASE_OWNER_URL) to a Neon branch instead.`;

export interface PgBinaries {
  dir: string;
}

const NEEDED = ["initdb", "pg_ctl", "postgres"];

function hasAll(dir: string): boolean {
  return NEEDED.every((b) => fs.existsSync(path.join(dir, b)));
}

function versionDirs(pattern: RegExp, parent: string, suffix: string): string[] {
  if (!fs.existsSync(parent)) return [];
  return fs
    .readdirSync(parent)
    .filter((d) => pattern.test(d))
    .sort((a, b) => Number(b.replace(/\D+/g, "")) - Number(a.replace(/\D+/g, "")))
    .map((d) => path.join(parent, d, suffix));
}

export function findPgBinaries(): PgBinaries | null {
  const candidates = [
    process.env.PG_BIN,
    ...(process.env.PATH ?? "").split(path.delimiter),
    ...versionDirs(/^\d+$/, "/usr/lib/postgresql", "bin"),
    "/usr/local/pgsql/bin",
    ...versionDirs(/^postgresql@\d+$/, "/opt/homebrew/opt", "bin"),
    ...versionDirs(/^postgresql@\d+$/, "/usr/local/opt", "bin"),
  ].filter((d): d is string => Boolean(d));
  const dir = candidates.find(hasAll);
  return dir ? { dir } : null;
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` OS user. */
function asClusterUser(cmd: string, args: string[]): [string, string[]] {
  return isRoot() ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
}

function clusterUserCanReach(dir: string): boolean {
  if (!isRoot()) return true;
  return spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", dir]).status === 0;
}

export interface ClusterPaths {
  base: string;
  data: string;
  socketDir: string;
  log: string;
}

export function clusterPaths(): ClusterPaths {
  let base = path.join(ROOT, ".data");
  if (isRoot() && !clusterUserCanReach(ROOT)) {
    // The checkout sits where the postgres user cannot enter (e.g. under /root): keep the cluster in
    // a per-checkout folder it can reach instead.
    base = path.join("/var/tmp", `commerce-pg-${createHash("sha1").update(ROOT).digest("hex").slice(0, 10)}`);
  }
  return { base, data: path.join(base, "pg"), socketDir: path.join(base, "run"), log: path.join(base, "postgres.log") };
}

function ensureOwnedDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isRoot()) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    fs.chownSync(dir, uid, gid);
  }
  fs.chmodSync(dir, 0o700);
}

function run(bin: PgBinaries, name: string, args: string[]): { status: number; output: string } {
  const [cmd, full] = asClusterUser(path.join(bin.dir, name), args);
  const r = spawnSync(cmd, full, { encoding: "utf8" });
  return { status: r.status ?? 1, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

export function isClusterRunning(bin: PgBinaries, paths: ClusterPaths): boolean {
  return fs.existsSync(path.join(paths.data, "PG_VERSION")) && run(bin, "pg_ctl", ["status", "-D", paths.data]).status === 0;
}

export function initCluster(bin: PgBinaries, paths: ClusterPaths, log: (m: string) => void): boolean {
  if (fs.existsSync(path.join(paths.data, "PG_VERSION"))) return false;
  if (isRoot() && spawnSync("id", ["-u", "postgres"]).status !== 0) {
    throw new Error("Running as root, but there is no `postgres` OS user to run the cluster as. Install PostgreSQL from your distribution's packages (it creates that user), or run as a normal user.");
  }
  log(`Creating a local PostgreSQL cluster in ${paths.data} (first run only)…`);
  fs.mkdirSync(paths.base, { recursive: true });
  ensureOwnedDir(paths.data);
  const r = run(bin, "initdb", [
    "-D", paths.data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
    "-E", "UTF8", "--locale=C", "--no-instructions",
  ]);
  if (r.status !== 0) throw new Error(`initdb failed:\n${r.output}`);
  return true;
}

export function startCluster(bin: PgBinaries, paths: ClusterPaths, port: number): void {
  ensureOwnedDir(paths.socketDir);
  if (fs.existsSync(paths.log) && isRoot()) fs.rmSync(paths.log);
  const options = [
    `-p ${port}`, `-k ${paths.socketDir}`, "-c listen_addresses=127.0.0.1", "-c unix_socket_permissions=0700",
    "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
  ].join(" ");
  const r = run(bin, "pg_ctl", ["-D", paths.data, "-l", path.join(paths.data, "server.log"), "-w", "-t", "60", "-o", options, "start"]);
  if (r.status !== 0) {
    const serverLog = path.join(paths.data, "server.log");
    const tail = fs.existsSync(serverLog) ? fs.readFileSync(serverLog, "utf8").split("\n").slice(-15).join("\n") : "";
    throw new Error(`PostgreSQL did not start on port ${port}. If another server uses that port, set COMMERCE_PG_PORT.\n${r.output}\n${tail}`);
  }
}

export function stopCluster(bin: PgBinaries, paths: ClusterPaths): void {
  run(bin, "pg_ctl", ["-D", paths.data, "-m", "fast", "-w", "stop"]);
}

export function superuserClient(paths: ClusterPaths, stack: LocalStack, database = "postgres"): pg.Client {
  return new pg.Client({ host: paths.socketDir, port: stack.pgPort, user: "postgres", database });
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** Roles and the database, idempotently (run as the cluster superuser). */
export async function bootstrapDatabase(paths: ClusterPaths, stack: LocalStack): Promise<void> {
  const su = superuserClient(paths, stack);
  await su.connect();
  try {
    const { owner, app } = LOCAL_ROLES;
    await su.query(`do $$ begin
      if not exists (select 1 from pg_roles where rolname = ${literal(owner.name)}) then
        create role ${ident(owner.name)} login createrole; end if;
      if not exists (select 1 from pg_roles where rolname = ${literal(app.name)}) then
        create role ${ident(app.name)} login; end if;
      if not exists (select 1 from pg_roles where rolname = 'app_privileged') then
        create role app_privileged nologin; end if;
    end $$`);
    await su.query(`alter role ${ident(owner.name)} with login createrole nobypassrls password ${literal(owner.password)}`);
    await su.query(`alter role ${ident(app.name)} with login nobypassrls nosuperuser password ${literal(app.password)}`);
    await su.query(`grant app_privileged to ${ident(owner.name)} with admin option`);
    const exists = await su.query("select 1 from pg_database where datname = $1", [stack.database]);
    if (exists.rowCount === 0) await su.query(`create database ${ident(stack.database)} owner ${ident(owner.name)}`);
    await su.query(`revoke all on database ${ident(stack.database)} from public`);
    await su.query(`grant connect on database ${ident(stack.database)} to ${ident(app.name)}`);
  } finally {
    await su.end();
  }
}

export async function dropDatabase(paths: ClusterPaths, stack: LocalStack): Promise<void> {
  const su = superuserClient(paths, stack);
  await su.connect();
  try {
    await su.query(`drop database if exists ${ident(stack.database)} with (force)`);
  } finally {
    await su.end();
  }
}

/** Client connections to the cluster other than the one asking. */
async function otherClients(paths: ClusterPaths, stack: LocalStack): Promise<number> {
  const su = superuserClient(paths, stack);
  try {
    await su.connect();
    const { rows } = await su.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows[0]?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await su.end().catch(() => undefined);
  }
}

export interface LocalPostgres {
  paths: ClusterPaths;
  /** Stops the cluster if this process started it; leaves a cluster that was already running alone. */
  release(): Promise<void>;
}

/** Find binaries, create the cluster once, start it if needed, and make sure the database exists. */
export async function ensureLocalPostgres(stack: LocalStack, log: (m: string) => void): Promise<LocalPostgres> {
  const bin = findPgBinaries();
  if (!bin) throw new Error(INSTALL_HINT);
  const paths = clusterPaths();
  initCluster(bin, paths, log);
  let startedHere = false;
  if (!isClusterRunning(bin, paths)) {
    log(`Starting PostgreSQL on 127.0.0.1:${stack.pgPort}…`);
    startCluster(bin, paths, stack.pgPort);
    startedHere = true;
  }
  await bootstrapDatabase(paths, stack);
  return {
    paths,
    async release() {
      // Another suite or `npm run dev` may have started using the cluster since: leave it to them.
      if (startedHere && (await otherClients(paths, stack)) === 0) stopCluster(bin, paths);
    },
  };
}
