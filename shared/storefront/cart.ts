/**
 * The storefront cart (issue 10): one per shopper per store, found by the SHA-256 of the random token in
 * the shopper's cookie. Reads are plans for one unit of the hostname's store, so RLS keeps a cart, its
 * lines and their variants within it; changes are ./cart-changes.ts (the cart row locked first, so
 * concurrent changes to one cart apply one after another and sum exactly).
 *
 * Answer shape: `discount` is the amount taken off, in minor units, and `discountCode` names the code
 * (null when none). A code attached earlier that is no longer live (expired, disabled, used up) takes
 * nothing off and is not shown; checkout re-checks anyway.
 */
import { and, asc, inArray, isNull, eq, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { randomSecret, sha256Hex } from "../core/tokens";
import { cart, cartLine, discount, product, productVariant, store } from "../db/schema";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import type { Database } from "../db/database";
import { sendStoreUnit } from "../db/unit";
import { DISCOUNT_STATE } from "./discount-state";
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

/** What the store can still sell of a variant now: on hand minus reserved over locations that sell online. */
const onlineAvailable = (storeId: AnyPgColumn, variantId: AnyPgColumn): SQL<number> => sql<number>`greatest(coalesce((
  select sum(il.on_hand - il.reserved) from inventory_level il
  join location l on l.store_id = il.store_id and l.id = il.location_id and l.sells_online
  where il.store_id = ${storeId} and il.variant_id = ${variantId}), 0), 0)::int`;

const variantProductJoin = and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId));

/** Which cart a plan reads: by the hash of the cookie's token (a read knows no cart id), or by id. */
export type CartKey = { tokenHash: string } | { tokenHashes: string[] } | { cartId: string } | null;

const cartWhere = (key: Exclude<CartKey, null>): SQL => {
  if ("cartId" in key) return and(eq(cart.storeId, CURRENT_STORE), eq(cart.id, key.cartId))!;
  // A converted cart is an order now: the shopper's next change starts a new cart (with a new token).
  const hashes = "tokenHash" in key ? [key.tokenHash] : key.tokenHashes;
  return and(eq(cart.storeId, CURRENT_STORE), inArray(cart.tokenHash, hashes.length ? hashes : [""]), isNull(cart.convertedOrderId))!;
};

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
