import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return n;
}

/** Local-only credentials of the project's own throwaway cluster (never used against Neon). */
export const LOCAL_ROLES = {
  owner: { name: "commerce_owner", password: "commerce_owner_local" },
  app: { name: "app_user", password: "app_user_local" },
} as const;

export interface LocalStack {
  pgPort: number;
  proxyPort: number;
  database: string;
}

export const DEV_STACK: LocalStack = {
  pgPort: port("COMMERCE_PG_PORT", 54329),
  proxyPort: port("COMMERCE_PROXY_PORT", 54330),
  database: process.env.COMMERCE_DB_NAME ?? "commerce",
};

export const TEST_STACK: LocalStack = {
  pgPort: DEV_STACK.pgPort,
  proxyPort: port("COMMERCE_TEST_PROXY_PORT", 54331),
  database: process.env.COMMERCE_TEST_DB_NAME ?? "commerce_test",
};

export const WORKER_PORTS = { admin: 8787, storefront: 8788, worker: 8789 } as const;

export function localUrl(role: keyof typeof LOCAL_ROLES, stack: LocalStack): string {
  const r = LOCAL_ROLES[role];
  return `postgres://${r.name}:${r.password}@127.0.0.1:${stack.pgPort}/${stack.database}`;
}

export function proxyAddress(stack: LocalStack): string {
  return `127.0.0.1:${stack.proxyPort}`;
}

/** Connection strings without the password, for printing. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}
