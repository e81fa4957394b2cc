import { base64Url } from "../core/tokens";
import { orderAccessKey, orderPath } from "../orders/access";

/**
 * The cart an agent's checkout session becomes when it is completed (./checkout-complete.ts), and so the
 * buyer's link to the order it places. The cart's token is derived, never stored: HMAC-SHA-256 under a key
 * HKDF derives from the deployment's UCP_SIGNING_ROOT_SECRET for this purpose alone, over the store and the
 * session. So completing again finds the same cart (a completion cut short by a lost connection places no
 * second order: checkout answers the order the cart became), and the order's key (derived from the cart's
 * token as every order's is, shared/orders/access.ts) can be given again on every answer, and in the order
 * updates the agent's platform receives, while the database holds only its hash.
 */

const encoder = new TextEncoder();

async function cartKey(rootSecret: string): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", encoder.encode(rootSecret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: encoder.encode("ucp-session-cart/v1"), info: encoder.encode("cart-token") },
    ikm,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
}

/** The session's cart token: 43 base64url characters, as every cart token (shared/storefront/cart.ts). */
export async function sessionCartToken(rootSecret: string, storeId: string, sessionId: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await cartKey(rootSecret), encoder.encode(`${storeId}/${sessionId.toLowerCase()}`));
  return base64Url(new Uint8Array(mac));
}

/** The buyer's link to the order a session placed (`/orders/<id>?k=<key>`), a path on the store's domain. */
export async function sessionOrderPath(rootSecret: string, storeId: string, sessionId: string, orderId: string): Promise<string> {
  return orderPath(orderId, await orderAccessKey(await sessionCartToken(rootSecret, storeId, sessionId), orderId));
}
