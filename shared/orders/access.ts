import { z } from "zod";
import { base64Url, sha256Hex } from "../core/tokens";
import type { SQL } from "drizzle-orm";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import { readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { CART_TOKEN } from "../storefront/cart";
import { buyerKeys } from "./statements/order-view";

/**
 * The buyer's own link to an order, `/orders/<id>?k=<key>` (docs/decisions/0009-order-access-key.md):
 * the key is derived from the cart token that became the order, so a replayed checkout answers the same
 * link, and only its SHA-256 is stored (`shop_order.access_key_hash`).
 */
const ORDER_KEY = /^[A-Za-z0-9_-]{43}$/;
const orderIdSchema = z.uuid();
const encoder = new TextEncoder();

/** base64url(HMAC-SHA256(key = the cart token, message = "order-access:" + orderId)): 43 characters. */
export async function orderAccessKey(cartToken: string, orderId: string): Promise<string> {
  const hmac = await crypto.subtle.importKey("raw", encoder.encode(cartToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return base64Url(new Uint8Array(await crypto.subtle.sign("HMAC", hmac, encoder.encode(`order-access:${orderId}`))));
}

/** The one answer for an unknown order, a wrong key and another browser's order alike. */
export const unknownOrder = () => new AppError("NOT_FOUND", "There is no such order for this browser.", { reason: "unknown_order" });

/** The order page's path: with the key when there is one (orders placed before the key have none). */
export const orderPath = (orderId: string, key: string | null): string => (key ? `/orders/${orderId}?k=${key}` : `/orders/${orderId}`);

/** What a request offers as proof that it is the order's buyer: the converted cart's cookie, the key (`?k=`). */
export interface BuyerProof {
  cartToken?: string | undefined;
  key?: string | undefined;
}

/** A proof worth a look in the database: an order id, and a key or cart token of the right shape. */
export interface CheckedProof {
  orderId: string;
  key: string | null;
  cartToken: string | null;
}

/**
 * The proof, when it could open the order; null otherwise, without any database work. An id, key or
 * cookie of any other shape (empty, huge, not base64url) is simply no proof, never an error.
 */
export function checkProof(orderId: string, proof: BuyerProof): CheckedProof | null {
  if (!orderIdSchema.safeParse(orderId).success) return null;
  const key = proof.key !== undefined && ORDER_KEY.test(proof.key) ? proof.key : null;
  const cartToken = proof.cartToken !== undefined && CART_TOKEN.test(proof.cartToken) ? proof.cartToken : null;
  return key || cartToken ? { orderId, key, cartToken } : null;
}

/** The proof's hashes, made before the unit (the database keeps only hashes). */
export interface ProofHashes {
  orderId: string;
  key: string | null;
  keyHash: string | null;
  cartToken: string | null;
  cartTokenHash: string | null;
}

export async function proofHashes(proof: CheckedProof): Promise<ProofHashes> {
  return {
    ...proof,
    keyHash: proof.key ? await sha256Hex(proof.key) : null,
    cartTokenHash: proof.cartToken ? await sha256Hex(proof.cartToken) : null,
  };
}

/**
 * The condition, on an order row `o`, that the proof opens it: the key's hash is the order's (or its
 * email link's), or the cart cookie is the cart that became it. Statements that show an order to its
 * buyer carry it, so an order the proof does not open shows nothing.
 */
export function opensOrder(p: ProofHashes): SQL {
  return sql`(o.access_key_hash = ${p.keyHash} or o.email_key_hash = ${p.keyHash}
    or exists (select 1 from cart c where c.store_id = o.store_id and c.converted_order_id = o.id and c.token_hash = ${p.cartTokenHash}))`;
}

/**
 * Whether the proof opens this order of the store, in one statement. Answers the order's key for the
 * links to hand on (null for an order placed without one), or null when nothing opens it. The key may
 * also be the one of the order link in emails (shared/mail/links.ts orderEmailKey).
 */
export function buyerAccessPlan(q: Q, store: SQL, p: ProofHashes): Plan<Promise<{ key: string | null } | null>> {
  return plan(
    [
      buyerKeys(q, store, p.orderId, opensOrder(p)),
    ] as const,
    async ([[stored]]) => {
      if (!stored) return null;
      if (p.key && (stored.access_key_hash === p.keyHash || stored.email_key_hash === p.keyHash)) return { key: p.key };
      // Opened by the cookie: the same derivation gives the key, when the order has one.
      const derived = await orderAccessKey(p.cartToken!, p.orderId);
      return { key: stored.access_key_hash !== null && (await sha256Hex(derived)) === stored.access_key_hash ? derived : null };
    },
  );
}

/** The same inside a transaction that is open already. */
export async function buyerAccess(tx: StoreTx, proof: CheckedProof): Promise<{ key: string | null } | null> {
  const hashes = await proofHashes(proof);
  return readOn(tx, (q) => buyerAccessPlan(q, sql`${tx.storeId}::uuid`, hashes));
}
