import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { Database } from "#shared/db/database";
import { ADMIN, createToken, sessionFor } from "../../test/admin";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import { proxyStats } from "../../test/proxy";
import worker from "./index";

const db = testDb();
/** The global setup's second proxy: one upstream connection, one place in its queue. */
const tight = inject("tightWsProxy");
const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY: string };

// neonConfig.wsProxy is per isolate (shared/db/database.ts): after a test points a Worker at another
// proxy, point the driver back at the suite's own.
afterEach(() => void new Database({ url: bindings.DATABASE_URL, wsProxy: bindings.DB_WS_PROXY }));

/** Takes the tight proxy's only upstream slot until released, so the next client must queue. */
async function holdTightSlot(): Promise<{ release(): Promise<void> }> {
  const holder = new Database({ url: bindings.DATABASE_URL, wsProxy: tight });
  const client = await holder.connect();
  return {
    async release() {
      client.release();
      await holder.close();
    },
  };
}

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
}

async function ownerTokens(count: number): Promise<string[]> {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push((await createToken(browser, ["products:read"], { name: `burst ${i}` })).token);
  return tokens;
}

/** POST /api/v1/products/list with the token, the Worker's bindings overridden as given. */
function listProducts(token: string, overrides: Record<string, string> = {}): Promise<Response> {
  return call(
    worker,
    `${ADMIN}/api/v1/products/list`,
    { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ json: { pageSize: 1 } }) },
    overrides,
  );
}

async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("1");
  const body = (await res.json()) as { json: Record<string, unknown> };
  expect(body.json).toMatchObject({
    code: "SERVICE_UNAVAILABLE",
    message: "The database is busy; retry in a moment.",
    data: { reason: "database_unavailable" },
  });
}

/** Runs `work` and answers the warning and error lines it logged. */
async function logsOf(work: () => Promise<void>): Promise<{ warn: string[]; error: string[] }> {
  const lines = { warn: [] as string[], error: [] as string[] };
  const warn = vi.spyOn(console, "warn").mockImplementation((l: unknown) => void lines.warn.push(String(l)));
  const error = vi.spyOn(console, "error").mockImplementation((l: unknown) => void lines.error.push(String(l)));
  try {
    await work();
  } finally {
    warn.mockRestore();
    error.mockRestore();
  }
  return lines;
}

describe("database overload answers 503 with Retry-After, never 500", () => {
  it("53300: a role out of connection slots (CONNECTION LIMIT 0)", async () => {
    const [token] = await ownerTokens(1);
    const noSlots = inject("noSlotsDatabaseUrl");
    const logs = await logsOf(async () => expectUnavailable(await listProducts(token!, { DATABASE_URL: noSlots })));
    // One warning, naming the cause; no stack, no connection string, nothing at error level.
    expect(logs.error).toEqual([]);
    expect(logs.warn).toHaveLength(1);
    expect(JSON.parse(logs.warn[0]!)).toMatchObject({ level: "warn", msg: "Database unavailable", cause: "too_many_connections", path: "/api/v1/products/list" });
    expect(logs.warn[0]).not.toMatch(/stack|postgres:\/\/|commerce_no_slots_local/);
  });

  it("admin pages answer the HTML error page with 503 and Retry-After", async () => {
    const store = await makeStore(db);
    const browser = await sessionFor(db, store.ownerUserId, store.id);
    const res = await call(worker, `${ADMIN}/products`, { headers: { cookie: browser.cookie } }, { DATABASE_URL: inject("noSlotsDatabaseUrl") });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain("The database is busy; retry in a moment.");
  });

  it("connect timeout: the pooler queues the client longer than DB_CONNECT_TIMEOUT_MS", async () => {
    const [token] = await ownerTokens(1);
    const overrides = { DB_WS_PROXY: tight, DB_CONNECT_TIMEOUT_MS: "200" };
    const slot = await holdTightSlot();
    try {
      const before = await proxyStats(tight);
      const started = Date.now();
      await expectUnavailable(await listProducts(token!, overrides));
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);
      // The driver gave up and closed its socket: the proxy dropped it from the queue and opened nothing for it.
      const after = await proxyStats(tight);
      expect(after.abandoned - before.abandoned).toBe(1);
      expect(after).toMatchObject({ queued: 0, active: 1, opened: before.opened });
    } finally {
      await slot.release();
    }
    // The same path with the slot free answers normally.
    expect((await listProducts(token!, overrides)).status).toBe(200);
  });

  it("no free connection: the pooler's queue is full and it closes the client at once", async () => {
    const [token] = await ownerTokens(1);
    const slot = await holdTightSlot();
    // A second client takes the tight proxy's one place in the queue.
    const waiting = new Database({ url: bindings.DATABASE_URL, wsProxy: tight, connectTimeoutMs: 10_000 });
    const queued = waiting.connect();
    try {
      await waitFor(async () => (await proxyStats(tight)).queued === 1);
      const before = await proxyStats(tight);
      await expectUnavailable(await listProducts(token!, { DB_WS_PROXY: tight }));
      expect((await proxyStats(tight)).refused - before.refused).toBe(1);
    } finally {
      await slot.release();
      (await queued).release();
      await waiting.close();
    }
    const after = await proxyStats(tight);
    expect(after.peakActive).toBeLessThanOrEqual(1);
  });
});
