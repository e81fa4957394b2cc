import { describe, expect, it } from "vitest";
import { tracedWork } from "../../test/proxy";
import { receivePaymentEvent, receiveShipmentEvent } from "./reports";

/** A verified webhook's event as the orders area receives it from its door (workers/worker/webhooks.ts). */
const payment = (storeId: string | null) =>
  ({ kind: "payment", eventId: `evt_${crypto.randomUUID()}`, event: "payment.captured", providerRef: `ref_${crypto.randomUUID()}`, status: "captured", amount: 1000, currency: "INR", storeId }) as const;

describe("receiving a provider's verified event at one store's address", () => {
  it("acknowledges an event we do not act on with its reason, reading nothing", async () => {
    const storeId = crypto.randomUUID();
    const paid = await tracedWork((db) => receivePaymentEvent(db, storeId, "local", { kind: "ignored", eventId: "evt_1", event: "order.created", reason: "not a payment's news" }));
    expect([paid.result, paid.trips.turns]).toEqual([{ ignored: "not a payment's news" }, 0]);
    const shipped = await tracedWork((db) => receiveShipmentEvent(db, storeId, "local", { kind: "ignored", eventId: "evt_2", reason: "PICKUP SCHEDULED is not mapped" }));
    expect([shipped.result, shipped.trips.turns]).toEqual([{ ignored: "PICKUP SCHEDULED is not mapped" }, 0]);
  });

  it("ignores, reading nothing, a payment event whose own record names another store; one naming none is looked up among this store's attempts", async () => {
    const storeId = crypto.randomUUID();
    const elsewhere = await tracedWork((db) => receivePaymentEvent(db, storeId, "local", payment(crypto.randomUUID())));
    expect([elsewhere.result, elsewhere.trips.turns]).toEqual([{ ignored: "the event names another store: it is applied only at its own store's address" }, 0]);
    const unnamed = await tracedWork((db) => receivePaymentEvent(db, storeId, "local", payment(null)));
    expect(unnamed.result).toEqual({ ignored: expect.stringContaining("no attempt of this store has this reference") });
    expect(unnamed.trips.turns).toBe(1);
  });
});
