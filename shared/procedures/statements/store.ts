import type { SQL } from "drizzle-orm";
import { product, productVariant, storeDomain, type RoleName } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import { AVAILABLE } from "../../storefront/catalog";
import type { SessionInfo } from "../define";
import { customerSearch, orderSearch } from "../search";
import { tallyRows } from "../tally";

/** The procedures' other statements in SQL (decision 0026): counts, the overview, waiting lists, and guards that read the unit's caller. */

const { id: ID, store: STORE, hash: HASH } = EXAMPLE;

/** A unit that only admits its caller (its opening does): one statement that reads nothing. */
export const admitOnly = statement("procedures.admitOnly", {
  row: { "?column?": pg.int4() },
  examples: [[]],
  sql: () => sql`select 1`,
});

const A_PAGE = { limit: 20, offset: 0 };

/** orders.list's search by words, counted (../search.ts). */
export const orderSearchCount = statement("procedures.orderSearchCount", {
  row: { n: pg.int4() },
  examples: [
    [STORE, sql<boolean>`true`, ["kurta"], undefined],
    [STORE, sql<boolean>`true`, ["kurta", "blue"], 1001],
  ],
  sql: (store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]], number: number | undefined) => orderSearch(store, contact, words, A_PAGE, number).count,
});

/** customers.list's search by words, counted (../search.ts). */
export const customerSearchCount = statement("procedures.customerSearchCount", {
  row: { n: pg.int4() },
  examples: [[STORE, sql<boolean>`true`, ["priya", "sh"]]],
  sql: (store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]]) => customerSearch(store, contact, words, A_PAGE).count,
});

/** The open orders waiting for someone, from the store's tally (migration 0031), and the open tasks. */
export const waitingOrders = statement("procedures.waitingOrders", {
  row: { unpaid: pg.int4(), paymentPending: pg.int4(), toShip: pg.int4(), partlyShipped: pg.int4(), openTasks: pg.int4() },
  examples: [[STORE]],
  sql: (store: SQL) =>
    // The open orders' counts are kept by the writes (the store's tally, migration 0031): one row, not
    // every open order of the store.
    sql`select coalesce(sum(o.open_unpaid), 0)::int as "unpaid",
       coalesce(sum(o.open_payment_pending), 0)::int as "paymentPending",
       coalesce(sum(o.open_to_ship), 0)::int as "toShip",
       coalesce(sum(o.open_partly_shipped), 0)::int as "partlyShipped",
       (select count(*) from merchant_task t where t.store_id = ${store} and t.status = 'open')::int as "openTasks"
     from ${tallyRows(store)} o`,
});

/** Variants of active products running low online, lowest first; pre-order variants left out. */
export const lowStock = statement("procedures.lowStock", {
  row: {
    variantId: productVariant.id,
    productId: product.id,
    productTitle: product.title,
    variantTitle: productVariant.title,
    sku: productVariant.sku,
    available: pg.int4(),
  },
  examples: [[STORE, 3, 10]],
  sql: (store: SQL, threshold: number, limit: number) =>
    sql`select * from (
       select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle", v.sku, ${sql.raw(AVAILABLE)} as available
       from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
       where v.store_id = ${store} and p.status = 'active' and not v.preorder) s
     where available <= ${threshold}
     order by available, "productTitle", "variantTitle" limit ${limit}`,
});

const subscriptions = (store: SQL, productId: string | undefined) => sql`from restock_subscription r
   join product_variant v on v.store_id = r.store_id and v.id = r.variant_id
   join product p on p.store_id = v.store_id and p.id = v.product_id
   where r.store_id = ${store}${productId ? sql` and p.id = ${productId}` : sql``}`;

/** Variants shoppers asked to hear about when back in stock, most waiting first. */
export const waitingVariants = statement("procedures.waitingVariants", {
  row: {
    variantId: productVariant.id,
    productId: product.id,
    productTitle: product.title,
    variantTitle: productVariant.title,
    waiting: pg.int4(),
    alerted: pg.int4(),
    // The oldest waiting request; null for a variant whose requests were all sent.
    since: orNull(pg.timestamptz()),
  },
  examples: [
    [STORE, undefined, A_PAGE],
    [STORE, ID, A_PAGE],
  ],
  sql: (store: SQL, productId: string | undefined, page: { limit: number; offset: number }) =>
    sql`select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle",
       count(*) filter (where r.status = 'waiting')::int as waiting, count(*) filter (where r.status = 'sent')::int as alerted,
       min(r.created_at) filter (where r.status = 'waiting') as since
     ${subscriptions(store, productId)}
     group by v.id, p.id
     order by waiting desc, since, v.id limit ${page.limit} offset ${page.offset}`,
});

export const countWaitingVariants = statement("procedures.countWaitingVariants", {
  row: { n: pg.int4() },
  examples: [[STORE, ID]],
  sql: (store: SQL, productId: string | undefined) => sql`select count(distinct v.id)::int as n ${subscriptions(store, productId)}`,
});

/** The store's domains, locked: two changes of the primary run one after the other. */
export const lockDomains = statement("procedures.lockDomains", {
  row: { id: storeDomain.id },
  examples: [[STORE]],
  sql: (store: SQL) => sql`select ${storeDomain.id} from ${storeDomain} where ${storeDomain.storeId} = ${store} for update`,
});

/** `domain.primary_changed`, only when the domain `domain` finds is not primary yet. */
export const primaryChanged = statement("procedures.primaryChanged", {
  row: {},
  examples: [[STORE, sql`${storeDomain.id} = ${ID}`]],
  sql: (store: SQL, domain: SQL | undefined) =>
    sql`insert into outbox_event (store_id, kind, payload)
        select ${store}, 'domain.primary_changed', jsonb_build_object('domainId', ${storeDomain.id}, 'hostname', ${storeDomain.hostname})
        from ${storeDomain} where ${domain} and not ${storeDomain.isPrimary}`,
});

/** The campaigns that chose a customer count one recipient fewer (their messages go with the customer). */
export const forgetRecipient = statement("procedures.forgetRecipient", {
  row: {},
  examples: [[STORE, ID]],
  sql: (store: SQL, customerId: string) =>
    sql`update campaign c set recipients = c.recipients - x.n, updated_at = now()
        from (select campaign_id, count(*)::int as n from marketing_message
              where store_id = ${store} and customer_id = ${customerId} and campaign_id is not null group by campaign_id) x
        where c.store_id = ${store} and c.id = x.campaign_id`,
});

/** Stops the unit with 403 naming the areas (in the caller's order) that `allowed` says the caller's role does not yield. */
export const areasWithinRole = statement("procedures.areasWithinRole", {
  row: { ok: pg.bool() },
  examples: [[[sql`(${0}::int, ${"orders"}::text, true)`]]],
  sql: (rows: readonly SQL[]) =>
    sql`select unit.ensure(b.beyond is null, '403', 'Your role does not allow granting ' || b.beyond || '.',
          jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'areas', 'message', 'beyond your role: ' || b.beyond)))) as ok
        from (select string_agg(v.area, ', ' order by v.n) as beyond from (values ${sql.join([...rows], sql`, `)}) as v(n, area, allowed) where not v.allowed) b`,
});

/** A session and the stores its person is a member of, each read inside its own store (migration 0029). */
export const storesOfSession = statement("procedures.storesOfSession", {
  row: { found: pg.jsonb<{ session: SessionInfo & { touch: boolean }; stores: { id: string; slug: string; name: string; role: RoleName }[] }>() },
  examples: [[HASH, 1800, 60]],
  sql: (idHash: string, idleSeconds: number, touchAfterSeconds: number) => sql`select unit.stores_of_session(${idHash}, ${idleSeconds}, ${touchAfterSeconds}) as found`,
});
