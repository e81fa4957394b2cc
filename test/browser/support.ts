/**
 * Node-side helpers for the browser walkthroughs: the real admin and storefront Workers under `wrangler dev`
 * on free ports, against the test database that test/node/global-setup.ts prepared. Which Chromium: ./chromium.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { ROOT } from "../../scripts/lib/config";
import { DEMO_STORES } from "../../scripts/lib/seed";
import { fireCronsLocally, stopWorkerProcesses, waitForHttp } from "../../scripts/lib/workers";

export const SCREENSHOT_DIR = path.join(ROOT, ".data", "screenshots");

/** A TCP port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (address && typeof address === "object" ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface AdminWorker {
  url: string;
  /** The last lines wrangler/workerd printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /**
   * The local state folder (KV, Durable Objects) to use instead of a fresh one of its own. Workers given
   * the same folder share their KV namespaces, as under `npm run dev`; the caller removes it.
   */
  persistTo?: string;
}

type Db = { databaseUrl: string; wsProxy: string; ownerUrl?: string };

/**
 * `wrangler dev --env admin`, like scripts/lib/workers.ts's startWorkerProcess, but with its local state
 * (Durable Objects such as the sign-in rate limiter, KV) in a fresh temporary folder unless one is given:
 * runs never share rate-limit counters with each other or with `npm run dev`. Runs in its own process
 * group so workerd goes down with it; an exit hook kills the group if the test process ends without afterAll.
 */
export function startAdminWorker(db: Db, options: WorkerOptions = {}): Promise<AdminWorker> {
  return startWorker("admin", "/login", db, options);
}

/** `wrangler dev --env storefront` the same way; shoppers reach it as http://<store host>:<port>/. */
export function startStorefrontWorker(db: Db, options: WorkerOptions = {}): Promise<AdminWorker> {
  return startWorker("storefront", "/", db, options);
}

/** The storefront (its URL, output and stop) with the admin and the worker beside it. */
export interface StorefrontWithAdmin extends AdminWorker {
  admin: AdminWorker;
  /** Absent when started with `{ worker: false }`. */
  worker: AdminWorker | undefined;
}

/**
 * The storefront and the admin at once, on one local state folder of their own: what the admin writes
 * to the HOSTS namespace after a commit (domains, store facts) is what the storefront reads next.
 */
export async function startStorefrontWithAdmin(db: Db, options: { worker?: boolean } = {}): Promise<StorefrontWithAdmin> {
  const persistTo = fs.mkdtempSync(path.join(os.tmpdir(), "commerce-browser-shared-"));
  if (options.worker !== false && db.ownerUrl) await settleOtherStoresOutbox(db.ownerUrl);
  const started = await Promise.allSettled([
    startStorefrontWorker(db, { persistTo }),
    startAdminWorker(db, { persistTo }),
    ...(options.worker === false ? [] : [startWorker("worker", "/health", db, { persistTo })]),
  ]);
  let stopCrons = () => {};
  const stop = async () => {
    stopCrons();
    await Promise.all(started.map((w) => (w.status === "fulfilled" ? w.value.stop() : undefined)));
    fs.rmSync(persistTo, { recursive: true, force: true });
  };
  const failed = started.find((w): w is PromiseRejectedResult => w.status === "rejected");
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const [shop, admin, worker] = started.map((w) => (w as PromiseFulfilledResult<AdminWorker>).value) as [AdminWorker, AdminWorker, AdminWorker | undefined];
  // The every-minute cron arms the worker's alarm loop: the outbox relay then runs every 5 s.
  if (worker) stopCrons = fireCronsLocally(worker.url, ["* * * * *"]);
  return {
    url: shop.url,
    output: () => `[storefront]\n${shop.output()}\n[admin]\n${admin.output()}${worker ? `\n[worker]\n${worker.output()}` : ""}`,
    stop,
    admin,
    worker,
  };
}

/**
 * The walkthrough's worker relays every store's outbox, and the test database holds the events of every
 * earlier test file's stores, never relayed (each file relays its own). Those are marked sent before the
 * worker starts, so the demo stores' messages are not queued behind thousands of others (a shopper's
 * payment email arrived 20+ seconds late behind that backlog). The demo stores' own events stay pending.
 */
async function settleOtherStoresOutbox(ownerUrl: string): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    await owner.query(
      `update outbox_event set processed_at = now()
        where processed_at is null and store_id not in (select id from store where slug = any($1::text[]))`,
      [DEMO_STORES.map((s) => s.slug)],
    );
  } finally {
    await owner.end();
  }
}

/**
 * The admin's RPC from Node as a signed-in member (sign-in through the real form), for a walkthrough's
 * set-up and clean-up around what the browser does.
 */
export async function adminRpcAs(adminUrl: string, email: string, password: string): Promise<(procedure: string, input: unknown) => Promise<unknown>> {
  const login = await fetch(`${adminUrl}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: adminUrl },
    // A person's browser past a threshold sends the widget's token; the dev stack uses Turnstile's passing test keys.
    body: new URLSearchParams({ email, password, "cf-turnstile-response": "XXXX.DUMMY.TOKEN.XXXX" }).toString(),
    redirect: "manual",
  });
  const session = login.headers.getSetCookie().find((c) => c.startsWith("wc_session="))?.split(";")[0];
  if (login.status !== 303 || !session) throw new Error(`Signing in as ${email} from Node: POST /login answered ${login.status}.`);
  return async (procedure, input) => {
    const res = await fetch(`${adminUrl}/api/rpc/${procedure}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: adminUrl, cookie: session },
      body: JSON.stringify({ json: input }),
    });
    const body = (await res.json()) as { json: unknown };
    if (res.status !== 200) throw new Error(`${procedure}: ${res.status} ${JSON.stringify(body)}`);
    return body.json;
  };
}

/**
 * Starts one Worker; when workerd dies at start-up because another process of the same local state folder
 * held its SQLite lock (`SQLITE_BUSY`, seen on a loaded two-core machine), tries again, twice at most.
 */
async function startWorker(name: "admin" | "storefront" | "worker", probe: string, db: Db, options: WorkerOptions): Promise<AdminWorker> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWorkerOnce(name, probe, db, options);
    } catch (e) {
      if (attempt >= 3 || !/SQLITE_BUSY|database is locked/.test(String(e))) throw e;
      console.warn(`[browser] the ${name} Worker hit a locked local database at start-up; trying again (${attempt + 1}/3)`);
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

async function startWorkerOnce(name: "admin" | "storefront" | "worker", probe: string, db: Db, options: WorkerOptions): Promise<AdminWorker> {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const ownState = options.persistTo === undefined;
  const persistTo = options.persistTo ?? fs.mkdtempSync(path.join(os.tmpdir(), "commerce-browser-"));
  const vars: Record<string, string> = {
    APP_ENV: "test",
    PAYMENT_GATEWAY: "local",
    LOCAL_GATEWAY_SECRET: "local-gateway-test-secret",
    COURIER: "local",
    LOCAL_COURIER_SECRET: "local-courier-test-secret",
    APP_WEBHOOK_ROOT_SECRET: "local-app-webhook-test-root-secret-0000",
    EMAIL_LINK_SECRET: "local-email-link-test-secret-0000",
    UCP_SIGNING_ROOT_SECRET: "local-ucp-test-root-secret-000000000",
    DOMAIN_DNS: "local",
    DOMAIN_ROUTER: "local",
    LOG_LEVEL: "warn",
    DATABASE_URL: db.databaseUrl,
    ...(db.wsProxy ? { DB_WS_PROXY: db.wsProxy } : {}),
  };
  const args = [
    "dev", "--env", name, "--port", String(port), "--ip", "127.0.0.1",
    "--inspector-port", String(inspectorPort), "--persist-to", persistTo,
    "--show-interactive-dev-session=false",
    ...(name === "worker" ? ["--test-scheduled"] : []),
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const child: ChildProcess = spawn(path.join(ROOT, "node_modules", ".bin", "wrangler"), args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0" },
  });

  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim()) lines.push(line);
    }
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

  const killGroup = () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", killGroup);

  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    process.removeListener("exit", killGroup);
    await stopWorkerProcesses([child]);
    if (ownState) fs.rmSync(persistTo, { recursive: true, force: true });
  };
  const output = () => lines.slice(-40).join("\n");

  const exited = new Promise<"exited">((resolve) => child.once("exit", () => resolve("exited")));
  const ready = await Promise.race([waitForHttp(`${url}${probe}`, 60_000), exited]);
  if (ready !== true) {
    await stop();
    throw new Error(`The ${name} Worker did not come up on ${url} (${ready === "exited" ? "wrangler exited" : "60 s timeout"}):\n${output()}`);
  }
  return { url, output, stop };
}
