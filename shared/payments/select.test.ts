import { describe, expect, it } from "vitest";
import { buildLocalWebhook } from "./local-protocol";
import { razorpayServer } from "../../test/fakes/razorpay-server";
import { gatewayConfigFromEnv, storeGateway } from "./select";
import { createInput } from "../../test/fakes/payments";

const LOCAL_ENV = { APP_ENV: "development", LOCAL_GATEWAY_SECRET: "dev-root-secret-0123456789" };

describe("gateway configuration", () => {
  it("defaults to the local gateway, with behaviour from LOCAL_GATEWAY_BEHAVIOUR", () => {
    expect(gatewayConfigFromEnv({ ...LOCAL_ENV, LOCAL_GATEWAY_BEHAVIOUR: '{"webhookDeliveries":2}' })).toEqual({
      provider: "local",
      rootSecret: LOCAL_ENV.LOCAL_GATEWAY_SECRET,
      behaviour: { webhookDeliveries: 2 },
    });
  });

  it("names the missing or wrong variable", () => {
    expect(() => gatewayConfigFromEnv({ APP_ENV: "test" })).toThrow(/LOCAL_GATEWAY_SECRET/);
    expect(() => gatewayConfigFromEnv({ PAYMENT_GATEWAY: "razorpay", RAZORPAY_KEY_ID: "rzp_test_abc", RAZORPAY_KEY_SECRET: "k".repeat(24) })).toThrow(/RAZORPAY_WEBHOOK_SECRET/);
    expect(() => gatewayConfigFromEnv({ PAYMENT_GATEWAY: "razorpay", RAZORPAY_KEY_ID: "key", RAZORPAY_KEY_SECRET: "k".repeat(24), RAZORPAY_WEBHOOK_SECRET: "w".repeat(24) })).toThrow(/RAZORPAY_KEY_ID/);
    expect(() => gatewayConfigFromEnv({ PAYMENT_GATEWAY: "stripe" })).toThrow(/PAYMENT_GATEWAY/);
    expect(() => gatewayConfigFromEnv({ ...LOCAL_ENV, APP_ENV: "production" })).toThrow(/development and tests only/);
    expect(() => gatewayConfigFromEnv({ LOCAL_GATEWAY_SECRET: LOCAL_ENV.LOCAL_GATEWAY_SECRET })).toThrow(/development and tests only/);
  });

  it("gives each store its own local secret: one store's webhook does not verify at another's", async () => {
    const config = gatewayConfigFromEnv(LOCAL_ENV);
    const a = await storeGateway(config, "store-a");
    const b = await storeGateway(config, "store-b");
    expect(a.webhookSecret).not.toBe(b.webhookSecret);
    const { providerRef } = await a.gateway.createPayment(createInput(1, { amount: 100 }));
    const w = (await buildLocalWebhook({ providerRef, outcome: "captured", secret: a.webhookSecret, workerOrigin: "http://localhost:8789" }))!;
    expect(w.url).toBe("http://localhost:8789/webhooks/payments/local/store-a");
    expect(await a.gateway.verifyWebhook(w.body, new Headers(w.headers), a.webhookSecret)).toMatchObject({ status: "captured" });
    expect(await b.gateway.verifyWebhook(w.body, new Headers(w.headers), b.webhookSecret)).toBeNull();
  });

  it("wires Razorpay with the key secret for confirmations and the webhook secret for webhooks", async () => {
    const server = razorpayServer({ keySecret: "k".repeat(24), webhookSecret: "w".repeat(24) });
    const config = gatewayConfigFromEnv({ PAYMENT_GATEWAY: "razorpay", RAZORPAY_KEY_ID: server.keyId, RAZORPAY_KEY_SECRET: server.keySecret, RAZORPAY_WEBHOOK_SECRET: server.webhookSecret });
    const store = await storeGateway(config, "store-a", { fetch: server.fetch, baseUrl: "https://razorpay.local" });
    expect(store).toMatchObject({ provider: "razorpay", webhookSecret: server.webhookSecret, confirmationSecret: server.keySecret });
    const { providerRef } = await store.gateway.createPayment(createInput(1, { amount: 100 }));
    expect(server.state.orders.get(providerRef)?.notes).toMatchObject({ store_id: "store-a" });
    const { confirmation, webhooks } = await server.pay(providerRef, "captured");
    expect(await store.gateway.verifyClientConfirmation(confirmation, store.confirmationSecret)).toMatchObject({ providerRef });
    const w = webhooks[1]!;
    expect(await store.gateway.verifyWebhook(w.body, new Headers(w.headers), store.webhookSecret)).toMatchObject({ status: "captured" });
  });
});
