import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { ROOT, WORKER_PORTS } from "./config";
import type { PreparedDatabase } from "./stack";

export type WorkerName = "admin" | "storefront" | "worker";

export interface WorkerProcessOptions {
  name: WorkerName;
  port: number;
  inspectorPort: number;
  db: PreparedDatabase;
  logLevel?: string;
  /** The worker Worker's port, for the local gateway's webhooks and the local courier's page (default 8789). */
  workerPort?: number;
  /** Receives each line the process prints (stdout and stderr). */
  onLine?: (line: string, stream: "out" | "err") => void;
}

function forwardLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) onLine(line);
  });
}

/** One `wrangler dev --env <name>` in its own process group (so workerd goes down with it). */
export function startWorkerProcess(o: WorkerProcessOptions): ChildProcess {
  const wrangler = path.join(ROOT, "node_modules", ".bin", "wrangler");
  const vars: Record<string, string> = {
    APP_ENV: "development",
    LOG_LEVEL: o.logLevel ?? "info",
    // The local payment gateway: make-believe payments, allowed only in development and tests.
    PAYMENT_GATEWAY: "local",
    LOCAL_GATEWAY_SECRET: "local-gateway-development-secret",
    // Where the local gateway's page sends its webhooks: the worker of this stack.
    PAYMENT_WEBHOOK_ORIGIN: `http://127.0.0.1:${o.workerPort ?? WORKER_PORTS.worker}`,
    // The local courier: make-believe parcels, allowed only in development and tests; its tracking page is on the worker.
    COURIER: "local",
    LOCAL_COURIER_SECRET: "local-courier-development-secret",
    LOCAL_COURIER_ORIGIN: `http://127.0.0.1:${o.workerPort ?? WORKER_PORTS.worker}`,
    // App webhooks' signing root: development only (production refuses local-app-webhook-* values).
    APP_WEBHOOK_ROOT_SECRET: "local-app-webhook-development-root-secret",
    // Marketing messages' unsubscribe links: development only (production refuses local-email-link-* values).
    EMAIL_LINK_SECRET: "local-email-link-development-secret",
    // UCP (agents that buy): the root the stores' signing keys are sealed under; development only (production refuses local-ucp-*).
    UCP_SIGNING_ROOT_SECRET: "local-ucp-development-root-secret-0000",
    // Custom domains: the local DNS (TXT records set on Settings → Domains) and router, both in the HOSTS KV.
    DOMAIN_DNS: "local",
    DOMAIN_ROUTER: "local",
    DATABASE_URL: o.db.appUrl,
    ...(o.db.wsProxy ? { DB_WS_PROXY: o.db.wsProxy } : {}),
  };
  const args = [
    "dev", "--env", o.name, "--port", String(o.port), "--ip", "127.0.0.1",
    "--inspector-port", String(o.inspectorPort), "--persist-to", path.join(ROOT, ".data", "wrangler"),
    "--show-interactive-dev-session=false",
    ...(o.name === "worker" ? ["--test-scheduled"] : []),
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const child = spawn(wrangler, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0" },
  });
  const onLine = o.onLine ?? (() => {});
  forwardLines(child.stdout!, (l) => onLine(l, "out"));
  forwardLines(child.stderr!, (l) => onLine(l, "err"));
  return child;
}

export async function waitForHttp(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      // A refused connection fails at once; a Worker still starting may take seconds to answer its first
      // request, so the probe waits for the whole answer rather than hanging up on it (which workerd reports
      // as a broken pipe).
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      await res.arrayBuffer();
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  return false;
}

/** SIGTERM the process groups, wait up to `graceMs`, then SIGKILL whatever is left. */
export async function stopWorkerProcesses(children: ChildProcess[], graceMs = 5_000): Promise<void> {
  const signal = (child: ChildProcess, sig: NodeJS.Signals) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  for (const c of children) signal(c, "SIGTERM");
  const exited = Promise.all(
    children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once("exit", r)))),
  );
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  for (const c of children) signal(c, "SIGKILL");
}

/**
 * A local stand-in for Cron Triggers (wrangler dev fires none by itself): each of the worker's cron
 * expressions is fired through `/__scheduled` when due, checked every 15 s, and the every-minute one at
 * once, which arms the Scheduler's alarm loop (the 5 s outbox relay). Returns a stop function.
 */
export function fireCronsLocally(workerUrl: string, crons: readonly string[], onError: (message: string) => void = () => {}): () => void {
  const fire = (cron: string) =>
    fetch(`${workerUrl}/__scheduled?cron=${encodeURIComponent(cron).replace(/%20/g, "+")}`).then(
      (res) => void (res.ok || onError(`cron ${cron}: HTTP ${res.status}`)),
      (e: unknown) => onError(`cron ${cron}: ${String(e)}`),
    );
  const lastMinute = new Map<string, number>();
  const tick = () => {
    const now = new Date();
    const minute = Math.floor(now.getTime() / 60_000);
    for (const cron of crons) {
      if (lastMinute.get(cron) === minute || !cronMatches(cron, now)) continue;
      lastMinute.set(cron, minute);
      void fire(cron);
    }
  };
  tick();
  const timer = setInterval(tick, 15_000);
  return () => clearInterval(timer);
}

/** Whether a five-field cron expression (numbers, `*`, `*\/n`) matches this minute, in UTC as Cloudflare's do. */
export function cronMatches(cron: string, at: Date): boolean {
  const fields = cron.trim().split(/\s+/);
  const values = [at.getUTCMinutes(), at.getUTCHours(), at.getUTCDate(), at.getUTCMonth() + 1, at.getUTCDay()];
  return fields.length === 5 && fields.every((field, i) => {
    if (field === "*") return true;
    const step = /^\*\/(\d+)$/.exec(field);
    if (step) return values[i]! % Number(step[1]) === 0;
    return field.split(",").some((part) => Number(part) === values[i]);
  });
}
