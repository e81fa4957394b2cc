import { describe, expect, it } from "vitest";
import { readAgentProfile } from "#shared/ucp/agent-profile";
import { UCP_VERSION } from "#shared/ucp/profile";
import { call } from "../../test/call";
import worker from "./index";

/**
 * The local AI agent platform on the real worker (development and tests only; docs/ucp.md "Try it locally"):
 * its profile reads as a platform profile with an order webhook, the updates it receives are listed, and in
 * production it does not exist.
 */
const ORIGIN = "http://worker.test";

describe("the local agent platform", () => {
  it("publishes a platform profile whose order updates come back to it, and lists the updates it receives", async () => {
    const res = await call(worker, `${ORIGIN}/-agent/profile.json`);
    expect(res.status).toBe(200);
    const read = readAgentProfile(`${ORIGIN}/-agent/profile.json`, await res.json());
    expect(read).toEqual({ ok: true, profile: { url: `${ORIGIN}/-agent/profile.json`, version: UCP_VERSION, keys: [], webhookUrl: `${ORIGIN}/-agent/orders` } });

    const orderId = crypto.randomUUID();
    const update = { id: orderId, checkout_id: crypto.randomUUID(), line_items: [{ id: "li_1", status: "processing" }], fulfillment: { events: [{ type: "shipped" }] }, adjustments: [] };
    const posted = await call(worker, `${ORIGIN}/-agent/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "signature-input": 'sig1=("@method");keyid="kid-1";alg="ecdsa-p256-sha256"', "webhook-id": "w-1" },
      body: JSON.stringify(update),
    });
    expect(posted.status).toBe(204);
    expect((await call(worker, `${ORIGIN}/-agent/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: "[]" })).status).toBe(400);
    const list = (await (await call(worker, `${ORIGIN}/-agent/orders`, { headers: { accept: "application/json" } })).json()) as { received: Record<string, unknown>[] };
    expect(list.received.find((r) => r["orderId"] === orderId)).toMatchObject({ checkoutId: update.checkout_id, state: "shipped", keyId: "kid-1", webhookId: "w-1" });
    const page = await (await call(worker, `${ORIGIN}/-agent/orders`)).text();
    expect(page).toContain(orderId);
  });

  it("does not exist in production", async () => {
    for (const path of ["/-agent/profile.json", "/-agent/orders"]) {
      expect((await call(worker, `${ORIGIN}${path}`, undefined, { APP_ENV: "production" })).status).toBe(404);
    }
  });
});
