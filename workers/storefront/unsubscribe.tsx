import type { Context } from "hono";
import { sha256Hex } from "#shared/auth/tokens";
import { isUuid } from "#shared/db/ids";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { Alert, ShopPage } from "./layout";
import { limitFormPost } from "./notify-me";
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
  return withStore(db, store.id, async (tx) => {
    const { rows } = await tx.$client.query<{ customer_id: string; recipient: string; consent: boolean }>(
      `select m.customer_id, m.recipient, c.accepts_marketing as consent from marketing_message m
       join customer c on c.store_id = m.store_id and c.id = m.customer_id
       where m.store_id = $1 and m.id = $2 and m.unsubscribe_key_hash = $3 for update of c`,
      [tx.storeId, id, hash],
    );
    const row = rows[0];
    if (!row) return null;
    if (unsubscribe && row.consent) {
      await tx.$client.query(
        `update customer set accepts_marketing = false, marketing_consent_updated_at = now(), marketing_consent_source = 'unsubscribe_link', updated_at = now()
         where store_id = $1 and id = $2`,
        [tx.storeId, row.customer_id],
      );
      await tx.$client.query("update marketing_message set unsubscribed_at = now() where store_id = $1 and id = $2", [tx.storeId, id]);
      await emit(tx, "customer.updated", { customerId: row.customer_id, fields: ["acceptsMarketing"], source: "unsubscribe_link" });
    }
    return { customerId: row.customer_id, recipient: row.recipient, consent: unsubscribe ? false : row.consent };
  });
}

/** `j•••@example.com`: enough for the reader to recognise, nothing for someone holding a forwarded link. */
const masked = (email: string) => email.replace(/^(.)[^@]*(@.*)$/, "$1•••$2");

function page(c: ShopContext, found: Found | null, done: boolean) {
  const { store } = c.var.shop;
  c.header("cache-control", "no-store");
  c.header("x-robots-tag", "noindex");
  c.header("referrer-policy", "no-referrer");
  const head = { storeName: store.name, title: "Unsubscribe", description: `Email preferences at ${store.name}.`, noindex: true };
  if (!found) {
    return c.html(
      <ShopPage head={head}>
        <h1>This link does not work</h1>
        <p>It may be incomplete. Open the unsubscribe link from the email again, or reply to the email and we will take you off the list.</p>
      </ShopPage>,
      404,
    );
  }
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
/** Unsubscribe posts per address per store (a mail client's one-click included). */
const UNSUBSCRIBE_POLICY = { limit: 20, windowMs: 10 * 60_000 };

export const unsubscribePost = async (c: ShopContext) => {
  await limitFormPost(c, "unsubscribe", UNSUBSCRIBE_POLICY);
  return page(c, await find(c, true), true);
};
