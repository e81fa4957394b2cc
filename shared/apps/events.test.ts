import { describe, expect, it } from "vitest";
import { APP_EVENT_KINDS, APP_REDELIVERY_KIND, appEventsSchema, appSubscribes, goesToAppsQueue, isAppEventKind } from "./events";

describe("which events apps receive", () => {
  it("the public kinds: orders, failed payments, shipments, returns, refunds, products, stock and customers", () => {
    expect(APP_EVENT_KINDS).toEqual(["order.*", "payment.failed", "shipment.*", "return.*", "refund.*", "product.*", "inventory.*", "customer.*"]);
    for (const kind of ["order.placed", "order.paid", "order.rto", "payment.failed", "shipment.delivered", "return.requested", "refund.failed", "product.updated", "inventory.adjusted", "customer.created"]) {
      expect(isAppEventKind(kind), kind).toBe(true);
    }
    for (const kind of ["payment.captured", "staff.invited", "store.updated", "store.mcp_settings_updated", "domain.added", "link.created", "app.created", APP_REDELIVERY_KIND, "orders.paid", "order", "order.", "ORDER.PAID"]) {
      expect(isAppEventKind(kind), kind).toBe(false);
    }
  });

  it("the relay sends public kinds and redelivery requests to the apps queue, nothing else", () => {
    expect(goesToAppsQueue("order.paid")).toBe(true);
    expect(goesToAppsQueue(APP_REDELIVERY_KIND)).toBe(true);
    expect(goesToAppsQueue("app.updated")).toBe(false);
    expect(goesToAppsQueue("staff.joined")).toBe(false);
  });

  it("an app gets what it subscribed to, and never a non-public kind even with *", () => {
    expect(appSubscribes(["order.*"], "order.paid")).toBe(true);
    expect(appSubscribes(["order.paid"], "order.placed")).toBe(false);
    expect(appSubscribes(["order.paid", "refund.*"], "refund.failed")).toBe(true);
    expect(appSubscribes(["*"], "customer.updated")).toBe(true);
    expect(appSubscribes(["*"], "staff.invited")).toBe(false);
    expect(appSubscribes(["product.*"], "products.updated")).toBe(false);
  });

  it("subscriptions take *, groups and kinds within them; anything else is refused naming the entry", () => {
    expect(appEventsSchema.parse(["order.*", " order.paid ", "order.*", "*"])).toEqual(["order.*", "order.paid", "*"]);
    const refused = appEventsSchema.safeParse(["order.paid", "staff.*"]);
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual([1]);
    for (const bad of [[], ["staff.invited"], ["payment.*"], ["order"], ["order.paid.*"]]) {
      expect(appEventsSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
