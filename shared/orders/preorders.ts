import type { SQL } from "drizzle-orm";
import { sql, type Q } from "../db/steps";
import { cartPreorderVariants } from "./statements/preorders";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { balanceChange, balanceReadingPlan, BALANCE_EXPIRES_AFTER_MS, decideBalances, remindStep } from "./preorder-units";
import { plan, type Plan } from "../db/plan";
import { splitProportionally } from "../rules/gst";

/**
 * Pre-orders paid by deposit (docs/order-status.md, "Pre-orders"). With the store's
 * `preorder_deposit_percent` under 100, an order's backordered pre-order units are paid in part at
 * checkout; the balance is asked for when their stock arrives at the parcel's location, reminded after
 * 3 days, and after 7 days unpaid the units the job reserved go back and the merchant decides. The job
 * (shared/jobs/preorder-balance.ts) does a store's work in two round trips (./preorder-units.ts); the
 * functions here do one order's on a transaction that is open (the same reading, decision and change).
 */
export { BALANCE_EXPIRES_AFTER_MS, BALANCE_REMINDER_AFTER_MS } from "./preorder-units";

export interface BalancePart {
  /** What the parcel line pays: its units' price less its share of the discount, minor units. */
  value: number;
  quantity: number;
  /** How many of its units were backordered. */
  backordered: number;
}

/**
 * The part of the total left for later: the backordered units' share of their lines' value, less the
 * deposit (percent of that share, rounded half up, at least one minor unit). The rest of the order,
 * shipping included, is paid in full at checkout. 100 percent, or nothing backordered: 0.
 */
export function preorderBalance(parts: readonly BalancePart[], depositPercent: number): number {
  if (depositPercent >= 100) return 0;
  const share = parts.reduce((sum, p) => sum + (p.backordered > 0 ? Math.round((p.value * p.backordered) / p.quantity) : 0), 0);
  if (share === 0) return 0;
  return share - Math.max(1, Math.round((share * depositPercent) / 100));
}

/** What a pre-order pays now and later, as the storefront's product and checkout pages say it. */
export interface DepositTerms {
  /** The share of pre-ordered units' value paid at checkout (100: all of it, no balance). */
  percent: number;
  /** What is left for later, minor units (0 when paid in full). */
  later: number;
  /** Days the shopper has to pay it once the store asks (when the units arrive). */
  payWithinDays: number;
}

/** Days a shopper has to pay a pre-order's balance once it is asked for. */
export const BALANCE_PAY_WITHIN_DAYS = Math.round(BALANCE_EXPIRES_AFTER_MS / 86_400_000);

/**
 * A cart's pre-order terms as checkout will decide them: each line's units beyond what the store has
 * (`backordered`) pay the deposit now and the balance later; the cart's discount is shared over its lines
 * by value (as checkout shares it over one parcel's lines). Null when nothing in the cart is backordered.
 */
export function cartDepositTerms(lines: readonly { lineTotal: number; quantity: number; backordered: number }[], discount: number, percent: number): DepositTerms | null {
  if (!lines.some((l) => l.backordered > 0)) return null;
  const shares = splitProportionally(discount, lines.map((l) => l.lineTotal));
  const later = preorderBalance(lines.map((l, i) => ({ value: l.lineTotal - shares[i]!, quantity: l.quantity, backordered: l.backordered })), percent);
  return { percent, later, payWithinDays: BALANCE_PAY_WITHIN_DAYS };
}

/** One pre-ordered unit of a variant priced `price`: what is paid later (the product page). */
export function unitDepositTerms(price: number, percent: number): DepositTerms {
  return { percent, later: preorderBalance([{ value: price, quantity: 1, backordered: 1 }], percent), payWithinDays: BALANCE_PAY_WITHIN_DAYS };
}

/** The pre-order variants among the lines of the cart a token names (by its hash; null: no cart). */
export function cartPreorderVariantsPlan(q: Q, store: SQL, tokenHash: string | null): Plan<ReadonlySet<string>> {
  return plan(
    [
      cartPreorderVariants(q, store, tokenHash ?? ""),
    ] as const,
    ([rows]) => new Set(rows.map((r) => r.variant_id)),
  );
}

export type BalanceStep = { reserved: number; requested: boolean; attemptId?: string };

/**
 * Reserves what has arrived of a deposit-paid order's backordered units at their parcel's location, and
 * once every one of them is held, asks for the balance: a new payment attempt for what is left to pay,
 * and `order.balance_requested`. Checked again by the change, so a second run (or a race) finds nothing.
 */
export async function requestBalance(tx: StoreTx, orderId: string, now: Date): Promise<BalanceStep> {
  const store = sql`${tx.storeId}::uuid`;
  const orders = await readOn(tx, (q) => balanceReadingPlan(q, store, { orderId, ripe: false, expireBefore: new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS) }));
  const [step] = decideBalances(orders);
  if (step?.kind !== "reserve") return { reserved: 0, requested: false };
  await changeOn(tx, (q) => balanceChange(q, store, [step], now));
  return { reserved: step.reserved, requested: step.request !== null, ...(step.request ? { attemptId: step.request.attemptId } : {}) };
}

/**
 * Writes `order.balance_reminder` once for each of the store's balances requested at least 3 days and
 * less than 7 days before `now` and still unpaid. Returns how many were reminded.
 */
export function remindBalances(tx: StoreTx, now: Date, limit: number): Promise<number> {
  return changeOn(tx, (q) => plan([remindStep(q, sql`${tx.storeId}::uuid`, now, limit)] as const, ([[row]]) => row!.n));
}

/**
 * A balance still unpaid 7 days after it was requested: the units the job reserved for it go back to
 * stock (what was reserved at checkout stays held), the order keeps its deposit and stays open, and the
 * merchant gets a `balance_expired` task (refund the deposit and cancel, or take the balance by hand).
 * Writes `order.balance_expired` and `inventory.released` once: checked again by the change.
 */
export async function expireBalance(tx: StoreTx, orderId: string, now: Date): Promise<boolean> {
  const store = sql`${tx.storeId}::uuid`;
  const orders = await readOn(tx, (q) => balanceReadingPlan(q, store, { orderId, ripe: true, expireBefore: new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS) }));
  const [step] = decideBalances(orders);
  if (step?.kind !== "expire") return false;
  await changeOn(tx, (q) => balanceChange(q, store, [step], now));
  return true;
}
