import type { Database } from "#shared/db/database";
import { withStore, type StoreTx } from "#shared/db/with-store";
import { placeOrder, type CheckoutInput, type Placed } from "#shared/orders/checkout";
import type { IndianStateCode } from "#shared/rules/gst";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentStatus } from "#shared/orders/routines";
import { localPaymentId } from "#shared/payments/local-protocol";
import type { RefundEvent } from "#shared/payments/gateway";
import { storeGateway, type StoreGateway } from "#shared/payments/select";
import { newCartToken } from "#shared/storefront/cart";
import { addLine, createCart } from "#shared/storefront/cart-changes";
import { makeShop, type ShopStore } from "./storefront";

export const address = (state: IndianStateCode = "IN-MH") => ({ name: "Asha Rao", line1: "12 MG Road", city: "Pune", state, postalCode: "411001", country: "IN" as const });

/** The checkout page's form fields as a browser posts them for `address()` (add `paymentMethod`). */
export const checkoutForm = {
  email: "asha@example.test",
  phone: "",
  "shippingAddress.name": "Asha Rao",
  "shippingAddress.line1": "12 MG Road",
  "shippingAddress.line2": "",
  "shippingAddress.city": "Pune",
  "shippingAddress.state": "IN-MH",
  "shippingAddress.postalCode": "411001",
  "shippingAddress.country": "IN",
};

/**
 * Places an order the way checkout does: a cart made with the cart helpers, then placeOrder, in one
 * store unit. `lines` are variant ids with quantities; `state` is the ship-to state (Maharashtra); `at` is when it is placed.
 */
export async function placeTestOrder(
  db: Database,
  s: ShopStore,
  options: {
    lines?: [string, number][];
    email?: string;
    phone?: string;
    state?: IndianStateCode;
    paymentMethod?: CheckoutInput["paymentMethod"];
    at?: Date;
    /** The name typed at checkout, and the "Email me news and offers" box. */
    name?: string;
    acceptsMarketing?: boolean;
    /** The gateway the order's first attempt is made with (default the test projects' local one). */
    provider?: string;
  } = {},
): Promise<Placed> {
  return withStore(db, s.id, async (tx) => {
    const { token, hash } = await newCartToken();
    const cart = await createCart(tx, hash);
    for (const [variantId, quantity] of options.lines ?? [[s.variantId, 1]]) await addLine(tx, cart, variantId, quantity);
    const input: CheckoutInput = {
      email: options.email ?? "asha@example.test",
      ...(options.phone ? { phone: options.phone } : {}),
      shippingAddress: { ...address(options.state), ...(options.name ? { name: options.name } : {}) },
      paymentMethod: options.paymentMethod ?? "gateway",
      ...(options.acceptsMarketing !== undefined ? { acceptsMarketing: options.acceptsMarketing } : {}),
    };
    // Bank transfer is off for a new store (decision 0020): a test that pays by transfer turns it on.
    if (input.paymentMethod === "manual_transfer") await offerBankTransfer(tx);
    return placeOrder(tx, token, input, options.provider ?? "local", options.at ?? new Date());
  });
}

/** Turns bank transfer on for the transaction's store (store.update's manualTransferEnabled). */
export async function offerBankTransfer(tx: StoreTx): Promise<void> {
  await tx.$client.query("update store set manual_transfer_enabled = true where id = $1 and not manual_transfer_enabled", [tx.storeId]);
}

/** A shop (active fixture product, 5 in stock at a warehouse in Maharashtra) and a query helper for it. */
export async function orderShop(db: Database): Promise<{ s: ShopStore; sql: <R = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]> }> {
  const s = await makeShop(db);
  const sql = <R,>(text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);
  await sql("update location set state = 'IN-MH'");
  return { s, sql };
}

export const MH_GSTIN = "27ABCDE1234F1Z0";
export const KA_GSTIN = "29ABCDE1234F1ZW";

/** An order shop (./orders.ts orderShop) whose Maharashtra warehouse is registered for GST, and a registered location in Karnataka. */
export async function registeredOrderShop(db: Database) {
  const { s, sql } = await orderShop(db);
  await sql("update location set gstin = $1, legal_name = 'Saanjh Crafts Private Limited', address_line1 = 'Unit 4, Laxmi Industrial Estate', city = 'Pune', postal_code = '411028'", [MH_GSTIN]);
  const [mh] = await sql<{ id: string }>("select id from location");
  const [ka] = await sql<{ id: string }>(
    "insert into location (store_id, name, state, gstin, legal_name, address_line1, city, postal_code) values ($1, 'Bengaluru', 'IN-KA', $2, 'Saanjh Crafts Private Limited', '8 Residency Road', 'Bengaluru', '560025') returning id",
    [s.id, KA_GSTIN],
  );
  return { s, sql, mh: mh!.id, ka: ka!.id };
}

/** The gateway the test projects are configured with (vitest.config.ts bindings). */
export const TEST_GATEWAY = { provider: "local", rootSecret: "local-gateway-test-secret" } as const;

export interface GatewayOrder {
  orderId: string;
  attemptId: string;
  providerRef: string;
  total: number;
  sg: StoreGateway;
}

/** What a gateway order is of: units of the shop's variant, or lines (and the State it ships to). */
export type GatewayOrderOf = number | { lines: [string, number][]; state?: IndianStateCode };

/** An order placed as above (at `at`, default now), then its payment made by the local gateway and the attempt moved to pending through the routine. */
export async function placeGatewayOrder(db: Database, shop: ShopStore, of: GatewayOrderOf = 1, at?: Date): Promise<GatewayOrder> {
  const order = typeof of === "number" ? { lines: [[shop.variantId, of]] as [string, number][] } : of;
  const placed = await placeTestOrder(db, shop, { ...order, ...(at ? { at } : {}) });
  const sg = await storeGateway(TEST_GATEWAY, shop.id);
  const created = await sg.gateway.createPayment(paymentRequest(placed.order, placed.attempt, `https://${shop.hostname}/api/checkout/${placed.order.id}/confirm`));
  await withStore(db, shop.id, (tx) => applyPaymentStatus(tx, placed.attempt.id, "pending", "gateway", { providerRef: created.providerRef }));
  return { orderId: placed.order.id, attemptId: placed.attempt.id, providerRef: created.providerRef, total: placed.order.total, sg };
}

/** A gateway order as above whose payment the gateway captured (the attempt knows its payment id): refundable through the gateway. */
export async function paidGatewayOrder(db: Database, shop: ShopStore, of: GatewayOrderOf = 1): Promise<GatewayOrder & { paymentId: string }> {
  const order = await placeGatewayOrder(db, shop, of);
  const paymentId = await localPaymentId(order.providerRef);
  await withStore(db, shop.id, (tx) => applyPaymentStatus(tx, order.attemptId, "captured", "webhook", { providerPaymentId: paymentId }));
  return { ...order, paymentId };
}

/** The gateway's `refund.processed` report of a refund of an order's payment, as its webhook delivers it (a fresh event id each time). */
export const refundProcessed = (o: Pick<GatewayOrder, "providerRef">, refundId: string, amount: number, storeId: string | null = null): RefundEvent => ({
  kind: "refund",
  eventId: `evt_${crypto.randomUUID()}`,
  event: "refund.processed",
  providerRef: o.providerRef,
  status: "processed",
  amount,
  currency: "INR",
  refundId,
  storeId,
});
