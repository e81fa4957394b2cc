import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import type { TestProject } from "vitest/node";
import { ROOT, TEST_STACK } from "../../scripts/lib/config";
import { prepareDatabase } from "../../scripts/lib/stack";

/** The crons wrangler.toml declares for the worker, so tests check the real configuration. */
export function wranglerCrons(): string[] {
  const config = parse(fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8")) as {
    env?: { worker?: { triggers?: { crons?: string[] } } };
  };
  return config.env?.worker?.triggers?.crons ?? [];
}

/**
 * Runs once in Node before the suite: the same bring-up as `npm run dev` (local cluster, migrations,
 * demo seed, WebSocket proxy) on the test database, then hands the connection details to the
 * workerd test projects through provide/inject.
 */
export default async function setup(project: TestProject) {
  const started = Date.now();
  const db = await prepareDatabase({
    stack: TEST_STACK,
    proxyPort: 0, // any free port: two suites can run side by side
    seed: true,
    allowRemote: false,
    log: (m) => console.log(`[test-db] ${m}`),
  });
  console.log(`[test-db] ready in ${Date.now() - started} ms (proxy ${db.wsProxy})`);
  project.provide("databaseUrl", db.appUrl);
  project.provide("wsProxy", db.wsProxy ?? "");
  project.provide("crons", wranglerCrons());
  return async () => {
    await db.release();
  };
}
