import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { parse } from "smol-toml";
import type { TestProject } from "vitest/node";
import { ROOT, TEST_STACK } from "../../scripts/lib/config";
import { prepareDatabase } from "../../scripts/lib/stack";
import { startWsProxy } from "../../scripts/lib/ws-proxy";

/** The crons wrangler.toml declares for the worker, so tests check the real configuration. */
export function wranglerCrons(): string[] {
  const config = parse(fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8")) as {
    env?: { worker?: { triggers?: { crons?: string[] } } };
  };
  return config.env?.worker?.triggers?.crons ?? [];
}

/** A login role that may open no connection at all: every connect as it fails with 53300 (too_many_connections). */
const NO_SLOTS = { name: "commerce_no_slots", password: "commerce_no_slots_local" };

/** Creates that role (idempotently, as the owner, who has CREATEROLE) and answers its connection string. */
async function noSlotsUrl(ownerUrl: string, appUrl: string): Promise<string> {
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    await owner.query(`do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${NO_SLOTS.name}') then
        create role ${NO_SLOTS.name} login connection limit 0 password '${NO_SLOTS.password}'; end if; end $$`);
    // It may connect to the database, so the connection limit is the only thing refusing it.
    await owner.query(`grant connect on database ${owner.database} to ${NO_SLOTS.name}`);
  } finally {
    await owner.end();
  }
  const url = new URL(appUrl);
  url.username = NO_SLOTS.name;
  url.password = NO_SLOTS.password;
  return url.toString();
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
  // A second proxy with one upstream slot and one place in its queue, for the overload tests.
  const tight = await startWsProxy(0, { maxUpstream: 1, maxQueue: 1 });
  console.log(`[test-db] ready in ${Date.now() - started} ms (proxy ${db.wsProxy}, at most ${db.proxy?.limits.maxUpstream} connections)`);
  project.provide("databaseUrl", db.appUrl);
  project.provide("wsProxy", db.wsProxy ?? "");
  project.provide("tightWsProxy", `127.0.0.1:${tight.port}`);
  project.provide("noSlotsDatabaseUrl", await noSlotsUrl(db.ownerUrl, db.appUrl));
  project.provide("crons", wranglerCrons());
  // The browser walkthroughs' worker relays the whole test database's outbox: it settles the other test
  // files' leftovers first, as the owner (test/browser/support.ts).
  project.provide("ownerDatabaseUrl", db.ownerUrl);
  return async () => {
    await tight.close();
    await db.release();
  };
}
