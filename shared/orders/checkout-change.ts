import type { SQL } from "drizzle-orm";
import { emitStep, ensureChanged, markEmits, unchanged } from "../db/changes";
import { AppError } from "../core/errors";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";
import { CONSENT_REQUEST_EVERY_HOURS } from "../marketing/consent";
import type { CheckoutInput, Placed } from "./checkout-input";
import { cartState } from "./checkout-reading";
import type { IndianStateCode, OrderMoney } from "../rules/gst";
import { holdLimitSteps } from "./holds";
import { orderViewStatement } from "./order-view";

/**
 * The order placed from a decided checkout (./checkout.ts), as one unit of guarded statements. Its first
 * statements lock the cart, the stock rows it reserves (in id order) and the discount, and stop the unit
 * as a lost race (CR409) when any is no longer as the reading saw it; then everything is written in the
 * order a reader of the order expects: the order, its lines, its parcels and their lines with the
 * reservation, the first payment attempt, the cart converted with the buyer recorded, the events.
 */
export interface Placement {
  orderId: string;
  accessKey: string;
  accessKeyHash: string;
  cart: { id: string; currency: string; state: unknown };
  input: CheckoutInput;
  destination: IndianStateCode;
  money: OrderMoney;
  taken: { amount: number; code: string | null };
  discount: { id: string; kind: string; value: number } | null;
  balance: number;
  firstAmount: number;
  expiresAt: Date;
  now: Date;
  orderLines: { id: string; variant_id: string; product_title: string; variant_title: string; sku: string | null; tax_class: string; preorder: boolean; quantity: number; unit_price: number; discount: number; position: number }[];
  parcels: { id: string; location_id: string; origin_state: string | null; subtotal: number; discount: number; shipping: number; tax: number; cgst: number; sgst: number; igst: number; position: number }[];
  parcelLines: { fulfillment_order_id: string; order_line_id: string; quantity: number; reserved: number; variant_id: string; location_id: string; stock_id: string | null }[];
  attemptId: string;
  provider: string;
  /** The store, and the buyer's network as the per-network hold limit counts it (./holds.ts; null: no address). */
  storeId: string;
  networkHash: string | null;
}

export const discountUnavailable = () =>
  new AppError("CONFLICT", "The discount code on your cart can no longer be used: remove it or try another.", {
    reason: "discount_unavailable",
    issues: [{ path: "discount", message: "no longer available" }],
  });

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

export function checkoutChange(q: Q, store: SQL, p: Placement): Plan<Placed> {
  const { orderId, input, money } = p;
  const reserved = p.parcelLines.filter((l) => l.reserved > 0);
  const wanted = reserved.map((l) => ({ id: l.stock_id, n: l.reserved }));
  const [first, ...rest] = input.shippingAddress.name.split(/\s+/);
  const consent = input.acceptsMarketing === true;
  return plan(
    [
      // The cart as read: not converted by a racing submit, nor changed in another tab.
      unchanged(q, sql`(${cartState(store, sql`${p.cart.id}::uuid`, true)}) = ${json(p.cart.state)}`),
      // The stock rows it reserves, locked in id order, still holding what it takes at a location that sells online.
      raw(q, sql`select il.id from inventory_level il where il.store_id = ${store} and il.id = any(${sql.param(wanted.map((w) => w.id))}::uuid[]) order by il.id for update`),
      unchanged(
        q,
        sql`(select count(*) from jsonb_to_recordset(${json(wanted)}) as x(id uuid, n int)
             join inventory_level il on il.store_id = ${store} and il.id = x.id
             join location l on l.store_id = il.store_id and l.id = il.location_id and l.sells_online
             where greatest(il.on_hand - il.reserved, 0) >= x.n) = ${wanted.length}`,
      ),
      ...(p.discount
        ? [
            unchanged(q, sql`exists (select 1 from discount where store_id = ${store} and id = ${p.discount.id} and kind = ${p.discount.kind} and value = ${p.discount.value} for update)`),
            // Its use counted while it is still live (a code used up by a racing checkout is refused).
            ensureChanged(
              q,
              sql`update discount set usage_count = usage_count + 1, updated_at = now()
                  where store_id = ${store} and id = ${p.discount.id} and status = 'active' and starts_at <= now() and (ends_at is null or ends_at > now())
                    and (usage_limit is null or usage_count < usage_limit) returning 1`,
              discountUnavailable(),
            ),
          ]
        : []),
      // At most 3 open unpaid orders per email and per network hold this store's stock (./holds.ts).
      ...holdLimitSteps(q, store, { storeId: p.storeId, email: input.email, networkHash: p.networkHash, now: p.now }),
      raw(
        q,
        sql`with counter as (insert into order_counter as c (store_id, next_number) values (${store}, 1002)
                               on conflict (store_id) do update set next_number = c.next_number + 1 returning next_number - 1 as number)
            insert into shop_order (id, store_id, number, cart_id, email, phone, shipping_address, ship_to_state, payment_method, currency,
              subtotal, discount, shipping, tax, total, discount_code, expires_at, placed_at, access_key_hash, balance_amount, discount_id, buyer_network_hash)
            select ${orderId}, ${store}, counter.number, ${p.cart.id}, ${input.email.toLowerCase()}, ${input.phone ?? null}, ${json(input.shippingAddress)},
              ${p.destination}, ${input.paymentMethod}, ${p.cart.currency}, ${money.subtotal}, ${money.discount}, ${money.shipping}, ${money.tax}, ${money.total},
              ${p.taken.code}, ${p.expiresAt}, ${p.now}, ${p.accessKeyHash}, ${p.balance}, ${p.discount?.id ?? null}::uuid, ${p.networkHash}
            from counter`,
      ),
      raw(
        q,
        sql`insert into order_line (id, store_id, order_id, variant_id, product_title, variant_title, sku, tax_class, preorder, quantity, unit_price, line_total, discount, position)
            select x.id, ${store}, ${orderId}, x.variant_id, x.product_title, x.variant_title, x.sku, x.tax_class, x.preorder, x.quantity, x.unit_price, x.unit_price * x.quantity, x.discount, x.position
            from jsonb_to_recordset(${json(p.orderLines)}) as x(id uuid, variant_id uuid, product_title text, variant_title text, sku text, tax_class text, preorder boolean,
              quantity int, unit_price bigint, discount bigint, position int)`,
      ),
      raw(
        q,
        sql`insert into fulfillment_order (id, store_id, order_id, location_id, origin_state, subtotal, discount, shipping, tax, cgst, sgst, igst, position)
            select x.id, ${store}, ${orderId}, x.location_id, x.origin_state, x.subtotal, x.discount, x.shipping, x.tax, x.cgst, x.sgst, x.igst, x.position
            from jsonb_to_recordset(${json(p.parcels)}) as x(id uuid, location_id uuid, origin_state text, subtotal bigint, discount bigint, shipping bigint,
              tax bigint, cgst bigint, sgst bigint, igst bigint, position int)`,
      ),
      raw(
        q,
        sql`with x as (select * from jsonb_to_recordset(${json(p.parcelLines)}) as x(fulfillment_order_id uuid, order_line_id uuid, quantity int, reserved int, variant_id uuid, location_id uuid)),
             lines as (insert into fulfillment_order_line (store_id, fulfillment_order_id, order_line_id, quantity, reserved, backordered)
                       select ${store}, fulfillment_order_id, order_line_id, quantity, reserved, quantity - reserved from x)
            update inventory_level il set reserved = il.reserved + x.reserved, updated_at = now()
            from x where il.store_id = ${store} and il.variant_id = x.variant_id and il.location_id = x.location_id and x.reserved > 0`,
      ),
      raw(
        q,
        sql`insert into payment_attempt (id, store_id, order_id, attempt, idempotency_key, provider, amount)
            values (${p.attemptId}, ${store}, ${orderId}, 1, ${`${orderId}:1`}, ${p.provider}, ${p.firstAmount})`,
      ),
      // Every order's buyer is one of the store's customers, found by email (case ignored), in one statement
      // with the cart's conversion (docs/marketing.md): a new buyer is added with the checkout's name, phone
      // and city; a known one keeps everything the merchant has on file. Ticking "Email me news and offers"
      // only asks (double opt-in, decision 0021): it opens a consent request that the confirmation email's
      // link confirms, for a customer who never gave consent, or whose request went unanswered for a day
      // (so a loop of checkouts mails one address at most once a day). A confirmed consent stays as it is;
      // a withdrawn one stays withdrawn. Not ticking never withdraws anything. Events only for real changes.
      markEmits(
        raw(
          q,
          sql`with converted as (update cart set converted_order_id = ${orderId}, updated_at = now() where store_id = ${store} and id = ${p.cart.id}),
               buyer as (
                 insert into customer (store_id, email, first_name, last_name, phone, city, marketing_consent_requested_at, marketing_consent_updated_at, marketing_consent_source)
                 values (${store}, ${input.email.toLowerCase()}, ${first?.slice(0, 120) || null}, ${rest.join(" ").slice(0, 120) || null}, ${input.phone ?? null},
                   ${input.shippingAddress.city.slice(0, 120)}, case when ${consent}::boolean then now() end, case when ${consent}::boolean then now() end,
                   case when ${consent}::boolean then 'checkout' end)
                 on conflict (store_id, lower(email)) where email is not null do update set
                   marketing_consent_requested_at = now(), marketing_consent_updated_at = now(), marketing_consent_source = 'checkout', updated_at = now()
                   where ${consent}::boolean and (customer.marketing_consent = 'none'
                     or (customer.marketing_consent = 'pending' and customer.marketing_consent_requested_at <= now() - make_interval(hours => ${CONSENT_REQUEST_EVERY_HOURS})))
                 returning id, (xmax = 0) as created, marketing_consent_requested_at as requested_at)
              insert into outbox_event (store_id, kind, payload)
              select ${store}, case when created then 'customer.created' else 'customer.updated' end,
                case when created then jsonb_build_object('customerId', id, 'source', 'checkout')
                     else jsonb_build_object('customerId', id, 'fields', jsonb_build_array('marketingConsent'), 'source', 'checkout') end
              from buyer
              union all
              select ${store}, 'customer.consent_requested', jsonb_build_object('customerId', id, 'requestedAt', requested_at) from buyer where requested_at is not null`,
        ),
      ),
      emitStep(
        q,
        "order.placed",
        sql`(select jsonb_build_object('orderId', id, 'number', number, 'total', total, 'paymentMethod', payment_method)
               || ${json(p.balance > 0 ? { deposit: p.firstAmount, balance: p.balance } : {})}
             from shop_order where store_id = ${store} and id = ${orderId})`,
      ),
      emitStep(q, "inventory.reserved", { orderId, items: reserved.map((l) => ({ variantId: l.variant_id, locationId: l.location_id, quantity: l.reserved })) }),
      orderViewStatement(q, store, orderId),
    ],
    (results) => {
      const [view] = results.at(-1) as { order: Placed["order"] }[];
      return {
        order: view!.order,
        attempt: { id: p.attemptId, attempt: 1, idempotencyKey: `${orderId}:1`, status: "created", provider: p.provider, amount: p.firstAmount },
        replayed: false,
        accessKey: p.accessKey,
      };
    },
  );
}
