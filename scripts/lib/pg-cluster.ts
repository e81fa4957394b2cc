import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { LOCAL_ROLES, ROOT, type LocalStack } from "./config";
import { describeBinaries, findPgBinaries, INSTALL_HINT, type PgBinaries } from "./pg-binaries";

/**
 * The project-local PostgreSQL cluster: created under .data/pg<major>/ on first use, from the binaries
 * pg-binaries.ts picks (PostgreSQL 17 from npm by default), then reused. Listens on 127.0.0.1 only; the
 * superuser is reachable only via a Unix socket that only the cluster's OS user (and root) may open.
 * Durability is relaxed (fsync off): it is a throwaway development cluster, and `npm run db:reset`
 * rebuilds its data.
 */

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

const userExists = (name: string) => spawnSync("id", ["-u", name]).status === 0;

/** initdb and postgres refuse to run as root: as root they run as `postgres` when it exists, else `nobody`. */
let clusterUserName: string | undefined;
function clusterUser(): string {
  clusterUserName ??= userExists("postgres") ? "postgres" : "nobody";
  return clusterUserName;
}

function asClusterUser(cmd: string, args: string[]): [string, string[]] {
  return isRoot() ? ["runuser", ["-u", clusterUser(), "--", cmd, ...args]] : [cmd, args];
}

function clusterUserCanReach(dir: string): boolean {
  if (!isRoot()) return true;
  return spawnSync("runuser", ["-u", clusterUser(), "--", "test", "-x", dir]).status === 0;
}

export interface ClusterPaths {
  base: string;
  /** One cluster per major version (.data/pg17): a cluster made by another major is left alone. */
  data: string;
  socketDir: string;
  log: string;
}

export function clusterPaths(major: number): ClusterPaths {
  let base = path.join(ROOT, ".data");
  if (isRoot() && !clusterUserCanReach(ROOT)) {
    // The checkout sits where the cluster's OS user cannot enter (e.g. under /root): keep the cluster in
    // a per-checkout folder it can reach instead.
    base = path.join("/var/tmp", `commerce-pg-${createHash("sha1").update(ROOT).digest("hex").slice(0, 10)}`);
  }
  return { base, data: path.join(base, `pg${major}`), socketDir: path.join(base, "run"), log: path.join(base, "postgres.log") };
}

function clusterIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, clusterUser()]).toString().trim());
  return { uid: id("-u"), gid: id("-g") };
}

function ensureOwnedDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isRoot()) {
    const { uid, gid } = clusterIds();
    // A cluster made earlier as another OS user (e.g. before a `postgres` user existed) changes hands whole.
    if (fs.statSync(dir).uid !== uid) execFileSync("chown", ["-R", `${uid}:${gid}`, dir]);
    fs.chownSync(dir, uid, gid);
  }
  fs.chmodSync(dir, 0o700);
}

/**
 * As root, the cluster's OS user must be able to run the binaries: npm's copy inside a checkout it cannot
 * enter is copied once next to the cluster.
 */
function reachableBinaries(bin: PgBinaries, paths: ClusterPaths): PgBinaries {
  if (clusterUserCanReach(bin.dir)) return bin;
  if (bin.source !== "npm") {
    throw new Error(`The OS user \`${clusterUser()}\`, which runs the cluster as root, cannot reach ${bin.dir}. Use binaries it can reach (PG_BIN), or run as a normal user.`);
  }
  const target = path.join(paths.base, `npm-pg-${bin.version}`);
  if (!fs.existsSync(target)) {
    const staging = `${target}.partial-${process.pid}`;
    fs.mkdirSync(paths.base, { recursive: true });
    fs.cpSync(path.dirname(bin.dir), staging, { recursive: true, verbatimSymlinks: true });
    fs.renameSync(staging, target);
  }
  return { ...bin, dir: path.join(target, "bin") };
}

function run(bin: PgBinaries, name: string, args: string[]): { status: number; output: string } {
  const [cmd, full] = asClusterUser(path.join(bin.dir, name), args);
  const r = spawnSync(cmd, full, { encoding: "utf8" });
  return { status: r.status ?? 1, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

export function isClusterRunning(bin: PgBinaries, paths: ClusterPaths): boolean {
  return fs.existsSync(path.join(paths.data, "PG_VERSION")) && run(bin, "pg_ctl", ["status", "-D", paths.data]).status === 0;
}

/** Clusters of other majors in the same folder (the one before per-major folders was .data/pg). */
function otherClusters(paths: ClusterPaths): string[] {
  if (!fs.existsSync(paths.base)) return [];
  return fs
    .readdirSync(paths.base)
    .map((d) => path.join(paths.base, d))
    .filter((d) => d !== paths.data && /^pg\d*$/.test(path.basename(d)) && fs.existsSync(path.join(d, "PG_VERSION")));
}

export function initCluster(bin: PgBinaries, paths: ClusterPaths, log: (m: string) => void): boolean {
  if (fs.existsSync(path.join(paths.data, "PG_VERSION"))) {
    ensureOwnedDir(paths.data);
    return false;
  }
  log(`Creating a local PostgreSQL ${bin.major} cluster in ${paths.data} (first run only)…`);
  const legacy = path.join(paths.base, "pg");
  if (otherClusters(paths).includes(legacy)) {
    log(`(${legacy} holds a cluster from before clusters were kept per major version; it is no longer used: delete it with \`rm -rf ${legacy}\` once it is stopped.)`);
  }
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
    const stale = otherClusters(paths)
      .filter((d) => fs.existsSync(path.join(d, "postmaster.pid")))
      .map((d) => `\nThe older cluster in ${d} may still be running on that port: stop it (pg_ctl -D ${d} stop, with its own binaries).`)
      .join("");
    throw new Error(`PostgreSQL did not start on port ${port}. If another server uses that port, set COMMERCE_PG_PORT.${stale}\n${r.output}\n${tail}`);
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
  const found = findPgBinaries();
  if (!found) throw new Error(INSTALL_HINT);
  const paths = clusterPaths(found.major);
  const bin = reachableBinaries(found, paths);
  log(`${describeBinaries(found)}${bin.dir === found.dir ? "" : ` (run from ${bin.dir})`}`);
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
