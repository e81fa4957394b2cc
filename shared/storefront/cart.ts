/**
 * The storefront cart (issue 10): one per shopper per store, found by the SHA-256 of the random token in
 * the shopper's cookie. Every function here runs inside the request's one withStore unit, so RLS keeps a
 * cart, its lines and their variants within the hostname's store; the cart row is locked FOR UPDATE
 * before any change, so concurrent changes to one cart apply one after another and sum exactly.
 *
 * Answer shape: `discount` is the amount taken off, in minor units, and `discountCode` names the code
 * (null when none). A code attached earlier that is no longer live (expired, disabled, used up) takes
 * nothing off and is not shown; checkout re-checks anyway.
 */
import { and, asc, inArray, isNull, eq, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { randomSecret, sha256Hex } from "../auth/tokens";
import { cart, cartLine, CART_LINE_QUANTITY_MAX, discount, product, productVariant, store } from "../db/schema";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import type { Q, StatementClient } from "../db/steps";
import type { Database } from "../db/database";
import { runPlanOn, sendStoreUnit } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { AppError, badRequest } from "../http/errors";
import { DISCOUNT_STATE, type DiscountState } from "../procedures/discounts";
import { cartTotals, lineTotal } from "./cart-totals";

export const CART_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface CartLineView {
  id: string;
  variantId: string;
  productTitle: string;
  variantTitle: string;
  sku: string | null;
  quantity: number;
  unitPrice: number;
  lineTotal: number;
  available: number;
}

export interface CartView {
  id: string | null;
  currency: string;
  lines: CartLineView[];
  subtotal: number;
  discount: number;
  discountCode: string | null;
  total: number;
}

export interface CartRow {
  id: string;
  currency: string;
}

/** A fresh cookie token (256 random bits) and the hash the database keeps. */
export async function newCartToken(): Promise<{ token: string; hash: string }> {
  const token = randomSecret(32);
  return { token, hash: await sha256Hex(token) };
}

/**
 * The shopper's cart in this store, undefined for a missing or foreign token. With `lock` the row is
 * locked for the rest of the unit, so changes to one cart run one after another.
 */
export async function findCart(tx: StoreTx, token: string | undefined, lock: boolean): Promise<CartRow | undefined> {
  if (!token || !CART_TOKEN.test(token)) return undefined;
  const query = tx
    .select({ id: cart.id, currency: cart.currency })
    .from(cart)
    // A converted cart is an order now: the shopper's next change starts a new cart (with a new token).
    .where(and(eq(cart.storeId, tx.storeId), eq(cart.tokenHash, await sha256Hex(token)), isNull(cart.convertedOrderId)));
  const [row] = lock ? await query.for("update") : await query;
  return row;
}

export async function createCart(tx: StoreTx, tokenHash: string): Promise<CartRow> {
  const [s] = await tx.select({ currency: store.currency }).from(store).where(eq(store.id, tx.storeId));
  const [row] = await tx
    .insert(cart)
    .values({ storeId: tx.storeId, tokenHash, currency: s!.currency })
    .returning({ id: cart.id, currency: cart.currency });
  return row!;
}

/** What the store can still sell of a variant now: on hand minus reserved over locations that sell online. */
const onlineAvailable = (storeId: AnyPgColumn, variantId: AnyPgColumn): SQL<number> => sql<number>`greatest(coalesce((
  select sum(il.on_hand - il.reserved) from inventory_level il
  join location l on l.store_id = il.store_id and l.id = il.location_id and l.sells_online
  where il.store_id = ${storeId} and il.variant_id = ${variantId}), 0), 0)::int`;

const variantProductJoin = and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId));

/** Which cart a plan reads: by the hash of the cookie's token (a read knows no cart id), or by id. */
export type CartKey = { tokenHash: string } | { cartId: string } | null;

const cartWhere = (key: Exclude<CartKey, null>): SQL =>
  "cartId" in key
    ? and(eq(cart.storeId, CURRENT_STORE), eq(cart.id, key.cartId))!
    : // A converted cart is an order now: the shopper's next change starts a new cart (with a new token).
      and(eq(cart.storeId, CURRENT_STORE), eq(cart.tokenHash, key.tokenHash), isNull(cart.convertedOrderId))!;

/**
 * The cart as the shopper sees it: its lines with what can still be sold, the live discount, the totals.
 * Four independent statements keyed on the cart (its token's hash or its id), one unit; no cart answers
 * an empty one in the store's currency.
 */
export function cartPlan(q: Q, key: CartKey): Plan<CartView> {
  const where = key ? cartWhere(key) : sql`false`;
  return plan(
    [
      q.select({ id: cart.id, currency: cart.currency }).from(cart).where(where),
      q
        .select({
          id: cartLine.id,
          variantId: cartLine.variantId,
          productTitle: product.title,
          variantTitle: productVariant.title,
          sku: productVariant.sku,
          quantity: cartLine.quantity,
          unitPrice: productVariant.priceMinor,
          available: sql<number>`case when ${product.status} = 'active' then ${onlineAvailable(cartLine.storeId, cartLine.variantId)} else 0 end`,
        })
        .from(cartLine)
        .innerJoin(cart, and(eq(cart.storeId, cartLine.storeId), eq(cart.id, cartLine.cartId)))
        .innerJoin(productVariant, and(eq(productVariant.storeId, cartLine.storeId), eq(productVariant.id, cartLine.variantId)))
        .innerJoin(product, variantProductJoin)
        .where(where)
        .orderBy(asc(cartLine.createdAt), asc(cartLine.id)),
      // DISCOUNT_STATE reads the bare columns of discount, so discount stays the only table of this query.
      q
        .select({ code: discount.code, kind: discount.kind, value: discount.value })
        .from(discount)
        .where(and(eq(discount.storeId, CURRENT_STORE), inArray(discount.id, q.select({ id: cart.discountId }).from(cart).where(where)), sql`${DISCOUNT_STATE} = 'live'`)),
      q.select({ currency: store.currency }).from(store).where(eq(store.id, CURRENT_STORE)),
    ] as const,
    ([[row], lines, [applied], [shop]]) => {
      if (!row) return { id: null, currency: shop?.currency ?? "", lines: [], subtotal: 0, discount: 0, discountCode: null, total: 0 };
      const totals = cartTotals(lines, applied ?? null);
      return {
        id: row.id,
        currency: row.currency,
        lines: lines.map((l) => ({ ...l, lineTotal: lineTotal(l) })),
        subtotal: totals.subtotal,
        discount: totals.discount,
        discountCode: applied?.code ?? null,
        total: totals.total,
      };
    },
  );
}

/** The shopper's cart as it is now, in one round trip (a page or GET /api/cart). */
export async function readCart(db: Database, storeId: string, token: string | undefined): Promise<CartView> {
  const key = await cartKeyOf(token);
  return sendStoreUnit(db, storeId, (q) => cartPlan(q, key));
}

/** The plan's key for a cookie's token (null for a missing or malformed one: no cart). */
export async function cartKeyOf(token: string | undefined): Promise<CartKey> {
  return token && CART_TOKEN.test(token) ? { tokenHash: await sha256Hex(token) } : null;
}

/** The cart as it now is, inside a change's open transaction. */
export function cartView(tx: StoreTx, row: CartRow | undefined): Promise<CartView> {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => cartPlan(q, row ? { cartId: row.id } : null));
}

const unknownVariant = () => new AppError("NOT_FOUND", "This product is not sold in this store.", { reason: "unknown_variant" });
const notForSale = () => new AppError("NOT_FOUND", "This product is not for sale right now.", { reason: "not_for_sale" });
const unknownLine = () => new AppError("NOT_FOUND", "This line is not in your cart.", { reason: "unknown_line" });

function tooMany(path: string, available: number, title: string): AppError {
  const message = `only ${available} available`;
  return new AppError("CONFLICT", `Only ${available} of ${title} can be ordered now.`, {
    reason: "insufficient_stock",
    issues: [{ path, message, available }],
  });
}

function overLineMax(path: string): AppError {
  return badRequest([{ path, message: `A cart line holds at most ${CART_LINE_QUANTITY_MAX}` }]);
}

/** The variant with its sale status and stock; the id must be of this store (RLS) and sellable. */
async function sellableVariant(tx: StoreTx, variantId: string) {
  const [v] = await tx
    .select({
      id: productVariant.id,
      title: product.title,
      status: product.status,
      preorder: productVariant.preorder,
      available: onlineAvailable(productVariant.storeId, productVariant.id),
    })
    .from(productVariant)
    .innerJoin(product, variantProductJoin)
    .where(and(eq(productVariant.storeId, tx.storeId), eq(productVariant.id, variantId)));
  if (!v) throw unknownVariant();
  if (v.status !== "active") throw notForSale();
  return v;
}

/** Checks a line's new quantity against stock. Pre-order variants are sold for later, so stock does not cap them. */
async function checkQuantity(tx: StoreTx, variantId: string, quantity: number, path: string): Promise<void> {
  if (quantity > CART_LINE_QUANTITY_MAX) throw overLineMax(path);
  const v = await sellableVariant(tx, variantId);
  if (!v.preorder && quantity > v.available) throw tooMany(path, v.available, v.title);
}

const touch = (tx: StoreTx, row: CartRow) =>
  tx.update(cart).set({ updatedAt: sql`now()` }).where(and(eq(cart.storeId, tx.storeId), eq(cart.id, row.id)));

/** Adds `quantity` of a variant; adding a variant already in the cart adds to its line. */
export async function addLine(tx: StoreTx, row: CartRow, variantId: string, quantity: number): Promise<void> {
  const [existing] = await tx
    .select({ quantity: cartLine.quantity })
    .from(cartLine)
    .where(and(eq(cartLine.storeId, tx.storeId), eq(cartLine.cartId, row.id), eq(cartLine.variantId, variantId)));
  await checkQuantity(tx, variantId, (existing?.quantity ?? 0) + quantity, "variantId");
  await tx
    .insert(cartLine)
    .values({ storeId: tx.storeId, cartId: row.id, variantId, quantity })
    .onConflictDoUpdate({
      target: [cartLine.storeId, cartLine.cartId, cartLine.variantId],
      set: { quantity: sql`${cartLine}.quantity + excluded.quantity`, updatedAt: sql`now()` },
    });
  await touch(tx, row);
}

/**
 * Sets a line's quantity; 0 removes it. Lowering a quantity is always allowed (even when stock fell below
 * it); raising it is checked against stock and the product's sale status.
 */
export async function setLineQuantity(tx: StoreTx, row: CartRow | undefined, lineId: string, quantity: number): Promise<void> {
  if (!row) throw unknownLine();
  const where = and(eq(cartLine.storeId, tx.storeId), eq(cartLine.cartId, row.id), eq(cartLine.id, lineId));
  const [line] = await tx.select({ variantId: cartLine.variantId, quantity: cartLine.quantity }).from(cartLine).where(where);
  if (!line) throw unknownLine();
  if (quantity === 0) {
    await tx.delete(cartLine).where(where);
  } else {
    if (quantity > line.quantity) await checkQuantity(tx, line.variantId, quantity, `lines.${lineId}.quantity`);
    await tx.update(cartLine).set({ quantity, updatedAt: sql`now()` }).where(where);
  }
  await touch(tx, row);
}

export const removeLine = (tx: StoreTx, row: CartRow | undefined, lineId: string) => setLineQuantity(tx, row, lineId, 0);

/** Attaches a live discount code (case-insensitive) to the cart, replacing any earlier one. */
export async function applyDiscount(tx: StoreTx, row: CartRow, code: string): Promise<void> {
  const [found] = await tx
    .select({ id: discount.id, state: sql<DiscountState>`${DISCOUNT_STATE}` })
    .from(discount)
    .where(and(eq(discount.storeId, tx.storeId), eq(discount.code, code.trim().toUpperCase())));
  if (!found) throw new AppError("NOT_FOUND", "There is no such discount code.", { reason: "unknown_code", issues: [{ path: "code", message: "unknown code" }] });
  if (found.state !== "live") {
    throw new AppError("CONFLICT", `This discount code cannot be used now (${found.state.replace("_", " ")}).`, {
      reason: found.state,
      issues: [{ path: "code", message: found.state }],
    });
  }
  await tx
    .update(cart)
    .set({ discountId: found.id, updatedAt: sql`now()` })
    .where(and(eq(cart.storeId, tx.storeId), eq(cart.id, row.id)));
}

export async function removeDiscount(tx: StoreTx, row: CartRow | undefined): Promise<void> {
  if (!row) return;
  await tx
    .update(cart)
    .set({ discountId: null, updatedAt: sql`now()` })
    .where(and(eq(cart.storeId, tx.storeId), eq(cart.id, row.id)));
}
