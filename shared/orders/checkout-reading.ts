import type { SQL } from "drizzle-orm";
import type { GstRates } from "../rules/gst";
import { ratesPlan } from "../rules/gst-rates";
import { orderViewStatement, type OrderView } from "./order-view";
import type { AttemptRead } from "./statements/order-view";
import { plan, type Plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q } from "../db/steps";
import { checkoutCart, checkoutCartLines, checkoutDiscount, checkoutSettings, checkoutStock, replayAttempt } from "./statements/checkout";

/**
 * What checkout decides from (SPEC "Checkout and payment behaviour"), read in one unit: the shopper's
 * cart (by its token's hash) with its lines, the stock of its variants at the locations that sell online,
 * its discount, the store's shipping, deposit and payment settings, the GST rates of the day, and, for a cart that
 * is an order already, that order and its newest attempt (a replay answers from this reading alone).
 *
 * The cart's `state` is compared again by the change that places the order: a cart changed in between
 * (another tab) is read again instead of being charged at the old reading.
 */
export type CartLineRow = RowOfStatement<typeof checkoutCartLines>;

export type StockReadRow = RowOfStatement<typeof checkoutStock>;

export interface CartRow {
  id: string;
  currency: string;
  discountId: string | null;
  convertedOrderId: string | null;
  state: unknown;
}

export interface DiscountRead {
  id: string;
  code: string;
  kind: "percentage" | "fixed_amount";
  value: number;
  live: boolean;
}


export interface CheckoutReading {
  cart: CartRow | null;
  lines: CartLineRow[];
  stock: StockReadRow[];
  discount: DiscountRead | null;
  settings: { fee: number; freeOver: number | null; depositPercent: number; manualTransfer: boolean; transferHoldHours: number };
  rates: GstRates;
  /** A converted cart's order: its view, its newest attempt, whether its access key hash is stored yet. */
  replay: { order: OrderView | null; attempt: AttemptRead | null; keyed: boolean } | null;
}

export { cartState } from "./statements/checkout";

/** The cart a token names (by its hash). With `lock`, the rows checkout reserves from are locked (a transaction that is open already). */
export function checkoutReadingPlan(q: Q, store: SQL, tokenHash: string, now: Date, lock = false): Plan<CheckoutReading> {
  const cartId = sql`(select id from cart where store_id = ${store} and token_hash = ${tokenHash})`;
  const converted = sql`(select converted_order_id from cart where store_id = ${store} and token_hash = ${tokenHash})`;
  const rates = ratesPlan(q, now);
  return plan(
    [
      checkoutCart(q, store, tokenHash, lock),
      checkoutCartLines(q, store, cartId),
      // Locked in id order when asked (a fixed order, so two checkouts never wait on each other in a cycle).
      checkoutStock(q, store, cartId, lock),
      checkoutDiscount(q, store, tokenHash),
      checkoutSettings(q, store),
      ...rates.steps,
      orderViewStatement(q, store, converted),
      replayAttempt(q, store, converted),
    ] as const,
    ([[cart], lines, stock, [discount], [settings], ...rest]) => {
      const rateRows = rest.slice(0, rates.steps.length);
      const [[view], [attempt]] = rest.slice(rates.steps.length) as [{ order: OrderView }[], RowOfStatement<typeof replayAttempt>[]];
      return {
        cart: cart ? { id: cart.id, currency: cart.currency, discountId: cart.discount_id, convertedOrderId: cart.converted_order_id, state: cart.state } : null,
        lines,
        stock,
        discount: discount ? { id: discount.id, code: discount.code, kind: discount.kind, value: Number(discount.value), live: discount.live } : null,
        settings: {
          fee: Number(settings!.fee),
          freeOver: settings!.free_over === null ? null : Number(settings!.free_over),
          depositPercent: settings!.deposit_percent,
          manualTransfer: settings!.manual_transfer,
          transferHoldHours: settings!.hold_hours,
        },
        rates: rates.finish(rateRows),
        replay: cart?.converted_order_id
          ? {
              order: view?.order ?? null,
              attempt: attempt ? { id: attempt.id, attempt: attempt.attempt, idempotencyKey: attempt.idempotency_key, status: attempt.status, provider: attempt.provider, amount: Number(attempt.amount) } : null,
              keyed: attempt?.keyed ?? true,
            }
          : null,
      };
    },
  );
}
