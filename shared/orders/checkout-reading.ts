import type { SQL } from "drizzle-orm";
import type { GstRates } from "../rules/gst";
import { ratesPlan } from "../rules/gst-rates";
import { orderViewStatement, type OrderView } from "./order-view";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";

/**
 * What checkout decides from (SPEC "Checkout and payment behaviour"), read in one unit: the shopper's
 * cart (by its token's hash) with its lines, the stock of its variants at the locations that sell online,
 * its discount, the store's shipping, deposit and payment settings, the GST rates of the day, and, for a cart that
 * is an order already, that order and its newest attempt (a replay answers from this reading alone).
 *
 * The cart's `state` is compared again by the change that places the order: a cart changed in between
 * (another tab) is read again instead of being charged at the old reading.
 */
export interface CartLineRow extends Record<string, unknown> {
  line_id: string;
  variant_id: string;
  quantity: number;
  product_title: string;
  variant_title: string;
  sku: string | null;
  tax_class: string;
  preorder: boolean;
  unit_price: string;
  product_status: string;
}

export interface StockReadRow extends Record<string, unknown> {
  id: string;
  variant_id: string;
  location_id: string;
  name: string;
  priority: number;
  available: number;
  state: string | null;
}

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

/** A payment attempt: its number, idempotency key, status, provider and amount in minor units. */
export interface AttemptRead {
  id: string;
  attempt: number;
  idempotencyKey: string;
  status: string;
  provider: string;
  amount: number;
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

/** The cart as the change will check it: converted or not, its discount, its lines (by id). */
export function cartState(store: SQL, cartId: SQL, lock: boolean): SQL {
  return sql`select jsonb_build_object('converted', c.converted_order_id, 'discount', c.discount_id,
      'lines', coalesce((select jsonb_agg(jsonb_build_object('id', cl.id, 'variant', cl.variant_id, 'quantity', cl.quantity) order by cl.id)
                         from cart_line cl where cl.store_id = c.store_id and cl.cart_id = c.id), '[]'::jsonb))
    from (select * from cart where store_id = ${store} and id = ${cartId}${lock ? sql` for update` : sql``}) c`;
}

/** The cart a token names (by its hash). With `lock`, the rows checkout reserves from are locked (a transaction that is open already). */
export function checkoutReadingPlan(q: Q, store: SQL, tokenHash: string, now: Date, lock = false): Plan<CheckoutReading> {
  const cartId = sql`(select id from cart where store_id = ${store} and token_hash = ${tokenHash})`;
  const converted = sql`(select converted_order_id from cart where store_id = ${store} and token_hash = ${tokenHash})`;
  const rates = ratesPlan(q, now);
  return plan(
    [
      raw<{ id: string; currency: string; discount_id: string | null; converted_order_id: string | null; state: unknown }>(
        q,
        sql`select c.id, c.currency, c.discount_id, c.converted_order_id, (${cartState(store, sql`c.id`, false)}) as state
            from cart c where c.store_id = ${store} and c.token_hash = ${tokenHash}${lock ? sql` for update` : sql``}`,
      ),
      raw<CartLineRow>(
        q,
        sql`select cl.id as line_id, cl.variant_id, cl.quantity, p.title as product_title, v.title as variant_title, v.sku, v.tax_class,
                   v.preorder, v.price_minor::text as unit_price, p.status as product_status
            from cart_line cl
            join product_variant v on v.store_id = cl.store_id and v.id = cl.variant_id
            join product p on p.store_id = v.store_id and p.id = v.product_id
            where cl.store_id = ${store} and cl.cart_id = ${cartId}
            order by cl.created_at, cl.id`,
      ),
      // Locked in id order when asked (a fixed order, so two checkouts never wait on each other in a cycle).
      raw<StockReadRow>(
        q,
        sql`select il.id, il.variant_id, il.location_id, l.name, l.priority, greatest(il.on_hand - il.reserved, 0)::int as available, l.state
            from inventory_level il join location l on l.store_id = il.store_id and l.id = il.location_id
            where il.store_id = ${store} and l.sells_online
              and il.variant_id in (select variant_id from cart_line where store_id = ${store} and cart_id = ${cartId})
            order by il.id${lock ? sql` for update of il` : sql``}`,
      ),
      raw<{ id: string; code: string; kind: "percentage" | "fixed_amount"; value: string; live: boolean }>(
        q,
        sql`select d.id, d.code, d.kind, d.value::text, (d.status = 'active' and d.starts_at <= now() and (d.ends_at is null or d.ends_at > now())
                   and (d.usage_limit is null or d.usage_count < d.usage_limit)) as live
            from discount d where d.store_id = ${store} and d.id = (select discount_id from cart where store_id = ${store} and token_hash = ${tokenHash})`,
      ),
      raw<{ fee: string; free_over: string | null; deposit_percent: number; manual_transfer: boolean; hold_hours: number }>(
        q,
        sql`select shipping_fee_minor::text as fee, free_shipping_over_minor::text as free_over, preorder_deposit_percent as deposit_percent,
                   manual_transfer_enabled as manual_transfer, transfer_hold_hours as hold_hours
            from store where id = ${store}`,
      ),
      ...rates.steps,
      orderViewStatement(q, store, converted),
      raw<{ id: string; attempt: number; idempotency_key: string; status: string; provider: string; amount: string; keyed: boolean }>(
        q,
        sql`select a.id, a.attempt, a.idempotency_key, a.status, a.provider, a.amount::text,
                   (select access_key_hash is not null from shop_order where store_id = a.store_id and id = a.order_id) as keyed
            from payment_attempt a where a.store_id = ${store} and a.order_id = ${converted} order by a.attempt desc limit 1`,
      ),
    ] as const,
    ([[cart], lines, stock, [discount], [settings], ...rest]) => {
      const rateRows = rest.slice(0, rates.steps.length);
      const [[view], [attempt]] = rest.slice(rates.steps.length) as [{ order: OrderView }[], { id: string; attempt: number; idempotency_key: string; status: string; provider: string; amount: string; keyed: boolean }[]];
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
