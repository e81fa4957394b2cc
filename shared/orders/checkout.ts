import { and, eq, isNull } from "drizzle-orm";
import { sha256Hex } from "../core/tokens";
import type { Database } from "../db/database";
import { pgErrorOf } from "../db/pg-errors";
import { shopOrder, type TaxClass } from "../db/schema";
import { sendStoreUnit } from "../db/unit";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { orderAccessKey } from "./access";
import { CART_TOKEN } from "../storefront/cart";
import { discountAmount } from "../storefront/cart-totals";
import { checkoutChange, discountUnavailable, type Placement } from "./checkout-change";
import { checkoutReadingPlan, type CartRow, type CheckoutReading } from "./checkout-reading";
import type { CheckoutInput, Placed } from "./checkout-input";
import { isIndianStateCode, orderMoney, type IndianStateCode, type OrderMoney } from "../rules/gst";
import type { OrderView } from "./order-view";
import { buyerNetworkHash, holdWindowMs, transferRefused } from "./holds";
import { preorderBalance } from "./preorders";
import { planReservation, type PlannedParcel, type StockRow } from "./reservation";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";

/**
 * Checkout (SPEC "Checkout and payment behaviour" 1-4; ARCHITECTURE §15) in two round trips: the cart,
 * its stock, discount, settings and rates read in one unit (./checkout-reading.ts); the reservation and
 * the money decided here; the order, its lines, its parcels with their money and GST, its first payment
 * attempt, the reservation, the discount's use, the buyer and the `order.placed` and
 * `inventory.reserved` events written in one guarded unit (./checkout-change.ts), which stops as a lost
 * race when the cart, the stock it reserves or the discount changed since the reading, and checkout then
 * reads and decides again (a replay of a cart that became an order meanwhile answers that order). The
 * caller calls the gateway after the commit.
 */

export { checkoutInput, type AttemptRow, type CheckoutInput, type Placed } from "./checkout-input";

/** Who places the order, beyond what the form says: the buyer's address as the storefront saw it (cf-connecting-ip). */
export interface Buyer {
  ip?: string | null | undefined;
  /**
   * An AI agent's UCP checkout session this order completes (shared/ucp/checkout-complete.ts): the order is
   * marked with the `ucp` channel and the session takes the order, with where the agent's platform hears of
   * it, in the order's own unit.
   */
  ucpSession?: { id: string; webhookUrl: string | null };
}

const emptyCart = () => new AppError("CONFLICT", "Your cart is empty: add a product before checking out.", { reason: "empty_cart" });

/** How many times a checkout reads again after losing a race for its cart, stock or discount. */
export const CHECKOUT_RETRIES = 3;

type Decision = { kind: "replay"; placed: Placed; keyHash: string | null } | { kind: "place"; placement: Placement };

/**
 * What the reading says: a replay, an order to place, or the refusal the shopper sees. In steps: the cart
 * (empty, converted, or its lines refused), the reservation, the price, then the rows the change writes.
 */
async function decide(reading: CheckoutReading, storeId: string, cartToken: string, input: CheckoutInput, provider: string, now: Date, buyer: Buyer): Promise<Decision> {
  const { cart, lines } = reading;
  if (!cart) throw emptyCart();
  if (cart.convertedOrderId) return replayOf(reading, cartToken, cart.convertedOrderId);
  if (lines.length === 0) throw emptyCart();
  if (input.paymentMethod === "manual_transfer" && !reading.settings.manualTransfer) throw transferRefused();
  refuseGone(lines);
  const parcels = reserve(lines, reading.stock);
  const priced = price(reading, cart, parcels, input);
  return { kind: "place", placement: await placementOf(reading, cart, parcels, priced, { storeId, cartToken, input, provider, now, buyer }) };
}

/** A cart that became an order already: that order, answered again (an order placed before keys existed gets its key's hash now). */
async function replayOf(reading: CheckoutReading, cartToken: string, orderId: string): Promise<Decision> {
  const accessKey = await orderAccessKey(cartToken, orderId);
  const { order, attempt, keyed } = reading.replay ?? { order: null, attempt: null, keyed: true };
  if (!order || !attempt) throw new AppError("NOT_FOUND", "That order no longer exists.");
  // The shopper proved the cart token the key derives from.
  return { kind: "replay", placed: { order, attempt, replayed: true, accessKey }, keyHash: keyed ? null : await sha256Hex(accessKey) };
}

/** Lines whose product is no longer for sale refuse the checkout, each by its path. */
function refuseGone(lines: CheckoutReading["lines"]): void {
  const gone = lines.filter((l) => l.product_status !== "active");
  if (gone.length === 0) return;
  throw new AppError("CONFLICT", "Some products in your cart are no longer for sale: remove them and try again.", {
    reason: "not_for_sale",
    issues: gone.map((l) => ({ path: `lines.${l.line_id}`, message: `${l.product_title} is no longer for sale` })),
  });
}

/** The reservation's parcels (./reservation.ts), or the refusal naming each line short of stock. */
function reserve(lines: CheckoutReading["lines"], stock: CheckoutReading["stock"]): PlannedParcel[] {
  const rows: StockRow[] = stock.map((s) => ({ locationId: s.location_id, locationName: s.name, priority: s.priority, variantId: s.variant_id, available: s.available }));
  const reservation = planReservation(lines.map((l) => ({ variantId: l.variant_id, quantity: l.quantity, preorder: l.preorder })), rows);
  if (reservation.ok) return reservation.parcels;
  const byVariant = new Map(reservation.short.map((s) => [s.variantId, s]));
  throw new AppError("CONFLICT", "Some products in your cart are no longer available in that quantity.", {
    reason: "insufficient_stock",
    issues: lines
      .filter((l) => byVariant.has(l.variant_id))
      .map((l) => {
        const s = byVariant.get(l.variant_id)!;
        return { path: `lines.${l.line_id}.quantity`, message: `only ${s.available} available`, available: s.available, requested: s.requested };
      }),
  });
}

/** Shipping as checkout charges it: the store's flat fee, nothing from its free-shipping threshold on (after the discount). */
export const shippingFor = (settings: { fee: number; freeOver: number | null }, afterDiscount: number): number =>
  settings.freeOver !== null && afterDiscount >= settings.freeOver ? 0 : settings.fee;

interface Priced {
  discount: CheckoutReading["discount"];
  taken: { amount: number; code: string | null };
  destination: IndianStateCode;
  money: OrderMoney;
  balance: number;
}

/**
 * The order's money: the discount (a code that stopped being live since it was applied is refused, so the
 * shopper sees the price they will pay), shipping, each parcel's lines, discount, shipping and GST
 * (shared/rules/gst.ts), and the pre-order balance paid later.
 */
function price(reading: CheckoutReading, cart: CartRow, parcels: PlannedParcel[], input: CheckoutInput): Priced {
  const { lines, stock, settings } = reading;
  const subtotal = lines.reduce((sum, l) => sum + Number(l.unit_price) * l.quantity, 0);
  const discount = cart.discountId ? reading.discount : null;
  if (cart.discountId && !discount?.live) throw discountUnavailable();
  const taken = discount ? { amount: discountAmount(subtotal, { kind: discount.kind, value: discount.value }), code: discount.code } : { amount: 0, code: null };
  const afterDiscount = subtotal - taken.amount;
  const shipping = shippingFor(settings, afterDiscount);

  // Money: each parcel's lines (a cart line may be split over parcels), then the order's discount and
  // shipping split by parcel subtotal and the GST inside each parcel (shared/rules/gst.ts; a value-based
  // class's rate is resolved per line on its value after discount, so each line carries its quantity).
  const lineOf = new Map(lines.map((l) => [l.variant_id, l]));
  const stateOf = new Map(stock.map((s) => [s.location_id, s.state]));
  const destination = input.shippingAddress.state as IndianStateCode;
  const money = orderMoney({
    parcels: parcels.map((p) => ({
      originState: originOf(stateOf.get(p.locationId)),
      lines: p.lines.map((pl) => {
        const l = lineOf.get(pl.variantId)!;
        return { taxClass: l.tax_class as TaxClass, amount: Number(l.unit_price) * pl.quantity, quantity: pl.quantity };
      }),
    })),
    discount: taken.amount,
    shipping,
    destinationState: destination,
    rates: reading.rates,
  });
  // With a deposit under 100 %, backordered pre-order units are paid in part now, the balance when they arrive.
  const balanceParts = parcels.flatMap((p, i) =>
    p.lines.map((pl, j) => ({ value: Number(lineOf.get(pl.variantId)!.unit_price) * pl.quantity - money.parcels[i]!.lineDiscounts[j]!, quantity: pl.quantity, backordered: pl.quantity - pl.reserved })),
  );
  return { discount, taken, destination, money, balance: preorderBalance(balanceParts, settings.depositPercent) };
}

/** The rows the change writes: the order's lines with their share of the discount, its parcels with their money, each parcel's lines. */
function orderRows(reading: CheckoutReading, parcels: PlannedParcel[], money: OrderMoney): Pick<Placement, "orderLines" | "parcels" | "parcelLines"> {
  const { lines, stock } = reading;
  const stateOf = new Map(stock.map((s) => [s.location_id, s.state]));
  const lineDiscount = new Map<string, number>();
  parcels.forEach((p, i) =>
    p.lines.forEach((pl, j) => lineDiscount.set(pl.variantId, (lineDiscount.get(pl.variantId) ?? 0) + money.parcels[i]!.lineDiscounts[j]!)),
  );
  const orderLines = lines.map((l, position) => ({
    id: crypto.randomUUID(), variant_id: l.variant_id, product_title: l.product_title, variant_title: l.variant_title, sku: l.sku, tax_class: l.tax_class,
    preorder: l.preorder, quantity: l.quantity, unit_price: Number(l.unit_price), discount: lineDiscount.get(l.variant_id) ?? 0, position,
  }));
  const orderLineOf = new Map(orderLines.map((l) => [l.variant_id, l.id]));
  const parcelRows = parcels.map((p, position) => {
    const m = money.parcels[position]!;
    return { id: crypto.randomUUID(), location_id: p.locationId, origin_state: stateOf.get(p.locationId) ?? null, subtotal: m.subtotal, discount: m.discount, shipping: m.shipping, tax: m.tax, cgst: m.cgst, sgst: m.sgst, igst: m.igst, position };
  });
  const stockIdOf = new Map(stock.map((s) => [`${s.variant_id}:${s.location_id}`, s.id]));
  const parcelLines = parcels.flatMap((p, position) =>
    p.lines.map((pl) => ({
      fulfillment_order_id: parcelRows[position]!.id, order_line_id: orderLineOf.get(pl.variantId)!, quantity: pl.quantity, reserved: pl.reserved,
      variant_id: pl.variantId, location_id: p.locationId, stock_id: stockIdOf.get(`${pl.variantId}:${p.locationId}`) ?? null,
    })),
  );
  return { orderLines, parcels: parcelRows, parcelLines };
}

/**
 * The order as the change writes it, with its first payment attempt and how long it holds its items.
 * Every id is made here, so the change's statements can name each other's rows without reading them.
 */
async function placementOf(
  reading: CheckoutReading,
  cart: CartRow,
  parcels: PlannedParcel[],
  { discount, taken, destination, money, balance }: Priced,
  o: { storeId: string; cartToken: string; input: CheckoutInput; provider: string; now: Date; buyer: Buyer },
): Promise<Placement> {
  const orderId = crypto.randomUUID();
  const accessKey = await orderAccessKey(o.cartToken, orderId);
  const method = o.input.paymentMethod;
  return {
    orderId, accessKeyHash: await sha256Hex(accessKey), accessKey, cart: { id: cart.id, currency: cart.currency, state: cart.state },
    input: o.input, destination, money, taken, discount: discount ? { id: discount.id, kind: discount.kind, value: discount.value } : null, balance,
    firstAmount: money.total - balance, expiresAt: new Date(o.now.getTime() + holdWindowMs(method, reading.settings.transferHoldHours)), now: o.now,
    storeId: o.storeId, networkHash: await buyerNetworkHash(o.storeId, o.buyer.ip), ucpSession: o.buyer.ucpSession ?? null,
    ...orderRows(reading, parcels, money), attemptId: crypto.randomUUID(), provider: method === "gateway" ? o.provider : "manual_transfer",
  };
}

const originOf = (state: string | null | undefined): IndianStateCode | null => (state && isIndianStateCode(state) ? state : null);

/**
 * Places the shopper's order in at most two round trips (a replay in one), reading and deciding again
 * when the change lost a race for its cart, stock or discount.
 */
export async function placeOrderInUnits(db: Database, storeId: string, cartToken: string | undefined, input: CheckoutInput, provider: string, now: Date, buyer: Buyer = {}): Promise<Placed> {
  if (!cartToken || !CART_TOKEN.test(cartToken)) throw emptyCart();
  const tokenHash = await sha256Hex(cartToken);
  for (let attempt = 1; ; attempt++) {
    const reading = await sendStoreUnit(db, storeId, (q) => checkoutReadingPlan(q, sql`${storeId}::uuid`, tokenHash, now));
    const decided = await decide(reading, storeId, cartToken, input, provider, now, buyer);
    if (decided.kind === "replay") {
      if (decided.keyHash) await sendStoreUnit(db, storeId, (q) => keyOrderPlan(q, storeId, decided.placed.order.id, decided.keyHash!), { readOnly: false });
      return decided.placed;
    }
    try {
      return await sendStoreUnit(db, storeId, (q) => checkoutChange(q, sql`${storeId}::uuid`, decided.placement), { readOnly: false });
    } catch (e) {
      if (pgErrorOf(e)?.code !== "CR409") throw e;
      if (attempt >= CHECKOUT_RETRIES) throw new AppError("CONFLICT", "Your cart or the stock changed while you were checking out; try again.", { reason: "concurrent_change" });
    }
  }
}

/** The same inside a transaction that is open already (tests, the bench's floor): read with the locks taken, then change. */
export async function placeOrder(tx: StoreTx, cartToken: string | undefined, input: CheckoutInput, provider: string, now: Date, buyer: Buyer = {}): Promise<Placed> {
  if (!cartToken || !CART_TOKEN.test(cartToken)) throw emptyCart();
  const store = sql`${tx.storeId}::uuid`;
  const tokenHash = await sha256Hex(cartToken);
  const reading = await readOn(tx, (q) => checkoutReadingPlan(q, store, tokenHash, now, true));
  const decided = await decide(reading, tx.storeId, cartToken, input, provider, now, buyer);
  if (decided.kind === "replay") {
    if (decided.keyHash) await changeOn(tx, (q) => keyOrderPlan(q, tx.storeId, decided.placed.order.id, decided.keyHash!));
    return decided.placed;
  }
  return changeOn(tx, (q) => checkoutChange(q, store, decided.placement));
}

/** Stores the access key's hash of an order placed before keys existed. */
function keyOrderPlan(q: Q, storeId: string, orderId: string, keyHash: string): Plan<void> {
  return plan([q.update(shopOrder).set({ accessKeyHash: keyHash }).where(and(eq(shopOrder.storeId, storeId), eq(shopOrder.id, orderId), isNull(shopOrder.accessKeyHash)))] as const, () => undefined);
}

export type { OrderView };
