import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "#shared/http/app";
import { courierConfigFromEnv, storeCourier, type StoreCourier } from "#shared/shipping/select";
import { shipmentInput } from "../../test/fakes/shipping";
import { call } from "../../test/call";
import { courierPage } from "./courier-page";
import type { WorkerBindings } from "./env";
import worker from "./index";

/** The local courier's tracking page on the real worker, and its buttons' webhooks. */
const ORIGIN = "http://worker.test";

async function shipment(storeId = crypto.randomUUID()) {
  const store = await storeCourier(courierConfigFromEnv(env as unknown as Record<string, unknown>), storeId);
  const created = await store.courier.createShipment(shipmentInput({ shipmentId: crypto.randomUUID() }));
  const path = new URL(created.trackingUrl!).pathname;
  return { storeId, store, created, path };
}

const press = (status: string, headers: Record<string, string> = { "sec-fetch-site": "same-origin" }) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  body: `status=${status}`,
});

/** The page mounted as the worker mounts it, with the webhooks it sends captured instead of delivered. */
function capturing() {
  const sent: { method: string; url: string; headers: Headers; body: string }[] = [];
  const app = createApp<WorkerBindings>({ service: "worker" });
  app.route(
    "/",
    courierPage(async (request) => {
      sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
      return Response.json({ ok: true, captured: sent.length });
    }),
  );
  return { app, sent };
}

function verified(store: StoreCourier, request: { headers: Headers; body: string }) {
  return store.courier.verifyWebhook(request.body, request.headers, store.webhookSecret);
}

describe("the local courier's tracking page", () => {
  it("shows the shipment's AWB, where it goes and what the courier reports, with the four buttons", async () => {
    const { created, path } = await shipment();
    expect(path).toMatch(/^\/-courier\/track\/lc1\./);
    const res = await call(worker, `${ORIGIN}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain(`<strong data-awb="true">${created.awb}</strong>`);
    expect(html).toContain("order #1002 · to Pune 411001");
    expect(html).toContain('<strong data-status="true">PENDING</strong>');
    for (const [value, label] of [["in_transit", "In transit"], ["delivered", "Delivered"], ["rto_initiated", "RTO initiated"], ["rto_delivered", "RTO delivered"]]) {
      expect(html).toContain(`name="status" value="${value}">${label}</button>`);
    }
  });

  it("does not exist unless the courier is local in development or test, nor for a forged or altered ref", async () => {
    const { path } = await shipment();
    const shiprocket = { COURIER: "shiprocket", SHIPROCKET_EMAIL: "api@demo.test", SHIPROCKET_PASSWORD: "pw", SHIPROCKET_WEBHOOK_TOKEN: "t".repeat(24) };
    expect((await call(worker, `${ORIGIN}${path}`, undefined, shiprocket)).status).toBe(404);
    expect((await call(worker, `${ORIGIN}${path}`, undefined, { APP_ENV: "production" })).status).toBe(404);
    expect((await call(worker, `${ORIGIN}${path}`, press("delivered"), { APP_ENV: "production" })).status).toBe(404);
    // Another root secret (another deployment) signs other refs.
    expect((await call(worker, `${ORIGIN}${path}`, undefined, { LOCAL_COURIER_SECRET: "another-root-secret-0000" })).status).toBe(404);
    // Alter the signature's last character to one it is not (always writing "0" left it unchanged 1 time in 16).
    const altered = `${path.slice(0, -1)}${path.endsWith("0") ? "1" : "0"}`;
    expect((await call(worker, `${ORIGIN}${altered}`)).status).toBe(404);
    expect((await call(worker, `${ORIGIN}/-courier/track/lc1.e30.00`)).status).toBe(404);
  });

  it("a button sends the courier's webhook, signed with the store's secret, to this worker's route and shows the answer", async () => {
    const { storeId, store, created, path } = await shipment();
    const { app, sent } = capturing();
    const res = await call(app, `${ORIGIN}${path}`, press("delivered"));
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(1);
    const request = sent[0]!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe(`${ORIGIN}/webhooks/shipments/local/${storeId}`);
    const event = await verified(store, request);
    expect(event).toEqual({ kind: "shipment", eventId: expect.stringMatching(/^evt_/), awb: created.awb, status: "delivered", providerStatus: "DELIVERED", occurredAt: expect.any(String) });
    const html = await res.text();
    expect(html).toContain(`Sent <strong>delivered</strong> (event ${event!.eventId}).`);
    expect(html).toContain("The worker answered 200: {&quot;ok&quot;:true,&quot;captured&quot;:1}");
    // Another store's secret does not verify it.
    const other = await storeCourier(courierConfigFromEnv(env as unknown as Record<string, unknown>), crypto.randomUUID());
    expect(await verified(other, request)).toBeNull();
  });

  it("delivers each webhook as often as LOCAL_COURIER_BEHAVIOUR says, with one event id", async () => {
    const { store, path } = await shipment();
    const { app, sent } = capturing();
    await call(app, `${ORIGIN}${path}`, press("rto_initiated"), { LOCAL_COURIER_BEHAVIOUR: '{"webhookDeliveries":2,"reportStatus":"in_transit"}' });
    expect(sent).toHaveLength(2);
    const [a, b] = [await verified(store, sent[0]!), await verified(store, sent[1]!)];
    expect(a).toMatchObject({ status: "rto_initiated" });
    expect(b?.eventId).toBe(a?.eventId);
  });

  it("refuses a cross-site post and sends nothing; an unknown button sends nothing", async () => {
    const { path } = await shipment();
    const { app, sent } = capturing();
    expect((await call(app, `${ORIGIN}${path}`, press("delivered", { "sec-fetch-site": "cross-site" }))).status).toBe(403);
    expect((await call(app, `${ORIGIN}${path}`, press("delivered", { origin: "https://evil.test" }))).status).toBe(403);
    expect((await call(app, `${ORIGIN}${path}`, press("lost"))).status).toBe(200);
    expect(sent).toHaveLength(0);
  });

  it("on the real worker, the webhook reaches the worker's own route and its answer is shown", async () => {
    const { path } = await shipment();
    const res = await call(worker, `${ORIGIN}${path}`, press("in_transit"));
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/The worker answered \d{3}: \{/);
  });
});
