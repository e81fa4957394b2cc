import type { Context } from "hono";
import { sha256Hex } from "#shared/core/tokens";
import { isUuid } from "#shared/db/ids";
import { markEmits } from "#shared/db/changes";
import { plan } from "#shared/db/plan";
import { raw, sql } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
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
  const message = sql`select m.customer_id, m.recipient, c.accepts_marketing as consent from marketing_message m
    join customer c on c.store_id = m.store_id and c.id = m.customer_id
    where m.store_id = ${storeSql} and m.id = ${id} and m.unsubscribe_key_hash = ${hash}`;
  type Row = { customer_id: string; recipient: string; consent: boolean };
  // Unsubscribing is one statement: the consent turned off only while it is on, the message marked and
  // the customer.updated event written only for that change (one round trip, the customer row locked).
  const unsubscribed = sql`with m as (${message} for update of c),
               turned as (update customer set accepts_marketing = false, marketing_consent_updated_at = now(), marketing_consent_source = 'unsubscribe_link', updated_at = now()
                          where store_id = ${storeSql} and id = (select customer_id from m) and (select consent from m) returning id),
               marked as (update marketing_message set unsubscribed_at = now() where store_id = ${storeSql} and id = ${id} and exists (select 1 from turned)),
               event as (insert into outbox_event (store_id, kind, payload)
                         select ${storeSql}, 'customer.updated', jsonb_build_object('customerId', id, 'fields', jsonb_build_array('acceptsMarketing'), 'source', 'unsubscribe_link') from turned)
             select customer_id, recipient, consent from m`;
  const row = await sendStoreUnit(
    db,
    store.id,
    (q) => plan([unsubscribe ? markEmits(raw<Row>(q, unsubscribed)) : raw<Row>(q, message)] as const, ([[found]]) => found),
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
