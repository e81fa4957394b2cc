import type { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentStatus } from "#shared/orders/routines";
import type { PaymentGateway } from "#shared/payments/gateway";
import { razorpayServer } from "./fakes/razorpay-server";
import { storeGateway, type GatewayConfig } from "#shared/payments/select";
import type { GatewayOrder } from "./orders";
import { placeTestOrder } from "./orders";
import type { ShopStore } from "./storefront";

const BASE_URL = "https://razorpay.local";

/**
 * A deployment configured for Razorpay against the local Razorpay-speaking server: its variables (for a
 * Worker's env), each store's adapter (talking to the server), and the server, which makes payments
 * happen and signs their webhooks as Razorpay does.
 */
export function razorpayDeployment() {
  const server = razorpayServer({ keySecret: "local-key-secret-for-tests", webhookSecret: "local-webhook-secret-for-tests" });
  const config: GatewayConfig = { provider: "razorpay", keyId: server.keyId, keySecret: server.keySecret, webhookSecret: server.webhookSecret };
  const env = {
    PAYMENT_GATEWAY: "razorpay",
    RAZORPAY_KEY_ID: server.keyId,
    RAZORPAY_KEY_SECRET: server.keySecret,
    RAZORPAY_WEBHOOK_SECRET: server.webhookSecret,
  };
  const gatewayOf = async (storeId: string): Promise<PaymentGateway> => (await storeGateway(config, storeId, { fetch: server.fetch, baseUrl: BASE_URL })).gateway;
  return { server, config, env, gatewayOf };
}
export type RazorpayDeployment = ReturnType<typeof razorpayDeployment>;

/**
 * An order placed with Razorpay as checkout makes it: the Razorpay order created by the adapter (its
 * notes carry the store), the attempt moved to pending with its reference. `form` is the Hosted Checkout
 * form the shopper's browser would post.
 */
export async function placeRazorpayOrder(db: Database, shop: ShopStore, rp: RazorpayDeployment, quantity = 1): Promise<Omit<GatewayOrder, "sg"> & { form: Record<string, string> }> {
  const placed = await placeTestOrder(db, shop, { lines: [[shop.variantId, quantity]], provider: "razorpay" });
  const gateway = await rp.gatewayOf(shop.id);
  const created = await gateway.createPayment(paymentRequest(placed.order, placed.attempt, `https://${shop.hostname}/api/checkout/${placed.order.id}/confirm`));
  if (created.redirect.method !== "POST") throw new Error("Razorpay's checkout is entered by a form POST");
  await withStore(db, shop.id, (tx) => applyPaymentStatus(tx, placed.attempt.id, "pending", "gateway", { providerRef: created.providerRef }));
  return { orderId: placed.order.id, attemptId: placed.attempt.id, providerRef: created.providerRef, total: placed.order.total, form: created.redirect.fields };
}
