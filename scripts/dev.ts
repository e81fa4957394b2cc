/**
 * npm run dev: the whole stack in one command.
 * Local Postgres (or DATABASE_URL) -> WebSocket proxy -> migrations -> demo seed -> the three Workers
 * (admin 8787, storefront 8788, worker 8789). Ctrl-C stops everything this command started.
 * The Workers' output shows what happened (./lib/dev-output.ts); `npm run dev -- --verbose` shows every line.
 */
import type { ChildProcess } from "node:child_process";
import { DEV_STACK, WORKER_PORTS } from "./lib/config";
import { devOutputFilter } from "./lib/dev-output";
import { DEMO_PASSWORD, DEMO_PEOPLE, DEMO_STORES } from "./lib/seed";
import { prepareDatabase } from "./lib/stack";
import { CRON_TABLE } from "#shared/jobs/cron";
import { fireCronsLocally, startWorkerProcess, stopWorkerProcesses, waitForHttp, type WorkerName } from "./lib/workers";

const INSPECTOR_PORTS: Record<WorkerName, number> = { admin: 9230, storefront: 9231, worker: 9232 };
const COLORS: Record<WorkerName | "stack", string> = { admin: "35", storefront: "36", worker: "33", stack: "32" };
const NAMES = Object.keys(WORKER_PORTS) as WorkerName[];
const VERBOSE = process.argv.includes("--verbose");

const tag = (name: WorkerName | "stack") => `\x1b[${COLORS[name]}m[${name}]\x1b[0m`;
const log = (m: string) => console.log(`${tag("stack")} ${m}`);

/**
 * Demo photos (docs/media.md "Demo photos"): the admin's development-only POST /-dev/seed-media draws and
 * uploads pictures for each seeded store's products, logo, favicon, banner and collections, a few per call
 * (each goes through the real pipeline in workerd, where the local R2 lives). Idempotent: a restart adds
 * only what is missing. Runs after "Ready", so the links are there at once; pages show photos as they land.
 */
async function seedDemoPhotos(adminUrl: string): Promise<void> {
  const started = Date.now();
  let made = 0;
  for (const { slug } of DEMO_STORES) {
    for (let calls = 0; calls < 50; calls++) {
      const res = await fetch(`${adminUrl}/-dev/seed-media`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ store: slug }) });
      if (!res.ok) throw new Error(`${slug}: ${res.status} ${await res.text()}`);
      const out = (await res.json()) as { products: number; theme: boolean; collections: number; remaining: number };
      made += out.products + out.collections + (out.theme ? 3 : 0);
      if (out.remaining === 0) break;
    }
  }
  if (made > 0) log(`Demo photos: ${made} images drawn and uploaded in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const db = await prepareDatabase({ stack: DEV_STACK, seed: true, allowRemote: true, log });
  const children: ChildProcess[] = [];
  let stopping = false;

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log("Stopping…");
    await stopWorkerProcesses(children);
    await db.release();
    log("Stopped. Nothing left running.");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  for (const name of NAMES) {
    const filter = devOutputFilter(VERBOSE);
    const child = startWorkerProcess({
      name,
      port: WORKER_PORTS[name],
      inspectorPort: INSPECTOR_PORTS[name],
      db,
      onLine: (line, stream) => {
        const shown = filter(line);
        if (shown.show) (stream === "err" ? process.stderr : process.stdout).write(`${tag(name)} ${shown.line}\n`);
      },
    });
    children.push(child);
    child.on("exit", (code) => {
      if (!stopping) {
        log(`${name} exited unexpectedly (code ${code}); stopping the stack.`);
        void stop(1);
      }
    });
  }

  const ready = await Promise.all(NAMES.map((name) => waitForHttp(`http://127.0.0.1:${WORKER_PORTS[name]}/`, 120_000)));
  if (ready.some((ok) => !ok)) {
    log("A Worker did not come up within 2 minutes; see its output above.");
    return stop(1);
  }
  // Cron Triggers do not fire under wrangler dev: fire them here, which also starts the 5 s outbox relay.
  fireCronsLocally(`http://127.0.0.1:${WORKER_PORTS.worker}`, Object.keys(CRON_TABLE), (m) => log(m));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const rttMs = db.proxy?.rttMs ?? 0;
  const distance = rttMs > 0 ? `\n  Distance     every round trip to the database held ${rttMs} ms (COMMERCE_DB_RTT_MS)` : "";
  const people = DEMO_PEOPLE.map((p) => `    ${p.email.padEnd(18)} ${p.role.padEnd(6)} of ${p.store}`).join("\n");
  console.log(`
${tag("stack")} Ready in ${seconds} s.

  Admin        http://localhost:${WORKER_PORTS.admin}/login
  Storefront   http://demo.localhost:${WORKER_PORTS.storefront}/   (or: curl -H 'Host: demo.localhost' localhost:${WORKER_PORTS.storefront}/)
  Worker       http://localhost:${WORKER_PORTS.worker}/health
  Cron         fired by this command when due (by hand: http://localhost:${WORKER_PORTS.worker}/__scheduled?cron=*+*+*+*+*)
  Postgres     ${db.wsProxy ? `127.0.0.1:${DEV_STACK.pgPort} (database ${DEV_STACK.database}), via the proxy ${db.wsProxy} (WebSocket, and SQL over HTTP at /sql; at most ${db.proxy?.limits.maxUpstream} connections, others queue)` : "DATABASE_URL"}${distance}

  Demo sign-ins (password: ${DEMO_PASSWORD})
${people}

  Ctrl-C stops everything.${VERBOSE ? "" : " The Workers' output shows what happened; npm run dev -- --verbose shows every line."}
`);
  seedDemoPhotos(`http://127.0.0.1:${WORKER_PORTS.admin}`).catch((e: unknown) =>
    log(`Demo photos were not made (${e instanceof Error ? e.message : String(e)}); the shop works without them. Restart npm run dev to try again.`),
  );
}

main().catch((e: unknown) => {
  console.error(`${tag("stack")} ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
