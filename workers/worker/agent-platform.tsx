import { Hono, type Context } from "hono";
import { Page } from "#shared/http/page";
import { UCP_VERSION } from "#shared/ucp/profile";
import type { WorkerHonoEnv } from "./env";

/**
 * A local AI agent platform (development and tests only; docs/ucp.md "Try it locally"): what a shopper's
 * agent platform is to a store that sells over UCP. `GET /-agent/profile.json` is its platform profile, which
 * a store's UCP endpoints fetch when a request names it in `UCP-Agent` (a store accepts this local http URL
 * only with APP_ENV development); the profile's order capability names `POST /-agent/orders`, where the
 * stores' signed order updates arrive. `GET /-agent/orders` lists the last 50 received, newest first, with
 * the order, its state and the signature's key id. Kept in this isolate's memory: a restart forgets them.
 * In production there is no such page (404), as for the local gateway and courier.
 */
type AgentContext = Context<WorkerHonoEnv>;

interface Received {
  at: string;
  orderId: string;
  checkoutId: string;
  state: string;
  keyId: string | null;
  webhookId: string | null;
}

const received: Received[] = [];
const KEEP = 50;

const isLocal = (c: AgentContext) => c.env.APP_ENV === "development" || c.env.APP_ENV === "test";

export const agentPlatform = new Hono<WorkerHonoEnv>();

agentPlatform.use("/-agent/*", async (c, next) => {
  if (!isLocal(c)) return c.notFound();
  await next();
  c.header("cache-control", "no-store");
});

agentPlatform.get("/-agent/profile.json", (c) => {
  const origin = new URL(c.req.url).origin;
  return c.json({
    ucp: {
      version: UCP_VERSION,
      services: {},
      capabilities: {
        "dev.ucp.shopping.checkout": [{ version: UCP_VERSION }],
        "dev.ucp.shopping.order": [{ version: UCP_VERSION, config: { webhook_url: `${origin}/-agent/orders` } }],
      },
      payment_handlers: {},
    },
    keys: [],
  });
});

/** The order's state as the update shows it: its adjustments and fulfilment events, else its lines'. */
function stateOf(order: Record<string, unknown>): string {
  const adjustments = Array.isArray(order["adjustments"]) ? (order["adjustments"] as Record<string, unknown>[]) : [];
  const events = Array.isArray((order["fulfillment"] as Record<string, unknown> | undefined)?.["events"]) ? ((order["fulfillment"] as Record<string, unknown>)["events"] as Record<string, unknown>[]) : [];
  const last = [...adjustments.map((a) => String(a["type"])), ...events.map((e) => String(e["type"]))].at(-1);
  const lines = Array.isArray(order["line_items"]) ? (order["line_items"] as Record<string, unknown>[]) : [];
  return last ?? lines.map((l) => String(l["status"])).join(", ");
}

agentPlatform.post("/-agent/orders", async (c) => {
  const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
  if (!body || typeof body["id"] !== "string") return c.json({ code: "invalid_request", content: "Send the order entity as JSON." }, 400);
  const keyId = /keyid="([^"]{1,100})"/.exec(c.req.header("signature-input") ?? "")?.[1] ?? null;
  received.unshift({
    at: new Date().toISOString(),
    orderId: body["id"],
    checkoutId: typeof body["checkout_id"] === "string" ? body["checkout_id"] : "",
    state: stateOf(body),
    keyId,
    webhookId: c.req.header("webhook-id") ?? null,
  });
  received.length = Math.min(received.length, KEEP);
  c.var.log.info("agent_platform.order_update", { orderId: body["id"], state: received[0]!.state, signed: keyId !== null });
  return c.body(null, 204);
});

agentPlatform.get("/-agent/orders", (c) => {
  if ((c.req.header("accept") ?? "").includes("application/json")) return c.json({ received });
  return c.html(
    <Page title="Local agent platform · order updates">
      <div class="card">
        <h1>Order updates received</h1>
        <p class="muted">What a shopper's AI agent platform hears from the stores it bought from (newest first; signed by the store's key).</p>
        {received.length === 0 ? (
          <p>Nothing yet. Complete a checkout session with UCP-Agent: profile="{new URL(c.req.url).origin}/-agent/profile.json", then pay, ship or refund its order.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Order</th>
                <th scope="col">Checkout session</th>
                <th scope="col">State</th>
                <th scope="col">Signed with</th>
              </tr>
            </thead>
            <tbody>
              {received.map((r) => (
                <tr>
                  <td>{r.at}</td>
                  <td>{r.orderId}</td>
                  <td>{r.checkoutId}</td>
                  <td>{r.state}</td>
                  <td>{r.keyId ?? "unsigned"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Page>,
  );
});
