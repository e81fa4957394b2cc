import { sha256Hex } from "#shared/auth/tokens";
import type { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { placeOrder, type CheckoutInput } from "#shared/orders/checkout";
import { applyPaymentStatus } from "#shared/orders/routines";
import { storeGateway, type StoreGateway } from "#shared/payments/select";
import type { ShopStore } from "./storefront";

/** The gateway the test projects are configured with (vitest.config.ts bindings). */
export const TEST_GATEWAY = { provider: "local", rootSecret: "local-gateway-test-secret" } as const;

export const testCheckout = (overrides: Partial<CheckoutInput> = {}): CheckoutInput => ({
  email: "asha@example.test",
  shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
  paymentMethod: "gateway",
  ...overrides,
});

export interface TestOrder {
  orderId: string;
  attemptId: string;
  providerRef: string;
  total: number;
  sg: StoreGateway;
}

/**
 * An order placed the way the storefront places it: a cart with `quantity` of the shop's variant, the
 * checkout unit, then the local gateway's payment and the attempt moved to pending through the routine.
 */
export async function placeTestOrder(db: Database, shop: ShopStore, quantity = 1): Promise<TestOrder> {
  const token = crypto.randomUUID().replace(/-/g, "") + "abcdefghijk";
  await withStore(db, shop.id, async (tx) => {
    const { rows } = await tx.$client.query("insert into cart (store_id, token_hash, currency) values ($1, $2, 'INR') returning id", [shop.id, await sha256Hex(token)]);
    await tx.$client.query("insert into cart_line (store_id, cart_id, variant_id, quantity) values ($1, $2, $3, $4)", [shop.id, rows[0].id, shop.variantId, quantity]);
  });
  const placed = await withStore(db, shop.id, (tx) => placeOrder(tx, token, testCheckout(), "local", new Date()));
  const sg = await storeGateway(TEST_GATEWAY, shop.id);
  const created = await sg.gateway.createPayment({
    orderId: placed.order.id,
    orderNumber: String(placed.order.number),
    attempt: 1,
    idempotencyKey: placed.attempt.idempotencyKey,
    amount: placed.order.total,
    currency: "INR",
    customer: { email: placed.order.email },
    returnUrl: `https://${shop.hostname}/api/checkout/${placed.order.id}/confirm`,
  });
  await withStore(db, shop.id, (tx) => applyPaymentStatus(tx, placed.attempt.id, "pending", "gateway", { providerRef: created.providerRef }));
  return { orderId: placed.order.id, attemptId: placed.attempt.id, providerRef: created.providerRef, total: placed.order.total, sg };
}
