import { describe, expect, it } from "vitest";
import { buildLocalCourierWebhook } from "./local-protocol";
import { ShiprocketTokens } from "./shiprocket-http";
import { shiprocketServer } from "../../test/fakes/shiprocket-server";
import { courierConfigFromEnv, isWebhookSegmentOf, storeCourier } from "./select";
import { shipmentInput } from "../../test/fakes/shipping";

const LOCAL_ENV = { APP_ENV: "development", LOCAL_COURIER_SECRET: "dev-root-secret-0123456789" };
const SHIPROCKET_ENV = { COURIER: "shiprocket", SHIPROCKET_EMAIL: "api@demo.test", SHIPROCKET_PASSWORD: "pw", SHIPROCKET_WEBHOOK_TOKEN: "t".repeat(24) };

describe("courier configuration", () => {
  it("defaults to the local courier, its page on the worker of npm run dev, behaviour from LOCAL_COURIER_BEHAVIOUR", () => {
    expect(courierConfigFromEnv({ ...LOCAL_ENV, LOCAL_COURIER_BEHAVIOUR: '{"webhookDeliveries":2}' })).toEqual({
      provider: "local",
      rootSecret: LOCAL_ENV.LOCAL_COURIER_SECRET,
      pageOrigin: "http://localhost:8789",
      behaviour: { webhookDeliveries: 2 },
    });
    expect(courierConfigFromEnv({ ...LOCAL_ENV, LOCAL_COURIER_ORIGIN: "http://127.0.0.1:9999/ignored" })).toMatchObject({ pageOrigin: "http://127.0.0.1:9999" });
  });

  it("names the missing or wrong variable", () => {
    expect(() => courierConfigFromEnv({ APP_ENV: "test" })).toThrow(/LOCAL_COURIER_SECRET/);
    expect(() => courierConfigFromEnv({ ...LOCAL_ENV, LOCAL_COURIER_ORIGIN: "localhost" })).toThrow(/LOCAL_COURIER_ORIGIN/);
    expect(() => courierConfigFromEnv({ ...LOCAL_ENV, LOCAL_COURIER_BEHAVIOUR: '{"fail":1}' })).toThrow(/LOCAL_COURIER_BEHAVIOUR/);
    expect(() => courierConfigFromEnv({ ...SHIPROCKET_ENV, SHIPROCKET_EMAIL: "api" })).toThrow(/SHIPROCKET_EMAIL/);
    expect(() => courierConfigFromEnv({ ...SHIPROCKET_ENV, SHIPROCKET_PASSWORD: undefined })).toThrow(/SHIPROCKET_PASSWORD/);
    expect(() => courierConfigFromEnv({ ...SHIPROCKET_ENV, SHIPROCKET_WEBHOOK_TOKEN: "short" })).toThrow(/SHIPROCKET_WEBHOOK_TOKEN/);
    expect(() => courierConfigFromEnv({ COURIER: "delhivery" })).toThrow(/COURIER/);
    expect(() => courierConfigFromEnv({ ...LOCAL_ENV, APP_ENV: "production" })).toThrow(/development and tests only/);
    expect(() => courierConfigFromEnv({ LOCAL_COURIER_SECRET: LOCAL_ENV.LOCAL_COURIER_SECRET })).toThrow(/development and tests only/);
  });

  it("gives each store its own local secret: one store's webhook does not verify at another's", async () => {
    const config = courierConfigFromEnv(LOCAL_ENV);
    const a = await storeCourier(config, "store-a");
    const b = await storeCourier(config, "store-b");
    expect(a.provider).toBe("local");
    expect(a.webhookSecret).not.toBe(b.webhookSecret);
    const { awb } = await a.courier.createShipment(shipmentInput());
    const w = await buildLocalCourierWebhook({ storeId: "store-a", awb, status: "delivered", secret: a.webhookSecret, workerOrigin: "http://localhost:8789" });
    expect(await a.courier.verifyWebhook(w.body, new Headers(w.headers), a.webhookSecret)).toMatchObject({ status: "delivered" });
    expect(await b.courier.verifyWebhook(w.body, new Headers(w.headers), b.webhookSecret)).toBeNull();
  });

  it("wires Shiprocket with the account's login, and the panel's token for every store's webhooks", async () => {
    const server = shiprocketServer({ email: SHIPROCKET_ENV.SHIPROCKET_EMAIL, password: SHIPROCKET_ENV.SHIPROCKET_PASSWORD, webhookToken: SHIPROCKET_ENV.SHIPROCKET_WEBHOOK_TOKEN });
    const config = courierConfigFromEnv(SHIPROCKET_ENV);
    const options = { fetch: server.fetch, baseUrl: "https://shiprocket.local", tokens: new ShiprocketTokens() };
    const a = await storeCourier(config, "store-a", options);
    const b = await storeCourier(config, "store-b", options);
    expect(a).toMatchObject({ provider: "shiprocket", webhookSecret: SHIPROCKET_ENV.SHIPROCKET_WEBHOOK_TOKEN });
    expect(b.webhookSecret).toBe(a.webhookSecret);
    const { awb } = await a.courier.createShipment(shipmentInput());
    const w = server.scan(awb, 7);
    expect(await b.courier.verifyWebhook(w.body, new Headers(w.headers), b.webhookSecret)).toMatchObject({ status: "delivered", awb });
  });

  it("accepts Shiprocket's webhook under a path its panel allows", () => {
    expect(isWebhookSegmentOf("tracking", "shiprocket")).toBe(true);
    expect(isWebhookSegmentOf("shiprocket", "shiprocket")).toBe(true);
    expect(isWebhookSegmentOf("local", "shiprocket")).toBe(false);
    expect(isWebhookSegmentOf("local", "local")).toBe(true);
    expect(isWebhookSegmentOf("tracking", "local")).toBe(false);
    for (const segment of ["tracking"]) expect(`/webhooks/shipments/${segment}/`).not.toMatch(/shiprocket|kartrocket|sr|kr/i);
  });
});
