import { and, eq, type SQL } from "drizzle-orm";
import { ensure, ensureSql } from "../db/changes";
import { CURRENT_STORE } from "../db/openings";
import type { Plan } from "../db/plan";
import { cart, cartLine, CART_LINE_QUANTITY_MAX } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { AppError, badRequest } from "../core/errors";
import { DISCOUNT_STATE } from "./discount-state";
import { AVAILABLE } from "./catalog";
import { changeOn, type StoreTx } from "../db/with-store";
import { cartPlan, type CartView } from "./cart";
import { addCartLine, makeCart } from "./statements";

/**
 * A shopper's change to their cart as one unit (docs/decisions/0015-one-round-trip.md): the cart found by
 * its cookie's hash (or made, with a fresh token, when the change needs one), locked, the change's checks
 * as guards that stop the unit with the answer the shopper gets, the change, and the cart as it now is.
 * The same refusals as before, in the same order, with the same words.
 */
export type CartChange =
  | { kind: "add"; variantId: string; quantity: number }
  | { kind: "set"; lineId: string; quantity: number }
  | { kind: "applyCode"; code: string }
  | { kind: "dropCode" };

export interface CartKeys {
  /** The hash of the cookie's token, when it has one of the right shape. */
  tokenHash: string | null;
  /** A fresh token's hash, for a change that makes the cart when there is none. */
  freshHash: string | null;
}

export interface ChangedCart {
  view: CartView;
  /** Which token names the cart now: the fresh one when the change made it. */
  usedFresh: boolean;
}

const unknownLine = () => new AppError("NOT_FOUND", "This line is not in your cart.", { reason: "unknown_line" });
const noCart = () => new AppError("NOT_FOUND", "There is no cart yet.", { reason: "no_cart" });

/**
 * One change, or several applied in order in the same unit (the Storefront MCP's update_cart: all of them or
 * none). With `requireCart`, a change to a cart the token does not name (and no fresh one to make) stops at
 * once with `no_cart`, instead of each change's own refusal.
 */
export function cartChangePlan(q: Q, keys: CartKeys, change: CartChange | readonly CartChange[], options: { requireCart?: boolean } = {}): Plan<ChangedCart> {
  const store = CURRENT_STORE;
  const changes: readonly CartChange[] = Array.isArray(change) ? change : [change as CartChange];
  const hashes = [keys.tokenHash, keys.freshHash].filter((h): h is string => h !== null);
  const theCart = sql`(select id from cart where store_id = ${store} and converted_order_id is null and token_hash = any(${sql.param(hashes)}::text[]) order by created_at limit 1)`;
  const steps: Step[] = [];
  if (keys.freshHash) {
    // Made only when the cookie names no open cart of this store.
    steps.push(makeCart(q, store, keys.freshHash, keys.tokenHash));
  }
  // Changes to one cart run one after another (sums exact under a burst of adds).
  steps.push(q.select({ id: cart.id }).from(cart).where(eq(cart.id, theCart)).for("update"));
  if (options.requireCart) steps.push(ensure(q, sql`${theCart} is not null`, noCart()));
  for (const one of changes) steps.push(...changeSteps(q, store, theCart, one));
  if (changes.some((one) => one.kind !== "dropCode")) steps.push(q.update(cart).set({ updatedAt: sql`now()` }).where(and(eq(cart.storeId, store), eq(cart.id, theCart))));
  const used = q.select({ token_hash: cart.tokenHash }).from(cart).where(eq(cart.id, theCart));
  const view = cartPlan(q, { tokenHashes: hashes });
  const before = steps.length;
  return {
    steps: [...steps, used, ...view.steps],
    finish: (results) => {
      const [row] = results[before] as { token_hash: string }[];
      return { view: view.finish(results.slice(before + 1)), usedFresh: keys.freshHash !== null && row?.token_hash === keys.freshHash };
    },
  };
}

/** Units a variant can sell now over the online locations, for the variant `v` of a statement. */
const available = sql.raw(AVAILABLE);

/**
 * A new quantity of a variant checked as before: the line's limit, the variant of this store, on sale,
 * and (unless sold on pre-order) no more than what can be sold now.
 */
function quantityChecks(q: Q, store: SQL, variantId: SQL | string, quantity: SQL, path: string, skip: SQL = sql`false`): Step[] {
  const variant = sql`from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id where v.store_id = ${store} and v.id = ${variantId}`;
  return [
    ensureSql(
      q,
      sql`${skip} or ${quantity} <= ${CART_LINE_QUANTITY_MAX}`,
      "BAD_REQUEST",
      sql`${badRequest([{ path, message: `A cart line holds at most ${CART_LINE_QUANTITY_MAX}` }]).message}`,
      sql`${JSON.stringify({ issues: [{ path, message: `A cart line holds at most ${CART_LINE_QUANTITY_MAX}` }] })}::jsonb`,
    ),
    ensure(q, sql`${skip} or exists (select 1 ${variant})`, new AppError("NOT_FOUND", "This product is not sold in this store.", { reason: "unknown_variant" })),
    ensure(q, sql`${skip} or exists (select 1 ${variant} and p.status = 'active')`, new AppError("NOT_FOUND", "This product is not for sale right now.", { reason: "not_for_sale" })),
    ensureSql(
      q,
      sql`${skip} or (select v.preorder or ${quantity} <= ${available} ${variant})`,
      "CONFLICT",
      sql`(select 'Only ' || ${available} || ' of ' || p.title || ' can be ordered now.' ${variant})`,
      sql`(select jsonb_build_object('reason', 'insufficient_stock', 'issues', jsonb_build_array(jsonb_build_object(
             'path', ${path}::text, 'message', 'only ' || ${available} || ' available', 'available', ${available}))) ${variant})`,
    ),
  ];
}

function changeSteps(q: Q, store: SQL, theCart: SQL, change: CartChange): Step[] {
  switch (change.kind) {
    case "add": {
      const existing = sql`coalesce((select quantity from cart_line where store_id = ${store} and cart_id = ${theCart} and variant_id = ${change.variantId}), 0)`;
      return [
        ...quantityChecks(q, store, change.variantId, sql`(${existing} + ${change.quantity})`, "variantId"),
        addCartLine(q, store, theCart, change.variantId, change.quantity),
      ];
    }
    case "set": {
      const line = sql`from cart_line where store_id = ${store} and cart_id = ${theCart} and id = ${change.lineId}`;
      const theLine = and(eq(cartLine.storeId, store), eq(cartLine.cartId, theCart), eq(cartLine.id, change.lineId));
      const guards = [ensure(q, sql`exists (select 1 ${line})`, unknownLine())];
      if (change.quantity === 0) return [...guards, q.delete(cartLine).where(theLine)];
      // Lowering a quantity is always allowed (even when stock fell below it); raising it is checked.
      const lowering = sql`(${change.quantity} <= (select quantity ${line}))`;
      return [
        ...guards,
        ...quantityChecks(q, store, sql`(select variant_id ${line})`, sql`${change.quantity}`, `lines.${change.lineId}.quantity`, lowering),
        q.update(cartLine).set({ quantity: change.quantity, updatedAt: sql`now()` }).where(theLine),
      ];
    }
    case "applyCode": {
      const found = sql`from discount where store_id = ${store} and code = ${change.code.trim().toUpperCase()}`;
      return [
        ensure(q, sql`${theCart} is not null`, noCart()),
        ensure(q, sql`exists (select 1 ${found})`, new AppError("NOT_FOUND", "There is no such discount code.", { reason: "unknown_code", issues: [{ path: "code", message: "unknown code" }] })),
        ensureSql(
          q,
          sql`(select ${DISCOUNT_STATE} = 'live' ${found})`,
          "CONFLICT",
          sql`(select 'This discount code cannot be used now (' || replace(${DISCOUNT_STATE}, '_', ' ') || ').' ${found})`,
          sql`(select jsonb_build_object('reason', ${DISCOUNT_STATE}, 'issues', jsonb_build_array(jsonb_build_object('path', 'code', 'message', ${DISCOUNT_STATE}))) ${found})`,
        ),
        q
          .update(cart)
          .set({ discountId: sql`(select id ${found})`, updatedAt: sql`now()` })
          .where(and(eq(cart.storeId, store), eq(cart.id, theCart))),
      ];
    }
    case "dropCode":
      return [q.update(cart).set({ discountId: null, updatedAt: sql`now()` }).where(and(eq(cart.storeId, store), eq(cart.id, theCart)))];
  }
}

/**
 * Tests and fixtures: a cart for a token's hash, and a line added to it, inside a transaction that is open
 * already (the same change the storefront sends in its own unit).
 */
export async function createCart(tx: StoreTx, tokenHash: string): Promise<{ id: string; tokenHash: string }> {
  await changeOn(tx, (q) => cartChangePlan(q, { tokenHash: null, freshHash: tokenHash }, { kind: "dropCode" }));
  const view = await changeOn(tx, (q) => cartPlan(q, { tokenHash }));
  return { id: view.id!, tokenHash };
}

export async function addLine(tx: StoreTx, cart: { tokenHash: string }, variantId: string, quantity: number): Promise<void> {
  await changeOn(tx, (q) => cartChangePlan(q, { tokenHash: cart.tokenHash, freshHash: null }, { kind: "add", variantId, quantity }));
}
