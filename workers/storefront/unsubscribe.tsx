import type { Context } from "hono";
import { sha256Hex } from "#shared/core/tokens";
import { isUuid } from "#shared/db/ids";
import { markEmits } from "#shared/db/changes";
import { plan } from "#shared/db/plan";
import { sql } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { unsubscribe as unsubscribeStatement, unsubscribeLink } from "#shared/marketing/statements";
import { Alert, ShopPage, type ShopHead } from "./layout";
import type { ShopEnv } from "./shop-env";

/**
 * A marketing email's unsubscribe link, `/unsubscribe/<messageId>?k=<key>` (docs/marketing.md). The GET
 * only asks (mail scanners open links); the POST turns the customer's consent off, in one transaction with
 * its `customer.updated` event. The key proves the link came in that email: only its SHA-256 is stored.
 * The POST needs no other proof, so a mail client's one-click unsubscribe (RFC 8058) works too. A wrong
 * key, an unknown message and another store's message all get the same 404.
 */
type ShopContext = Context<ShopEnv>;

const KEY = /^[0-9a-f]{64}$/;

interface Found {
  customerId: string;
  recipient: string;
  consent: boolean;
}

async function find(c: ShopContext, unsubscribe: boolean): Promise<Found | null> {
  const id = c.req.param("messageId") ?? "";
  const key = c.req.query("k") ?? "";
  if (!isUuid(id) || !KEY.test(key)) return null;
  const { db, store } = c.var.shop;
  const hash = await sha256Hex(key);
  const storeSql = sql`${store.id}::uuid`;
  // Unsubscribing is one statement (one round trip, the customer row locked).
  const row = await sendStoreUnit(
    db,
    store.id,
    (q) => plan([unsubscribe ? markEmits(unsubscribeStatement(q, storeSql, id, hash)) : unsubscribeLink(q, storeSql, id, hash)] as const, ([[found]]) => found),
    { readOnly: !unsubscribe },
  );
  if (!row) return null;
  return { customerId: row.customer_id, recipient: row.recipient, consent: unsubscribe ? false : row.consent };
}

/** `j•••@example.com`: enough for the reader to recognise, nothing for someone holding a forwarded link. */
export const masked = (email: string) => email.replace(/^(.)[^@]*(@.*)$/, "$1•••$2");

/** An email link's page (this one, ./consent.tsx): never cached, indexed or referred on; answers its head. */
export function emailLinkHead(c: ShopContext, title: string) {
  const { store } = c.var.shop;
  c.header("cache-control", "no-store");
  c.header("x-robots-tag", "noindex");
  c.header("referrer-policy", "no-referrer");
  return { storeName: store.name, title, description: `Email preferences at ${store.name}.`, noindex: true };
}

/** The one 404 of an email link that opens nothing (a wrong key, an unknown row, another store's host). */
export const brokenLink = (c: ShopContext, head: ShopHead, advice: string) =>
  c.html(
    <ShopPage head={head}>
      <h1>This link does not work</h1>
      <p>{advice}</p>
    </ShopPage>,
    404,
  );

function page(c: ShopContext, found: Found | null, done: boolean) {
  const { store } = c.var.shop;
  const head = emailLinkHead(c, "Unsubscribe");
  if (!found) return brokenLink(c, head, "It may be incomplete. Open the unsubscribe link from the email again, or reply to the email and we will take you off the list.");
  return c.html(
    <ShopPage head={head}>
      <h1>Marketing emails from {store.name}</h1>
      {done ? <Alert message={`${masked(found.recipient)} is unsubscribed.`} /> : null}
      {found.consent ? (
        <form method="post" class="card">
          <p>
            Stop sending news and offers to <strong>{masked(found.recipient)}</strong>?
          </p>
          <button type="submit">Unsubscribe</button>
        </form>
      ) : (
        <p>
          <strong>{masked(found.recipient)}</strong> gets no marketing emails from {store.name}. Emails about your orders still arrive.
        </p>
      )}
    </ShopPage>,
  );
}

export const unsubscribePage = async (c: ShopContext) => page(c, await find(c, false), false);
/** Unsubscribe posts (a mail client's one-click included) are counted at the door (limits.tsx). */
export const unsubscribePost = async (c: ShopContext) => page(c, await find(c, true), true);
