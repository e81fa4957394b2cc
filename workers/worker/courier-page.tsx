import { Hono, type Context } from "hono";
import { sameSiteOnly } from "#shared/http/csrf";
import { Page } from "#shared/http/page";
import type { ShipmentStatus } from "#shared/rules/status";
import { sendLocalWebhook } from "#shared/payments/local-protocol";
import { isCourierError } from "#shared/shipping/courier";
import { buildLocalCourierWebhook, localRefStoreId, readLocalShipmentRef } from "#shared/shipping/local-protocol";
import type { WorkerHonoEnv } from "./env";

/**
 * The local courier's tracking page (development and tests only; docs/shipping.md): what a courier's
 * tracking and its scans are to the merchant. Each button sends the courier's signed webhook for that
 * status to this worker's `POST /webhooks/shipments/local/<storeId>` (LOCAL_COURIER_BEHAVIOUR's
 * webhookDeliveries and webhookDelayMs apply) and shows the worker's answer.
 */
type WorkerContext = Context<WorkerHonoEnv>;

/** Hands the webhook to the worker's route: the worker's own fetch handler, so no request leaves the isolate. */
export type DeliverWebhook = (request: Request, c: WorkerContext) => Promise<Response>;

const BUTTONS: readonly (readonly [ShipmentStatus, string])[] = [
  ["in_transit", "In transit"],
  ["delivered", "Delivered"],
  ["rto_initiated", "RTO initiated"],
  ["rto_delivered", "RTO delivered"],
];

async function opened(c: WorkerContext) {
  let config;
  try {
    config = c.var.providers.courierConfig();
  } catch {
    return null; // not development or test, or no local courier configured: the page does not exist
  }
  if (config.provider !== "local") return null;
  const ref = c.req.param("ref") ?? "";
  const storeId = localRefStoreId(ref);
  if (!storeId) return null;
  const store = await c.var.providers.storeCourier(storeId);
  const read = await readLocalShipmentRef(ref, store.webhookSecret);
  return read && read.storeId === storeId ? { store, read, behaviour: config.behaviour ?? {} } : null;
}

type Opened = NonNullable<Awaited<ReturnType<typeof opened>>>;

function refused(c: WorkerContext, status: 403 | 404, message: string) {
  c.header("cache-control", "no-store");
  return c.html(
    <Page title="Local courier">
      <div class="card">
        <h1>{status === 404 ? "Page not found" : "Request refused"}</h1>
        <p>{message}</p>
      </div>
    </Page>,
    status,
  );
}

async function trackingPage(c: WorkerContext, o: Opened, sent?: { status: ShipmentStatus; eventId: string; answers: string[] }) {
  const report = await o.store.courier.track(o.read.awb).catch((e: unknown) => (isCourierError(e) ? `tracking failed (${e.kind})` : "tracking failed"));
  c.header("cache-control", "no-store");
  return c.html(
    <Page title={`Shipment ${o.read.awb}`}>
      <div class="card">
        <h1>Local courier</h1>
        <p class="muted">Make-believe parcels for development: nothing moves.</p>
        <p>
          AWB <strong data-awb>{o.read.awb}</strong> · order #{o.read.orderNumber} · to {o.read.destination}
        </p>
        <p>
          The courier reports: <strong data-status>{typeof report === "string" ? report : report.providerStatus}</strong>
        </p>
        <form method="post">
          {BUTTONS.map(([status, label]) => (
            <>
              <button type="submit" name="status" value={status}>
                {label}
              </button>{" "}
            </>
          ))}
        </form>
        {sent && (
          <div data-sent>
            <p>
              Sent <strong>{sent.status}</strong> (event {sent.eventId}).
            </p>
            {sent.answers.map((answer) => (
              <pre>{answer}</pre>
            ))}
          </div>
        )}
      </div>
    </Page>,
  );
}

export function courierPage(deliver: DeliverWebhook) {
  const page = new Hono<WorkerHonoEnv>();

  // The buttons are same-site only (CSRF, shared/http/csrf.ts): another site's post is refused (403), or
  // answered 404 where there is no such shipment, as the page itself answers.
  page.use(
    "/-courier/track/:ref",
    sameSiteOnly(async (c: WorkerContext) =>
      (await opened(c)) ? refused(c, 403, "Cross-site request refused. Use the tracking page itself.") : refused(c, 404, "No such shipment with the local courier."),
    ),
  );

  page.get("/-courier/track/:ref", async (c) => {
    const o = await opened(c);
    return o ? trackingPage(c, o) : refused(c, 404, "No such shipment with the local courier.");
  });

  page.post("/-courier/track/:ref", async (c) => {
    const o = await opened(c);
    if (!o) return refused(c, 404, "No such shipment with the local courier.");
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const status = BUTTONS.find(([s]) => s === form["status"])?.[0];
    if (!status) return trackingPage(c, o);
    const hook = await buildLocalCourierWebhook({ storeId: o.read.storeId, awb: o.read.awb, status, secret: o.store.webhookSecret, workerOrigin: new URL(c.req.url).origin });
    const answers: string[] = [];
    const delivery = sendLocalWebhook(hook, {
      deliveries: o.behaviour.webhookDeliveries,
      delayMs: o.behaviour.webhookDelayMs,
      fetch: async (request) => {
        const response = await deliver(request, c);
        answers.push(`The worker answered ${response.status}: ${await response.text()}`);
        return response;
      },
    });
    const log = c.var.log;
    const sent = delivery.catch((e: unknown) => log.warn("local_courier.webhook_failed", { error: String(e) }));
    // A late delivery must not hold the page; the others are shown with the worker's answer.
    if (o.behaviour.webhookDelayMs) {
      c.var.defer(sent);
      answers.push(`Delivery in ${o.behaviour.webhookDelayMs} ms; reload to see what the courier reports.`);
    } else await sent;
    return trackingPage(c, o, { status, eventId: hook.eventId, answers });
  });

  return page;
}
