import type { SQL } from "drizzle-orm";
import { product, productVariant, restockSubscription, store } from "../db/schema";
import { EXAMPLE, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";
import { AVAILABLE } from "../storefront/catalog";

/** Back-in-stock's statements in SQL (decision 0026): the sign-up (./subscribe.ts) and the alerts (./alerts.ts). */

const { id: ID, store: STORE } = EXAMPLE;

/** A subscription for an email, unless it already waits for `max` products (or for this one). */
export const addSubscription = statement("restock.addSubscription", {
  row: { id: restockSubscription.id },
  examples: [[STORE, { variantId: ID, email: "a@example.test", max: 20 }]],
  sql: (store: SQL, s: { variantId: string; email: string; max: number }) =>
    sql`insert into restock_subscription (store_id, variant_id, email)
        select ${store}, ${s.variantId}::uuid, ${s.email}::text
        where (select count(*) from restock_subscription r where r.store_id = ${store} and r.email = ${s.email} and r.status = 'waiting') < ${s.max}
        on conflict (store_id, variant_id, email) where status = 'waiting' do nothing returning id`,
});

/** The titles of the variant `variant` finds (a `from … where …` of `v` and `p`). */
export const variantTitles = statement("restock.variantTitles", {
  row: { product_title: product.title, variant_title: productVariant.title },
  examples: [[sql`from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id where v.id = ${ID}`]],
  sql: (variant: SQL) => sql`select p.title as product_title, v.title as variant_title ${variant}`,
});

/**
 * Each variant of `variants` (a `select v, n` of ids and their order) that is available online now, with
 * up to `batch` of its waiting subscriptions not tried yet (none of `tried`, none another delivery alerted).
 */
export const waitingSubscriptions = statement("restock.waitingSubscriptions", {
  row: {
    variant_id: productVariant.id,
    store_name: store.name,
    product_title: product.title,
    variant_title: productVariant.title,
    handle: product.handle,
    id: restockSubscription.id,
    email: restockSubscription.email,
  },
  examples: [[sql`select v, n from unnest(${`{${ID}}`}::uuid[]) with ordinality as x(v, n)`, [ID], { template: "back_in_stock", batch: 200 }]],
  sql: (variants: SQL, tried: readonly string[], w: { template: string; batch: number }) =>
    sql`select f.variant_id, f.store_name, f.product_title, f.variant_title, f.handle, w.id, w.email
        from (select v.id as variant_id, x.n, s.name as store_name, p.title as product_title, v.title as variant_title, p.handle, ${sql.raw(AVAILABLE)} as available
              from (${variants}) x join product_variant v on v.store_id = ${CURRENT_STORE} and v.id = x.v
              join product p on p.store_id = v.store_id and p.id = v.product_id join store s on s.id = v.store_id
              where p.status = 'active') f
        cross join lateral (
          select r.id, r.email, r.created_at from restock_subscription r
          where r.store_id = ${CURRENT_STORE} and r.variant_id = f.variant_id and r.status = 'waiting' and r.id <> all(${`{${tried.join(",")}}`}::uuid[])
            and not exists (select 1 from notification n where n.store_id = r.store_id and n.event_id = r.id and n.template = ${w.template} and n.status <> 'sending')
          order by r.created_at, r.id limit ${w.batch}) w
        where f.available > 0
        order by f.n, f.variant_id, w.created_at, w.id`,
});

/** Each subscription still waiting becomes `sent` or `failed` as its try says (`tries`: JSON); answers those marked. */
export const markAlerted = statement("restock.markAlerted", {
  row: { id: restockSubscription.id },
  examples: [[ID, "[]"]],
  sql: (eventId: string, tries: string) =>
    sql`update restock_subscription s set status = r.status, notified_at = now(), event_id = ${eventId}
        from jsonb_to_recordset(${tries}::jsonb) as r(id uuid, status text)
        where s.store_id = ${CURRENT_STORE} and s.id = r.id and s.status = 'waiting' and r.status in ('sent', 'failed')
        returning s.id`,
});

/** Each try counted on its subscription's notification row (a row another delivery finished is left alone). */
export const countAlertTries = statement("restock.countAlertTries", {
  row: {},
  examples: [["back_in_stock", "local", "[]"]],
  sql: (template: string, provider: string, tries: string) =>
    sql`insert into notification (store_id, event_id, template, recipient, subject, attempts, status, provider, provider_id, last_error, sent_at)
        select ${CURRENT_STORE}, r.id, ${template}, r.email, r.subject, 1, case when r.status = 'waiting' then 'sending' else r.status end, ${provider},
          r.provider_id, r.error, case when r.status = 'sent' then now() end
        from jsonb_to_recordset(${tries}::jsonb) as r(id uuid, email text, subject text, status text, provider_id text, error text)
        on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1, status = excluded.status, provider = excluded.provider,
          provider_id = coalesce(excluded.provider_id, notification.provider_id), last_error = excluded.last_error,
          sent_at = case when excluded.status = 'sent' then now() else notification.sent_at end
        where notification.status = 'sending'`,
});
