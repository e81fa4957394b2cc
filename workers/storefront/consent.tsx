import type { Context } from "hono";
import { constantTimeEqual } from "#shared/core/crypto";
import { sha256Hex } from "#shared/core/tokens";
import { isUuid } from "#shared/db/ids";
import { sendStoreUnit } from "#shared/db/unit";
import { CONSENT_LINK_DAYS, confirmConsentPlan, consentLinkPlan, type ConsentLinkRow } from "#shared/marketing/consent";
import { Alert, ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";
import { brokenLink, emailLinkHead, masked } from "./unsubscribe";

/**
 * The double opt-in's confirmation link, `/consent/<customerId>?k=<key>` (docs/marketing.md "Consent";
 * decision 0021), from the email a checkout's "Email me news and offers" asked for. The GET only asks (mail
 * scanners open links); the POST confirms the consent, in one statement with its `customer.updated`
 * event. The key proves the link came in that email: the row keeps only its SHA-256, compared here in
 * constant time. A wrong key, an unknown customer and another store's host all get the same 404. The page
 * works while the storefront password is on.
 */
type ShopContext = Context<ShopEnv>;

const KEY = /^[0-9a-f]{64}$/;
const enc = new TextEncoder();

/** The customer the link names, when its key is the latest request's; else null. */
async function find(c: ShopContext): Promise<{ customerId: string; row: ConsentLinkRow } | null> {
  const customerId = c.req.param("customerId") ?? "";
  const key = c.req.query("k") ?? "";
  if (!isUuid(customerId) || !KEY.test(key)) return null;
  const { db, store } = c.var.shop;
  const [hash, row] = await Promise.all([sha256Hex(key), sendStoreUnit(db, store.id, (q) => consentLinkPlan(q, customerId), { readOnly: true })]);
  if (!row?.keyHash || !row.email || !constantTimeEqual(enc.encode(hash), enc.encode(row.keyHash))) return null;
  return { customerId, row };
}

function page(c: ShopContext, found: { row: ConsentLinkRow } | null, confirmedNow: boolean) {
  const { store } = c.var.shop;
  const head = emailLinkHead(c, "Confirm your subscription");
  if (!found) return brokenLink(c, head, "It may be incomplete. Open the link from the confirmation email again.");
  const { row } = found;
  const who = masked(row.email ?? "");
  return c.html(
    <ShopPage head={head}>
      <h1>News and offers from {store.name}</h1>
      {confirmedNow ? <Alert message={`${who} is subscribed.`} /> : null}
      {row.state === "confirmed" ? (
        <p data-consent="confirmed">
          <strong>{who}</strong> gets news and offers from {store.name}. Every email has a link to unsubscribe.
        </p>
      ) : row.open ? (
        <form method="post" class="card" data-consent="pending">
          <p>
            Send news and offers from {store.name} to <strong>{who}</strong>?
          </p>
          <button type="submit">Yes, send me news and offers</button>
        </form>
      ) : (
        <p data-consent="closed">
          This link no longer confirms anything: it works for {CONSENT_LINK_DAYS} days and until it is answered or a newer one is sent. <strong>{who}</strong> gets no
          marketing emails from {store.name}. Emails about your orders still arrive.
        </p>
      )}
    </ShopPage>,
  );
}

export const consentPage = async (c: ShopContext) => page(c, await find(c), false);

/** Confirmation posts are counted at the door with the unsubscribe posts (limits.tsx, before any database work). */
export const consentPost = async (c: ShopContext) => {
  const found = await find(c);
  if (!found || !found.row.open) return page(c, found, false);
  const { db, store } = c.var.shop;
  const confirmed = await sendStoreUnit(db, store.id, (q) => confirmConsentPlan(q, found.customerId, found.row.keyHash!), { readOnly: false });
  return page(c, confirmed ? { row: { ...found.row, state: "confirmed", open: false } } : await find(c), confirmed);
};
