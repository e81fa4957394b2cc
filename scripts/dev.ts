/**
 * npm run dev: the whole stack in one command.
 * Local Postgres (or DATABASE_URL) -> WebSocket proxy -> migrations -> demo seed -> the three Workers
 * (admin 8787, storefront 8788, worker 8789). Ctrl-C stops everything this command started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { DEV_STACK, ROOT, WORKER_PORTS } from "./lib/config";
import { DEMO_PASSWORD, DEMO_PEOPLE } from "./lib/seed";
import { prepareDatabase, type PreparedDatabase } from "./lib/stack";

type WorkerName = keyof typeof WORKER_PORTS;
const INSPECTOR_PORTS: Record<WorkerName, number> = { admin: 9230, storefront: 9231, worker: 9232 };
const COLORS: Record<WorkerName | "stack", string> = { admin: "35", storefront: "36", worker: "33", stack: "32" };

const tag = (name: WorkerName | "stack") => `\x1b[${COLORS[name]}m[${name}]\x1b[0m`;
const log = (m: string) => console.log(`${tag("stack")} ${m}`);

function prefixLines(name: WorkerName, stream: NodeJS.ReadableStream, out: NodeJS.WriteStream): void {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) out.write(`${tag(name)} ${line}\n`);
  });
}

function startWorker(name: WorkerName, db: PreparedDatabase): ChildProcess {
  const wrangler = path.join(ROOT, "node_modules", ".bin", "wrangler");
  const vars = { APP_ENV: "development", LOG_LEVEL: "info", DATABASE_URL: db.appUrl, ...(db.wsProxy ? { DB_WS_PROXY: db.wsProxy } : {}) };
  const args = [
    "dev", "--env", name, "--port", String(WORKER_PORTS[name]), "--ip", "127.0.0.1",
    "--inspector-port", String(INSPECTOR_PORTS[name]), "--persist-to", path.join(ROOT, ".data", "wrangler"),
    "--show-interactive-dev-session=false",
    ...(name === "worker" ? ["--test-scheduled"] : []),
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const child = spawn(wrangler, args, {
    cwd: ROOT,
    detached: true, // its own process group, so workerd goes down with it
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0" },
  });
  prefixLines(name, child.stdout!, process.stdout);
  prefixLines(name, child.stderr!, process.stderr);
  return child;
}

async function waitForHttp(url: string, timeoutMs: number): Promise<boolean> {
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

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const db = await prepareDatabase({ stack: DEV_STACK, seed: true, allowRemote: true, log });
  const children = new Map<WorkerName, ChildProcess>();
  let stopping = false;

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log("Stopping…");
    for (const child of children.values()) killGroup(child, "SIGTERM");
    const exited = Promise.all([...children.values()].map((c) => (c.exitCode !== null ? Promise.resolve() : new Promise((r) => c.once("exit", r)))));
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    for (const child of children.values()) killGroup(child, "SIGKILL");
    await db.release();
    log("Stopped. Nothing left running.");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  for (const name of Object.keys(WORKER_PORTS) as WorkerName[]) {
    const child = startWorker(name, db);
    children.set(name, child);
    child.on("exit", (code) => {
      if (!stopping) {
        log(`${name} exited unexpectedly (code ${code}); stopping the stack.`);
        void stop(1);
      }
    });
  }

  const ready = await Promise.all(
    (Object.keys(WORKER_PORTS) as WorkerName[]).map((name) => waitForHttp(`http://127.0.0.1:${WORKER_PORTS[name]}/`, 120_000)),
  );
  if (ready.some((ok) => !ok)) {
    log("A Worker did not come up within 2 minutes; see its output above.");
    return stop(1);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const people = DEMO_PEOPLE.map((p) => `    ${p.email.padEnd(18)} ${p.role.padEnd(6)} of ${p.store}`).join("\n");
  console.log(`
${tag("stack")} Ready in ${seconds} s.

  Admin        http://localhost:${WORKER_PORTS.admin}/login
  Storefront   http://demo.localhost:${WORKER_PORTS.storefront}/   (or: curl -H 'Host: demo.localhost' localhost:${WORKER_PORTS.storefront}/)
  Worker       http://localhost:${WORKER_PORTS.worker}/health
  Cron         http://localhost:${WORKER_PORTS.worker}/__scheduled?cron=*+*+*+*+*
  Postgres     ${db.wsProxy ? `127.0.0.1:${DEV_STACK.pgPort} (database ${DEV_STACK.database}), via ws proxy ${db.wsProxy}` : "DATABASE_URL"}

  Demo sign-ins (password: ${DEMO_PASSWORD})
${people}

  Ctrl-C stops everything.
`);
}

main().catch((e: unknown) => {
  console.error(`${tag("stack")} ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
