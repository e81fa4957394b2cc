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
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
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
