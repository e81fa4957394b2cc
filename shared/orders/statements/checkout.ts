import type { SQL } from "drizzle-orm";
import { cart, cartLine, discount, inventoryLevel, location, paymentAttempt, product, productVariant, store as storeTable } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/**
 * The statements of checkout's change that place the order (../checkout-change.ts). The rows it writes
 * travel as one jsonb value each, read by `jsonb_to_recordset` with the columns below.
 */

const { id: ID, store: STORE, at: AT } = EXAMPLE;
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

export type OrderLineRow = {
  id: string;
  variant_id: string;
  product_title: string;
  variant_title: string;
  sku: string | null;
  tax_class: string;
  preorder: boolean;
  quantity: number;
  unit_price: number;
  discount: number;
  position: number;
};

export type ParcelRow = {
  id: string;
  location_id: string;
  origin_state: string | null;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  cgst: number;
  sgst: number;
  igst: number;
  position: number;
};

export type ParcelLineRow = { fulfillment_order_id: string; order_line_id: string; quantity: number; reserved: number; variant_id: string; location_id: string; stock_id: string | null };

/** The order's own row, what checkout decided. */
export interface PlacedOrder {
  orderId: string;
  cartId: string;
  email: string;
  phone: string | null;
  shippingAddress: unknown;
  destination: string;
  paymentMethod: string;
  currency: string;
  money: { subtotal: number; discount: number; shipping: number; tax: number; total: number };
  discountCode: string | null;
  expiresAt: Date;
  now: Date;
  accessKeyHash: string;
  balance: number;
  discountId: string | null;
  networkHash: string | null;
  /** A business purchase: the buyer's GSTIN and legal name (migration 0036). */
  buyerGstin: string | null;
  buyerLegalName: string | null;
  /** Where the order came from (migration 0054): the storefront's checkout, or an agent's UCP session. */
  channel: "online_store" | "ucp";
}

/** The order, numbered by the store's counter (the first is 1001). */
export const insertOrder = statement("orders.insertOrder", {
  row: {},
  examples: [
    [
      STORE,
      {
        orderId: ID,
        cartId: ID,
        email: "a@example.test",
        phone: null,
        shippingAddress: {},
        destination: "MH",
        paymentMethod: "gateway",
        currency: "INR",
        money: { subtotal: 1, discount: 0, shipping: 0, tax: 0, total: 1 },
        discountCode: null,
        expiresAt: AT,
        now: AT,
        accessKeyHash: "0".repeat(64),
        balance: 0,
        discountId: null,
        networkHash: null,
        buyerGstin: null,
        buyerLegalName: null,
        channel: "online_store",
      },
    ],
  ],
  sql: (store: SQL, o: PlacedOrder) =>
    sql`with counter as (insert into order_counter as c (store_id, next_number) values (${store}, 1002)
                           on conflict (store_id) do update set next_number = c.next_number + 1 returning next_number - 1 as number)
        insert into shop_order (id, store_id, number, cart_id, email, phone, shipping_address, ship_to_state, payment_method, currency,
          subtotal, discount, shipping, tax, total, discount_code, expires_at, placed_at, access_key_hash, balance_amount, discount_id, buyer_network_hash,
          buyer_gstin, buyer_legal_name, channel)
        select ${o.orderId}, ${store}, counter.number, ${o.cartId}, ${o.email}, ${o.phone}, ${json(o.shippingAddress)},
          ${o.destination}, ${o.paymentMethod}, ${o.currency}, ${o.money.subtotal}, ${o.money.discount}, ${o.money.shipping}, ${o.money.tax}, ${o.money.total},
          ${o.discountCode}, ${o.expiresAt}, ${o.now}, ${o.accessKeyHash}, ${o.balance}, ${o.discountId}::uuid, ${o.networkHash},
          ${o.buyerGstin}, ${o.buyerLegalName}, ${o.channel}
        from counter`,
});

export const insertOrderLines = statement("orders.insertOrderLines", {
  row: {},
  examples: [[STORE, ID, []]],
  sql: (store: SQL, orderId: string, lines: readonly OrderLineRow[]) =>
    sql`insert into order_line (id, store_id, order_id, variant_id, product_title, variant_title, sku, tax_class, preorder, quantity, unit_price, line_total, discount, position)
        select x.id, ${store}, ${orderId}, x.variant_id, x.product_title, x.variant_title, x.sku, x.tax_class, x.preorder, x.quantity, x.unit_price, x.unit_price * x.quantity, x.discount, x.position
        from jsonb_to_recordset(${json(lines)}) as x(id uuid, variant_id uuid, product_title text, variant_title text, sku text, tax_class text, preorder boolean,
          quantity int, unit_price bigint, discount bigint, position int)`,
});

export const insertParcels = statement("orders.insertParcels", {
  row: {},
  examples: [[STORE, ID, []]],
  sql: (store: SQL, orderId: string, parcels: readonly ParcelRow[]) =>
    sql`insert into fulfillment_order (id, store_id, order_id, location_id, origin_state, subtotal, discount, shipping, tax, cgst, sgst, igst, position)
        select x.id, ${store}, ${orderId}, x.location_id, x.origin_state, x.subtotal, x.discount, x.shipping, x.tax, x.cgst, x.sgst, x.igst, x.position
        from jsonb_to_recordset(${json(parcels)}) as x(id uuid, location_id uuid, origin_state text, subtotal bigint, discount bigint, shipping bigint,
          tax bigint, cgst bigint, sgst bigint, igst bigint, position int)`,
});

/** The parcels' lines, and the units they reserve taken from their stock rows. */
export const insertParcelLines = statement("orders.insertParcelLines", {
  row: {},
  examples: [[STORE, []]],
  sql: (store: SQL, lines: readonly ParcelLineRow[]) =>
    sql`with x as (select * from jsonb_to_recordset(${json(lines)}) as x(fulfillment_order_id uuid, order_line_id uuid, quantity int, reserved int, variant_id uuid, location_id uuid)),
         lines as (insert into fulfillment_order_line (store_id, fulfillment_order_id, order_line_id, quantity, reserved, backordered)
                   select ${store}, fulfillment_order_id, order_line_id, quantity, reserved, quantity - reserved from x)
        update inventory_level il set reserved = il.reserved + x.reserved, updated_at = now()
        from x where il.store_id = ${store} and il.variant_id = x.variant_id and il.location_id = x.location_id and x.reserved > 0`,
});

/** Who bought, as checkout knows them (../checkout-change.ts says what the statement does with a customer). */
export interface Buyer {
  orderId: string;
  cartId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  city: string;
  consent: boolean;
  consentEveryHours: number;
}

/** The cart converted, and the buyer found or added among the store's customers, with their events. */
export const convertCartForBuyer = statement("orders.convertCartForBuyer", {
  row: {},
  examples: [[STORE, { orderId: ID, cartId: ID, email: "a@example.test", firstName: null, lastName: null, phone: null, city: "Pune", consent: true, consentEveryHours: 24 }]],
  sql: (store: SQL, b: Buyer) =>
    sql`with converted as (update cart set converted_order_id = ${b.orderId}, updated_at = now() where store_id = ${store} and id = ${b.cartId}),
         buyer as (
           insert into customer (store_id, email, first_name, last_name, phone, city, marketing_consent_requested_at, marketing_consent_updated_at, marketing_consent_source)
           values (${store}, ${b.email}, ${b.firstName}, ${b.lastName}, ${b.phone},
             ${b.city}, case when ${b.consent}::boolean then now() end, case when ${b.consent}::boolean then now() end,
             case when ${b.consent}::boolean then 'checkout' end)
           on conflict (store_id, lower(email)) where email is not null do update set
             marketing_consent_requested_at = now(), marketing_consent_updated_at = now(), marketing_consent_source = 'checkout', updated_at = now()
             where ${b.consent}::boolean and (customer.marketing_consent = 'none'
               or (customer.marketing_consent = 'pending' and customer.marketing_consent_requested_at <= now() - make_interval(hours => ${b.consentEveryHours})))
           returning id, (xmax = 0) as created, marketing_consent_requested_at as requested_at)
        insert into outbox_event (store_id, kind, payload)
        select ${store}, case when created then 'customer.created' else 'customer.updated' end,
          case when created then jsonb_build_object('customerId', id, 'source', 'checkout')
               else jsonb_build_object('customerId', id, 'fields', jsonb_build_array('marketingConsent'), 'source', 'checkout') end
        from buyer
        union all
        select ${store}, 'customer.consent_requested', jsonb_build_object('customerId', id, 'requestedAt', requested_at) from buyer where requested_at is not null`,
});

// What checkout decides from (../checkout-reading.ts), read in one unit.

/** The cart as the change will check it: converted or not, its discount, its lines (by id). */
export function cartState(store: SQL, cartId: SQL, lock: boolean): SQL {
  return sql`select jsonb_build_object('converted', c.converted_order_id, 'discount', c.discount_id,
      'lines', coalesce((select jsonb_agg(jsonb_build_object('id', cl.id, 'variant', cl.variant_id, 'quantity', cl.quantity) order by cl.id)
                         from cart_line cl where cl.store_id = c.store_id and cl.cart_id = c.id), '[]'::jsonb))
    from (select * from cart where store_id = ${store} and id = ${cartId}${lock ? sql` for update` : sql``}) c`;
}

const HASH = "0".repeat(64);
const CART = sql`(select id from cart where store_id = ${STORE} and token_hash = ${HASH})`;

/** The cart a token names (by its hash), with its state (locked, with `lock`). */
export const checkoutCart = statement("orders.checkoutCart", {
  row: { id: cart.id, currency: cart.currency, discount_id: cart.discountId, converted_order_id: cart.convertedOrderId, state: pg.jsonb<unknown>() },
  examples: [
    [STORE, HASH, false],
    [STORE, HASH, true],
  ],
  sql: (store: SQL, tokenHash: string, lock: boolean) =>
    sql`select c.id, c.currency, c.discount_id, c.converted_order_id, (${cartState(store, sql`c.id`, false)}) as state
        from cart c where c.store_id = ${store} and c.token_hash = ${tokenHash}${lock ? sql` for update` : sql``}`,
});

export const checkoutCartLines = statement("orders.checkoutCartLines", {
  row: {
    line_id: cartLine.id,
    variant_id: cartLine.variantId,
    quantity: cartLine.quantity,
    product_title: product.title,
    variant_title: productVariant.title,
    sku: productVariant.sku,
    tax_class: productVariant.taxClass,
    preorder: productVariant.preorder,
    unit_price: pg.text(),
    product_status: product.status,
  },
  examples: [[STORE, CART]],
  sql: (store: SQL, cartId: SQL) =>
    sql`select cl.id as line_id, cl.variant_id, cl.quantity, p.title as product_title, v.title as variant_title, v.sku, v.tax_class,
               v.preorder, v.price_minor::text as unit_price, p.status as product_status
        from cart_line cl
        join product_variant v on v.store_id = cl.store_id and v.id = cl.variant_id
        join product p on p.store_id = v.store_id and p.id = v.product_id
        where cl.store_id = ${store} and cl.cart_id = ${cartId}
        order by cl.created_at, cl.id`,
});

/** The stock of the cart's variants at the locations that sell online (locked in id order, with `lock`). */
export const checkoutStock = statement("orders.checkoutStock", {
  row: {
    id: inventoryLevel.id,
    variant_id: inventoryLevel.variantId,
    location_id: inventoryLevel.locationId,
    name: location.name,
    priority: location.priority,
    available: pg.int4(),
    state: location.state,
  },
  examples: [
    [STORE, CART, false],
    [STORE, CART, true],
  ],
  sql: (store: SQL, cartId: SQL, lock: boolean) =>
    sql`select il.id, il.variant_id, il.location_id, l.name, l.priority, greatest(il.on_hand - il.reserved, 0)::int as available, l.state
        from inventory_level il join location l on l.store_id = il.store_id and l.id = il.location_id
        where il.store_id = ${store} and l.sells_online
          and il.variant_id in (select variant_id from cart_line where store_id = ${store} and cart_id = ${cartId})
        order by il.id${lock ? sql` for update of il` : sql``}`,
});

/** The cart's discount and whether it is live now. */
export const checkoutDiscount = statement("orders.checkoutDiscount", {
  row: { id: discount.id, code: discount.code, kind: discount.kind, value: pg.text(), live: pg.bool() },
  examples: [[STORE, HASH]],
  sql: (store: SQL, tokenHash: string) =>
    sql`select d.id, d.code, d.kind, d.value::text, (d.status = 'active' and d.starts_at <= now() and (d.ends_at is null or d.ends_at > now())
               and (d.usage_limit is null or d.usage_count < d.usage_limit)) as live
        from discount d where d.store_id = ${store} and d.id = (select discount_id from cart where store_id = ${store} and token_hash = ${tokenHash})`,
});

/** The store's shipping, deposit and payment settings. */
export const checkoutSettings = statement("orders.checkoutSettings", {
  row: {
    fee: pg.text(),
    free_over: orNull(pg.text()),
    deposit_percent: storeTable.preorderDepositPercent,
    manual_transfer: storeTable.manualTransferEnabled,
    hold_hours: storeTable.transferHoldHours,
  },
  examples: [[STORE]],
  sql: (store: SQL) =>
    sql`select shipping_fee_minor::text as fee, free_shipping_over_minor::text as free_over, preorder_deposit_percent as deposit_percent,
               manual_transfer_enabled as manual_transfer, transfer_hold_hours as hold_hours
        from store where id = ${store}`,
});

/** A converted cart's order's newest attempt, and whether the order's access key hash is stored yet. */
export const replayAttempt = statement("orders.replayAttempt", {
  row: {
    id: paymentAttempt.id,
    attempt: paymentAttempt.attempt,
    idempotency_key: paymentAttempt.idempotencyKey,
    status: paymentAttempt.status,
    provider: paymentAttempt.provider,
    amount: pg.text(),
    keyed: orNull(pg.bool()),
  },
  examples: [[STORE, sql`(select converted_order_id from cart where store_id = ${STORE} and token_hash = ${HASH})`]],
  sql: (store: SQL, converted: SQL) =>
    sql`select a.id, a.attempt, a.idempotency_key, a.status, a.provider, a.amount::text,
               (select access_key_hash is not null from shop_order where store_id = a.store_id and id = a.order_id) as keyed
        from payment_attempt a where a.store_id = ${store} and a.order_id = ${converted} order by a.attempt desc limit 1`,
});
