/**
 * The outbox relay (issue 12), against the worker under wrangler dev with its 5 s alarm loop armed:
 *
 * - commit → message: a payment webhook on the worker commits `order.paid`; its commit sends a nudge, the
 *   relay runs at once and the notifications consumer sends `payment_received` to the local mailbox. The
 *   same with the event written straight into Postgres (no runtime, so no nudge): the 5 s tick picks it up.
 *   Measured from the commit to the outbox row marked relayed, and to the notification marked sent.
 * - throughput: 1 000 events written at once for 1 store, then 10 each for 100 stores; events per second
 *   from the first row relayed to the last.
 *
 * Times are polled from Postgres every 10 ms (the owner's connection, not the Workers').
 */
import pg from "pg";
import { deriveLocalSecret } from "#shared/payments/local-protocol";
import { buildLocalWebhook } from "#shared/payments/local-protocol";
import { post } from "./checkout";
import { PORTS, send } from "./http";

const SAMPLES = 20;
const POLL_MS = 10;

interface Summary {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: at(1) };
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await check()) return performance.now() - started;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`not done within ${timeoutMs} ms`);
}

/** A placed, unpaid gateway order of the demo store with its local gateway reference. */
async function placeGatewayOrder(variantId: string): Promise<{ orderId: string; ref: string }> {
  const added = await post("/api/cart/lines", { variantId, quantity: 1 });
  const placed = await post(
    "/api/checkout",
    { email: `relay-${crypto.randomUUID().slice(0, 8)}@example.test`, paymentMethod: "gateway", shippingAddress: { name: "Bench", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" } },
    added.cookie,
  );
  const body = JSON.parse(placed.body) as { order: { id: string }; payment: { redirectUrl?: string } };
  const ref = body.payment.redirectUrl?.split("/-gateway/pay/")[1];
  if (placed.status !== 201 || !ref) throw new Error(`checkout: ${placed.status} ${placed.body.slice(0, 200)}`);
  return { orderId: body.order.id, ref: decodeURIComponent(ref) };
}

/**
 * A webhook delivery, sent again while wrangler dev reloads the worker's runtime under it (it answers 503
 * "restarted mid-request" itself, or the socket hangs up): the webhook is idempotent, a repeated delivery
 * is answered as a duplicate. At most 5 tries, 2 s apart; any other answer is returned as it is.
 */
async function deliver(sendIt: () => Promise<{ status: number; body: string }>, what: string): Promise<{ status: number; body: string }> {
  for (let attempt = 1; ; attempt++) {
    const answer = await sendIt().catch((e: unknown) => ({ status: 0, body: String(e) }));
    const reloading = (answer.status === 503 && answer.body.includes("restarted mid-request")) || (answer.status === 0 && /hang up|ECONNRESET|ECONNREFUSED/.test(answer.body));
    if (!reloading || attempt === 5) return answer;
    console.log(`[bench] Relay: wrangler dev reloaded the worker under ${what}; sending it again`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

export async function relayBench(ownerUrl: string, log: (m: string) => void) {
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  try {
    const q = async <R extends pg.QueryResultRow>(storeId: string, text: string, values: unknown[] = []): Promise<R[]> => {
      const client = await owner.connect();
      try {
        await client.query("begin");
        await client.query("select set_config('app.store_id', $1, true)", [storeId]);
        const { rows } = await client.query<R>(text, values);
        await client.query("commit");
        return rows;
      } catch (e) {
        await client.query("rollback");
        throw e;
      } finally {
        client.release();
      }
    };
    const storeId = (await owner.query<{ id: string }>("select id from store where slug = 'demo'")).rows[0]!.id;
    const variantId = (
      await q<{ id: string }>(storeId, "select v.id from product_variant v join product p on p.id = v.product_id where p.handle = 'cotton-kurta' and not v.preorder order by v.position limit 1")
    )[0]!.id;
    const secret = await deriveLocalSecret("local-gateway-development-secret", storeId);
    const workerOrigin = `http://127.0.0.1:${PORTS.worker}`;
    const relayedOf = async (orderId: string) =>
      (await q<{ done: boolean }>(storeId, "select processed_at is not null as done from outbox_event where kind = 'order.paid' and payload->>'orderId' = $1 order by seq desc limit 1", [orderId]))[0]?.done === true;
    const sentOf = async (orderId: string, n: number) =>
      Number(
        (
          await q<{ n: string }>(
            storeId,
            "select count(*) as n from notification x join outbox_event e on e.id = x.event_id where x.template = 'payment_received' and x.status = 'sent' and e.payload->>'orderId' = $1",
            [orderId],
          )
        )[0]!.n,
      ) >= n;

    // What the benches before wrote (checkouts' events) goes out first, in order: wait for the backlog to drain.
    // The owner is bound by row-level security like everyone: counts are read store by store.
    const pending = async () => Number((await q<{ n: string }>(storeId, "select count(*) as n from outbox_event where processed_at is null and dead_at is null"))[0]!.n);
    log(`Relay: draining ${await pending()} events the benches before wrote…`);
    await until(async () => (await pending()) === 0, 300_000);
    await new Promise((r) => setTimeout(r, 5_000));
    log(`Relay: ${SAMPLES} payments through the worker's webhook (nudged), ${SAMPLES} events written straight to Postgres (tick only)…`);
    const nudged = { relayed: [] as number[], sent: [] as number[] };
    const ticked = { relayed: [] as number[], sent: [] as number[] };
    for (let i = 0; i < SAMPLES; i++) {
      const { orderId, ref } = await placeGatewayOrder(variantId);
      const hook = (await buildLocalWebhook({ providerRef: ref, outcome: "captured", secret, workerOrigin }))!;
      const answer = await deliver(() => send(hook.url, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": `10.9.${i}.1` }, body: hook.body }), `webhook ${i + 1}`);
      if (answer.status !== 200) throw new Error(`webhook: ${answer.status} ${answer.body.slice(0, 200)}`);
      const t0 = performance.now();
      await until(() => relayedOf(orderId), 20_000);
      nudged.relayed.push(performance.now() - t0);
      await until(() => sentOf(orderId, 1), 20_000);
      nudged.sent.push(performance.now() - t0);
      // The same order paid "again" by a row written outside any runtime: no nudge, the tick takes it.
      await q(storeId, "insert into outbox_event (store_id, kind, payload) values ($1, 'order.paid', jsonb_build_object('orderId', $2::text))", [storeId, orderId]);
      const t1 = performance.now();
      await until(() => relayedOf(orderId), 20_000);
      ticked.relayed.push(performance.now() - t1);
      await until(() => sentOf(orderId, 2), 20_000);
      ticked.sent.push(performance.now() - t1);
    }

    /** A commit in the worker (a payment webhook), whose nudge runs the relay now. */
    const nudge = async (i: number) => {
      const { ref } = await placeGatewayOrder(variantId);
      const hook = (await buildLocalWebhook({ providerRef: ref, outcome: "captured", secret, workerOrigin }))!;
      const answer = await deliver(() => send(hook.url, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": `10.8.${i}.1` }, body: hook.body }), `nudge ${i + 1}`);
      if (answer.status !== 200) throw new Error(`webhook: ${answer.status} ${answer.body.slice(0, 200)}`);
    };
    /**
     * Events written at once, then a nudge; from the database's clock at the nudge to the last row's
     * processed_at (the relay stamps the real time it relayed each batch).
     */
    const throughput = async (stores: string[], perStore: number, i: number) => {
      const marker = `bench-${Date.now()}`;
      for (const id of stores) {
        await q(id, "insert into outbox_event (store_id, kind, payload) select $1, 'order.paid', jsonb_build_object('orderId', gen_random_uuid(), 'bench', $2::text) from generate_series(1, $3)", [id, marker, perStore]);
      }
      const startedAt = (await owner.query<{ at: Date }>("select clock_timestamp() as at")).rows[0]!.at;
      await nudge(i);
      const last = stores.at(-1)!;
      const left = async (id: string) => Number((await q<{ n: string }>(id, "select count(*) as n from outbox_event where payload->>'bench' = $1 and processed_at is null", [marker]))[0]!.n);
      await until(async () => (await left(last)) === 0, 120_000);
      let endedAt = startedAt;
      for (const id of stores) {
        await until(async () => (await left(id)) === 0, 120_000);
        const [row] = await q<{ at: Date }>(id, "select max(processed_at) as at from outbox_event where payload->>'bench' = $1", [marker]);
        if (row!.at > endedAt) endedAt = row!.at;
      }
      const total = stores.length * perStore;
      const seconds = Math.max(0.001, (endedAt.getTime() - startedAt.getTime()) / 1000);
      return { stores: stores.length, events: total, seconds: Math.round(seconds * 1000) / 1000, eventsPerSecond: Math.round(total / seconds) };
    };
    log("Relay throughput: 1 000 events for 1 store, then 10 each for 100 stores…");
    const one = await throughput([storeId], 1000, 1);
    const many: string[] = [];
    for (let i = 0; i < 100; i++) {
      const id = crypto.randomUUID();
      await q(id, "insert into store (id, slug, name, currency) values ($1, $2, $3, 'INR') on conflict do nothing", [id, `relay-bench-${id.slice(0, 8)}`, `Relay bench ${i}`]);
      many.push(id);
    }
    const hundred = await throughput(many, 10, 2);
    for (const id of many) await q(id, "delete from store where id = $1", [id]);
    return {
      goal: "commit → notification queued (relayed): p95 ≤ 1 s with nudges",
      commitToRelayedMs: { withNudges: summarize(nudged.relayed), withoutNudges: summarize(ticked.relayed) },
      commitToSentMs: { withNudges: summarize(nudged.sent), withoutNudges: summarize(ticked.sent) },
      throughput: { oneStore: one, hundredStores: hundred },
      note: "With nudges: a payment webhook on the worker commits order.paid; the commit's nudge runs the relay at once, which queues payment_received; the notifications consumer sends it to the local mailbox. Without: the event is written straight into Postgres, so only the 5 s alarm loop finds it. Throughput: events written at once, then a payment webhook whose nudge runs the relay; from the database clock at the nudge to the last row's processed_at (each also becomes a notifications message, whose consumer finds no such order and skips it).",
    };
  } finally {
    await owner.end();
  }
}
