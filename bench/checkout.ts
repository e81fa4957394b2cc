/**
 * Checkout throughput (issue 11): buyers placing orders at once through the storefront Worker
 * (`POST /api/checkout`, the local gateway) against the same code and SQL run directly from Node in the
 * same run: `placeOrder` in one store unit, the local gateway's payment, the attempt moved to pending in a
 * second unit, from Node with node-postgres over TCP straight to Postgres (the floor: no WebSocket, no
 * proxy). Both open one connection per checkout, as a Worker request does. Carts are made beforehand.
 */
import http from "node:http";
import { neonConfig } from "@neondatabase/serverless";
import pg from "pg";
import ws from "ws";
import { sha256Hex } from "#shared/core/tokens";
import { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { placeOrder, type CheckoutInput } from "#shared/orders/checkout";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentStatus } from "#shared/orders/routines";
import { storeGateway } from "#shared/payments/select";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import { PORTS } from "./http";

const HOST = "demo.localhost";
/** A buyer's order: each its own email, as the store holds at most 3 unpaid orders per email (decision 0020). */
const inputFor = (): CheckoutInput => ({
  email: `bench-${crypto.randomUUID().slice(0, 8)}@example.test`,
  shippingAddress: { name: "Bench Buyer", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
  paymentMethod: "gateway",
});

let buyers = 0;
/**
 * A new shopper as the storefront sees one: an address of its own (TEST-NET-2) and the local person check's
 * passing token, so the shopper limits (decision 0019) count each bench buyer apart, as a crowd of people is.
 */
export function buyerHeaders(): Record<string, string> {
  const i = buyers++;
  return { "cf-connecting-ip": `198.51.${(i >> 8) & 255}.${i & 255}`, "cf-turnstile-response": DUMMY_TOKEN };
}
/** The same as the dev and bench Workers' variables (scripts/lib/workers.ts). */
const GATEWAY = { provider: "local", rootSecret: "local-gateway-development-secret" } as const;

const crowd = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(path: string, body: unknown, cookie?: string, headers: Record<string, string> = buyerHeaders()): Promise<{ status: number; body: string; cookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `http://127.0.0.1:${PORTS.storefront}${path}`,
      { agent: crowd, method: "POST", headers: { host: HOST, "content-type": "application/json", ...headers, ...(cookie ? { cookie } : {}) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          const set = res.headers["set-cookie"]?.find((c) => c.startsWith("wc_cart="))?.split(";")[0];
          resolve({ status: res.statusCode ?? 0, body: text, ...(set ? { cookie: set } : {}) });
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** Runs `jobs` with `concurrency` at once; answers each job's latency and the wall time. */
async function crowdRun(jobs: (() => Promise<void>)[], concurrency: number): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const t = performance.now();
        await job();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (n: number) => Math.round(n * 100) / 100;

/**
 * The floor for "the same SQL": node-postgres straight to Postgres over TCP (no WebSocket, no proxy), with
 * the same unit-of-work code (`withStore` needs only `connect()`), one connection per checkout.
 */
function directDatabase(url: string): () => Database {
  return () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    return { connect: () => pool.connect(), onStorefrontChange: undefined, close: () => pool.end() } as unknown as Database;
  };
}

export async function checkoutBench(db: { appUrl: string; wsProxy?: string }, floorP50: number, log: (m: string) => void) {
  const direct = directDatabase(db.appUrl);
  neonConfig.webSocketConstructor = ws as unknown as typeof WebSocket;
  const config = { url: db.appUrl, wsProxy: db.wsProxy };
  const admin = new Database(config);
  const { rows } = await admin.pool.query<{ id: string }>("select privileged.store_id_by_hostname($1) as id", [HOST]);
  const storeId = rows[0]!.id;
  // A variant with plenty of stock at the online location, so no checkout is refused for stock.
  const variantId = await withStore(admin, storeId, async (tx) => {
    const { rows: v } = await tx.$client.query<{ id: string }>(
      `select v.id from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
       where p.handle = 'cotton-kurta' and not v.preorder order by v.position limit 1`,
    );
    await tx.$client.query(
      "update inventory_level il set on_hand = 10000000 from location l where l.store_id = il.store_id and l.id = il.location_id and l.sells_online and il.variant_id = $1",
      [v[0]!.id],
    );
    return v[0]!.id;
  });

  const viaWorker = async (n: number) => {
    const carts: string[] = [];
    for (let i = 0; i < n; i++) {
      const added = await post("/api/cart/lines", { variantId, quantity: 1 });
      if (added.status !== 200 || !added.cookie) throw new Error(`cart add: ${added.status} ${added.body.slice(0, 200)}`);
      carts.push(added.cookie);
    }
    return carts.map((cookie) => async () => {
      const res = await post("/api/checkout", inputFor(), cookie);
      if (res.status !== 201) throw new Error(`checkout: ${res.status} ${res.body.slice(0, 300)}`);
    });
  };
  const viaNode = async (n: number) => {
    const tokens: string[] = [];
    for (let i = 0; i < n; i++) {
      const token = (crypto.randomUUID() + crypto.randomUUID()).replace(/-/g, "").slice(0, 43);
      await withStore(admin, storeId, async (tx) => {
        const cart = await tx.$client.query<{ id: string }>("insert into cart (store_id, token_hash, currency) values ($1, $2, 'INR') returning id", [storeId, await sha256Hex(token)]);
        await tx.$client.query("insert into cart_line (store_id, cart_id, variant_id, quantity) values ($1, $2, $3, 1)", [storeId, cart.rows[0]!.id, variantId]);
      });
      tokens.push(token);
    }
    const sg = await storeGateway(GATEWAY, storeId);
    return tokens.map((token) => async () => {
      const conn = direct(); // one connection per checkout, as a Worker request has
      try {
        const placed = await withStore(conn, storeId, (tx) => placeOrder(tx, token, inputFor(), "local", new Date()));
        const created = await sg.gateway.createPayment(paymentRequest(placed.order, placed.attempt, `http://${HOST}/api/checkout/${placed.order.id}/confirm`));
        await withStore(conn, storeId, (tx) => applyPaymentStatus(tx, placed.attempt.id, "pending", "gateway", { providerRef: created.providerRef }));
      } finally {
        // Closed after the answer, as a Worker closes its database in waitUntil: not part of the checkout.
        void conn.close();
      }
    });
  };

  const runs: Record<string, unknown>[] = [];
  let latencyAtOne = 0;
  for (const concurrency of [1, 10, 50]) {
    const n = Math.max(40, concurrency * 4);
    log(`Checkout: ${n} orders with ${concurrency} buyers at once, through the Worker and directly…`);
    const worker = await crowdRun(await viaWorker(n), concurrency);
    const node = await crowdRun(await viaNode(n), concurrency);
    const workerRate = (n / worker.wallMs) * 1000;
    const nodeRate = (n / node.wallMs) * 1000;
    if (concurrency === 1) latencyAtOne = p50(worker.latencies);
    runs.push({
      concurrency,
      orders: n,
      workerOrdersPerSecond: round(workerRate),
      directOrdersPerSecond: round(nodeRate),
      workerShareOfDirect: round(workerRate / nodeRate),
      workerP50Ms: round(p50(worker.latencies)),
      directP50Ms: round(p50(node.latencies)),
    });
  }
  await admin.close();
  return {
    goal: "Worker throughput >= 50 % of the same SQL run directly from Node",
    runs,
    latency: { checkoutP50Ms: round(latencyAtOne), floorP50Ms: floorP50, vsFloorP50: round(latencyAtOne / floorP50) },
    note: "POST /api/checkout on demo.localhost (one line, the local gateway) vs placeOrder + the gateway + the pending update from Node with node-postgres over TCP straight to Postgres (no WebSocket, no proxy), each checkout on its own connection. All orders are for one variant at one location, so concurrent checkouts queue on its stock row: the throughput at 10 and 50 measures that serialisation as much as either path.",
  };
}
