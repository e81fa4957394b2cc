import { and, eq, isNull } from "drizzle-orm";
import { isAppError, type AppError } from "../core/errors";
import { sha256Hex } from "../core/tokens";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { plan, together } from "../db/plan";
import { cart } from "../db/schema";
import { sendStoreUnit } from "../db/unit";
import { placeOrderInUnits } from "../orders/checkout";
import type { CheckoutInput } from "../orders/checkout-input";
import { cartChangePlan, type CartChange } from "../storefront/cart-changes";
import { placedOrderPlan, placedStatus, placedView } from "./checkout-order-view";
import { checkoutView, normalCode, type UcpCheckout, type UcpMessage } from "./checkout-session-view";
import { cataloguePlan, getSession, none, sessionPlan, storePlan, type AlsoWrite, type SessionAnswer } from "./checkout-sessions";
import { sessionCartToken } from "./session-cart";

/**
 * Completing an agent's checkout session (issue 26 item 3; docs/ucp.md "Completing"): the order is placed
 * through the storefront's own checkout, so it is reserved, split into parcels, priced with GST and given its
 * first payment attempt exactly as a shopper's order is (shared/orders/checkout.ts), and marked as the `ucp`
 * channel's, the session taking it in the order's own unit.
 *
 * 1. One unit reads the switch, the session and any order it placed: a session that placed one answers as its
 *    order stands (completing again places nothing), a cancelled one is refused.
 * 2. One unit reads its catalogue: a session that is not `ready_for_complete` answers its messages.
 * 3. One unit (the caller's Idempotency-Key first) makes the session's cart, through the cart's own change
 *    (stock, the code), under a token derived from the session (./session-cart.ts), dropping what an earlier
 *    attempt left.
 * 4. Checkout places the order from that cart (two units; a lost race reads and decides again). Its
 *    refusals (stock sold meanwhile, a code used up, the hold limits) are the session's messages, not errors.
 *
 * The order is placed unpaid: no payment credential reaches us (we advertise no payment handler), so the
 * answer is `requires_escalation` with the order's page as `continue_url`, where the buyer pays at the store's
 * gateway; the session is `completed` once the money is in (./checkout-order-view.ts).
 */

export interface CompleteDeps {
  db: Database;
  storeId: string;
  /** UCP_SIGNING_ROOT_SECRET: the session's cart token derives from it. */
  rootSecret: string;
  /** The store's payment provider (its first attempt's). */
  provider: string;
  /** The caller's address (cf-connecting-ip): checkout's per-network hold limit counts by it. */
  ip: string | null;
  now?: Date;
}

/** The checkout's own refusals, as the session's message codes. */
const CODE_OF: Record<string, string> = {
  insufficient_stock: "out_of_stock",
  not_for_sale: "item_unavailable",
  discount_unavailable: "discount_code_invalid",
  concurrent_change: "concurrent_change",
  session_ended: "invalid_state",
};

const refusedMessage = (e: AppError): UcpMessage => {
  const reason = typeof e.data?.reason === "string" ? e.data.reason : "";
  return { type: "error", code: CODE_OF[reason] ?? (reason || "checkout_refused"), severity: "recoverable", content: e.message };
};

/** The session's details as checkout takes them from a shopper's form (the view checked them already). */
function checkoutInputOf(checkout: UcpCheckout, destination: Record<string, string>): CheckoutInput {
  const buyer = checkout.buyer ?? {};
  return {
    email: buyer["email"]!.trim(),
    ...(buyer["phone_number"] ? { phone: buyer["phone_number"] } : {}),
    shippingAddress: {
      name: [destination["first_name"], destination["last_name"]].filter(Boolean).join(" "),
      line1: destination["street_address"]!,
      ...(destination["extended_address"] ? { line2: destination["extended_address"] } : {}),
      city: destination["address_locality"]!,
      state: destination["address_region"] as CheckoutInput["shippingAddress"]["state"],
      postalCode: destination["postal_code"]!,
      country: "IN",
    },
    paymentMethod: "gateway",
    acceptsMarketing: false,
  };
}

/** The session answered again with a refusal from the cart or checkout as its error message (and so `incomplete`). */
async function withRefusal(d: CompleteDeps, agent: string, id: string, e: AppError): Promise<SessionAnswer> {
  const now = await getSession(d.db, d.storeId, agent, id);
  if (!now.ok || now.orderId) return now;
  return { ok: true, checkout: { ...now.checkout, status: "incomplete", messages: [refusedMessage(e), ...now.checkout.messages] } };
}

export async function completeSession(d: CompleteDeps, agent: { url: string; webhookUrl?: string | undefined }, id: string, also: AlsoWrite = none): Promise<SessionAnswer> {
  const { shop, session, placed } = await sendStoreUnit(d.db, d.storeId, (q) => together({ shop: storePlan(q), session: sessionPlan(q, id, agent.url), placed: placedOrderPlan(q, id, agent.url) }));
  if (!shop?.enabled) return { ok: false, why: "off" };
  if (!session) return { ok: false, why: "not_found" };
  if (placed) return placedStatus(placed) === "canceled" ? { ok: false, why: "terminal" } : { ok: true, ...placedView(session, shop, placed) };
  if (session.status === "canceled") return { ok: false, why: "terminal" };

  const read = await sendStoreUnit(d.db, d.storeId, (q) => cataloguePlan(q, session));
  const view = checkoutView(session, shop, read);
  if (view.status !== "ready_for_complete") return { ok: true, checkout: view };

  const token = await sessionCartToken(d.rootSecret, d.storeId, id);
  const tokenHash = await sha256Hex(token);
  const changes: CartChange[] = session.lineItems.map((l) => ({ kind: "add", variantId: l.variant_id, quantity: l.quantity }));
  const code = view.discounts.applied[0]?.code;
  if (code) changes.push({ kind: "applyCode", code: normalCode(code) });
  try {
    await sendStoreUnit(
      d.db,
      d.storeId,
      (q) =>
        together({
          key: also(q),
          // What an earlier attempt left (a cart that became no order) goes; a converted cart is an order's and stays.
          dropped: plan([q.delete(cart).where(and(eq(cart.storeId, CURRENT_STORE), eq(cart.tokenHash, tokenHash), isNull(cart.convertedOrderId)))] as const, () => undefined),
          made: cartChangePlan(q, { tokenHash: null, freshHash: tokenHash }, changes),
        }),
      { readOnly: false },
    );
    await placeOrderInUnits(d.db, d.storeId, token, checkoutInputOf(view, session.destination!), d.provider, d.now ?? new Date(), {
      ip: d.ip,
      ucpSession: { id, webhookUrl: agent.webhookUrl ?? null },
    });
  } catch (e) {
    // A request racing another with the caller's Idempotency-Key (the caller's `also` refused it: reason
    // `idempotency_key_in_use`, shared/pipeline/idempotency-key.ts) is no refusal of the session: the caller answers it.
    if (isAppError(e) && e.status < 500 && e.data?.["reason"] !== "idempotency_key_in_use") return withRefusal(d, agent.url, id, e);
    throw e;
  }
  return getSession(d.db, d.storeId, agent.url, id);
}
