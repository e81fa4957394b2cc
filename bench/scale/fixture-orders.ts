import { CITIES, PINS, SCALE, STATES, u, type Step } from "./fixture-catalog";

/**
 * The scale fixture, part 2: orders, their lines, parcels, shipments, payment attempts and refunds.
 *
 * Each order gets an outcome code from its age and a few dice, and the code fixes its statuses exactly as
 * shared/rules/status.ts would compute them from the rows written for it (attempt, refunds, parcels and
 * shipments): see OUTCOMES. Orders younger than their payment window may be unpaid; older unpaid ones are
 * expired or cancelled; paid ones move through shipping with age. Money follows docs/gst.md: prices include
 * GST, a store sells one tax class, the tax is extracted once per parcel (rounded half up) on its goods
 * after discount plus its shipping share, CGST = ceil(tax / 2) and SGST = floor(tax / 2) when the parcel
 * ships within the buyer's state, IGST otherwise; the rate is the class's on the order's day (gst_rate).
 */

/** code, status, payment_status, fulfillment_status, the attempt's status. */
const OUTCOMES = `(values
  ('u', 'open', 'unpaid', 'unfulfilled', 'created'),
  ('pe', 'open', 'pending', 'unfulfilled', 'pending'),
  ('au', 'open', 'authorized', 'unfulfilled', 'authorized'),
  ('pp', 'open', 'partially_paid', 'unfulfilled', 'captured'),
  ('x', 'expired', 'unpaid', 'unfulfilled', 'created'),
  ('cu', 'cancelled', 'unpaid', 'unfulfilled', 'created'),
  ('cr', 'cancelled', 'refunded', 'unfulfilled', 'refunded'),
  ('p0', 'open', 'paid', 'unfulfilled', 'captured'),
  ('pf', 'open', 'paid', 'partially_fulfilled', 'captured'),
  ('ft', 'open', 'paid', 'fulfilled', 'captured'),
  ('ri', 'open', 'paid', 'rto_initiated', 'captured'),
  ('d', 'completed', 'paid', 'delivered', 'captured'),
  ('dr', 'completed', 'partially_refunded', 'delivered', 'captured'),
  ('df', 'completed', 'refunded', 'delivered', 'refunded'),
  ('rd', 'completed', 'refunded', 'rto_delivered', 'refunded')) m(code, status, payment_status, fulfillment_status, attempt_status)`;

const g = "b.g";
const SCALE_PRE = SCALE.bigPreorderVariants;
const PAID_PATH = `case
  when age < interval '12 hours' then 'p0'
  when age < interval '3 days' then case when s < 0.3 then 'p0' when s < 0.5 and nparcels = 2 then 'pf' else 'ft' end
  when age < interval '10 days' and s < 0.05 then 'p0'
  when age < interval '10 days' and s < 0.25 then 'ft'
  when age < interval '10 days' and s < 0.28 then 'ri'
  when t < 0.03 then 'rd' when q < 0.03 then 'dr' when q < 0.05 then 'df' else 'd' end`;

export const ORDER_STAGING: Step[] = [
  {
    name: "orders (staging)",
    sql: `
-- GST rates by class with the instants (India's days) they apply between, from gst_rate.
create unlogged table scale_fixture.rates as
select tax_class, rate_bp, (effective_from::timestamp at time zone 'Asia/Kolkata') as from_at,
  coalesce(lead(effective_from) over (partition by tax_class order by effective_from)::timestamp at time zone 'Asia/Kolkata', 'infinity') as to_at
from gst_rate;
create unlogged table scale_fixture.o as
with b0 as (
  select s.n, s.id as store_id, k, s.n::bigint * 1000000 + k as g, s.opened_at, s.n_orders, s.n_buyers, s.n_variants, s.tax_class, s.shipping_fee, p.now_at
  from scale_fixture.st s cross join scale_fixture.params p cross join lateral generate_series(1, s.n_orders) k
), b as (
  select b0.*, opened_at + interval '1 day' + (now_at - interval '1 minute' - opened_at - interval '1 day') * power((k - 1 + ${u(g.replace("b.", "b0."), 20)}) / n_orders, 0.7) as placed_at
  from b0
), r as (
  select b.*, now_at - placed_at as age,
    case when ${u(g, 21)} < 0.12 then 'manual_transfer' else 'gateway' end as pm,
    ${u(g, 22)} as r, ${u(g, 23)} as s, ${u(g, 24)} as q, ${u(g, 25)} as t,
    case when ${u(g, 26)} < 0.35 then 1 when ${u(g, 26)} < 0.7 then 2 when ${u(g, 26)} < 0.9 then 3 else 4 end as nlines,
    ${u(g, 27)} as roll_parcels, ${u(g, 28)} as roll_preorder
  from b
), c as (
  select r.*, case when n = 1 and nlines >= 2 and roll_parcels < 0.12 then 2 else 1 end as nparcels from r
), d as (
  select c.*, case
    when pm = 'gateway' and age < interval '30 minutes' then case when r < 0.35 then 'u' when r < 0.5 then 'pe' when r < 0.6 then 'au' else 'p0' end
    when pm = 'manual_transfer' and age < interval '3 days' then case when r < 0.55 then 'u' when r < 0.6 then 'cu' else ${PAID_PATH} end
    when n = 1 and nparcels = 1 and age > interval '1 hour' and age < interval '7 days' and roll_preorder < 0.02 then 'pp'
    when r < 0.06 then 'x'
    when r < 0.09 then 'cu'
    when r < 0.10 and age > interval '1 day' then 'cr'
    else ${PAID_PATH} end as outcome
  from c
)
select gen_random_uuid() as id, gen_random_uuid() as attempt_id, d.n, d.store_id, d.k, 1000 + d.k as number, d.g, d.placed_at, d.age, d.now_at, d.pm,
  d.outcome, m.status, m.payment_status, m.fulfillment_status,
  case when d.outcome = 'x' and d.pm = 'gateway' and d.q < 0.5 then 'failed' else m.attempt_status end as attempt_status,
  d.nlines, d.nparcels, ${u(g.replace("b.", "d."), 29)} < 0.12 as has_discount,
  case when d.n = 1 then ${SCALE_PRE} else 0 end as pre,
  floor((d.n_variants - case when d.n = 1 then ${SCALE_PRE} else 0 end) * power(${u(g.replace("b.", "d."), 32)}, 1.8))::int as vbase, d.n_variants,
  c.email, c.phone, initcap(c.first_name) || ' ' || initcap(c.last_name) as buyer, c.ci,
  (${STATES})[c.ci] as ship_to_state,
  gr.rate_bp as rate, d.shipping_fee,
  1 + floor(d.n_buyers * power(${u(g.replace("b.", "d."), 33)}, 1.3))::int as cidx
from d join ${OUTCOMES} on m.code = d.outcome
join scale_fixture.rates gr on gr.tax_class = d.tax_class and d.placed_at >= gr.from_at and d.placed_at < gr.to_at
join scale_fixture.cust c on c.n = d.n and c.idx = 1 + floor(d.n_buyers * power(${u(g.replace("b.", "d."), 33)}, 1.3))::int;
create unique index on scale_fixture.o (id);`,
  },
  {
    name: "order lines and parcels (staging)",
    sql: `
create unlogged table scale_fixture.ol as
select gen_random_uuid() as id, o.id as order_id, o.n, o.store_id, o.placed_at, j - 1 as position,
  v.id as variant_id, v.product_title, v.title as variant_title, v.sku, v.tax_class, v.preorder,
  qn.qty, v.price as unit_price, v.price * qn.qty as line_total,
  case when o.has_discount then v.price * qn.qty / 10 else 0 end as discount,
  case when o.nparcels = 2 and j >= 2 then 1 else 0 end as parcel
from scale_fixture.o o
cross join lateral generate_series(1, o.nlines) j
cross join lateral (select 1 + (${u("o.g * 8 + j", 30)} < 0.25)::int + (${u("o.g * 8 + j", 31)} < 0.08)::int as qty) qn
join scale_fixture.var v on v.n = o.n
  and v.idx = case when o.outcome = 'pp' then j else o.pre + 1 + (o.vbase + j - 1) % (o.n_variants - o.pre) end;

create unlogged table scale_fixture.fo0 as
select order_id, parcel, sum(line_total)::bigint as subtotal, sum(discount)::bigint as discount
from scale_fixture.ol group by order_id, parcel;

create unlogged table scale_fixture.om as
select f.order_id, f.subtotal, f.discount, f.sub1, case when o.shipping_fee > 0 and f.subtotal - f.discount < 99900 then o.shipping_fee else 0 end as shipping
from (select order_id, sum(subtotal)::bigint as subtotal, sum(discount)::bigint as discount,
        coalesce(sum(subtotal) filter (where parcel = 1), 0)::bigint as sub1
      from scale_fixture.fo0 group by order_id) f
join scale_fixture.o o on o.id = f.order_id;
create unique index on scale_fixture.om (order_id);

create unlogged table scale_fixture.fo as
select gen_random_uuid() as id, f.order_id, o.n, o.store_id, f.parcel as position, l.id as location_id, l.state as origin_state,
  f.subtotal, f.discount, x.ship as shipping, t.tax,
  case when l.state = o.ship_to_state then (t.tax + 1) / 2 else 0 end as cgst,
  case when l.state = o.ship_to_state then t.tax / 2 else 0 end as sgst,
  case when l.state = o.ship_to_state then 0 else t.tax end as igst,
  o.placed_at
from scale_fixture.fo0 f
join scale_fixture.o o on o.id = f.order_id
join scale_fixture.om m on m.order_id = f.order_id
join scale_fixture.loc l on l.n = o.n and l.idx = 1 + f.parcel
cross join lateral (select case when f.parcel = 1 then m.shipping * f.subtotal / m.subtotal else m.shipping - m.shipping * m.sub1 / m.subtotal end as ship) x
cross join lateral (select (2 * (f.subtotal - f.discount + x.ship) * o.rate + 10000 + o.rate) / (2 * (10000 + o.rate)) as tax) t;
create unique index on scale_fixture.fo (order_id, position);

create unlogged table scale_fixture.ot as
select m.order_id, m.subtotal, m.discount, m.shipping, sum(f.tax)::bigint as tax, m.subtotal - m.discount + m.shipping as total
from scale_fixture.om m join scale_fixture.fo f on f.order_id = m.order_id
group by m.order_id, m.subtotal, m.discount, m.shipping;
create unique index on scale_fixture.ot (order_id);`,
  },
  {
    name: "shipments (staging)",
    sql: `
create unlogged table scale_fixture.sh as
select gen_random_uuid() as id, f.id as fo_id, f.order_id, f.n, f.store_id, f.position, o.number, o.outcome, st.status,
  ship.at as created_at,
  case when st.status in ('pending', 'in_transit') then ship.at + (o.now_at - ship.at) / 2
       else least(ship.at + interval '1 day' * (2 + 3 * ${u("o.g * 4 + f.position", 41)}), o.now_at) end as status_at,
  case when ${u("o.g * 4 + f.position", 42)} < 0.85 then 'shiprocket' else 'manual' end as provider,
  o.now_at
from scale_fixture.fo f join scale_fixture.o o on o.id = f.order_id
cross join lateral (select case
    when o.outcome = 'ft' then case when o.age < interval '1 day' then 'pending' else 'in_transit' end
    when o.outcome = 'pf' and f.position = 0 then 'in_transit'
    when o.outcome in ('d', 'dr', 'df') then 'delivered'
    when o.outcome = 'ri' then case when f.position = 0 then 'rto_initiated' else 'delivered' end
    when o.outcome = 'rd' then case when f.position = 0 then 'rto_delivered' else 'delivered' end
  end as status) st
cross join lateral (select o.placed_at + least(o.age * 0.4, interval '1 day' * (0.3 + 0.7 * ${u("o.g * 4 + f.position", 40)})) as at) ship
where st.status is not null;
create unique index on scale_fixture.sh (fo_id);`,
  },
];


/**
 * The orders go in from both lanes at once, each store by store, half of them each (a store's orders in
 * one lane: the triggers' rollup rows are per store and day, so the lanes never wait on each other). Lane
 * a takes the big store (store 1, 200,000 orders) and 3/8 of the others, lane b the rest: the build's
 * longest step (the orders, with their search tokens, rollups and lower-cased emails written by the
 * triggers, ~400 s in one lane) takes about half as long.
 */
const LANE_A_STORES = "(o.n = 1 or o.n % 8 < 3)";
const SHOP_ORDER_INSERT = `
insert into shop_order (id, store_id, number, email, phone, shipping_address, ship_to_state, payment_method, currency,
  subtotal, discount, shipping, tax, total, discount_code, status, payment_status, fulfillment_status, expires_at, placed_at,
  created_at, updated_at, access_key_hash, balance_amount, payment_reminded_at)
select o.id, o.store_id, o.number, o.email, o.phone,
  jsonb_build_object('name', o.buyer, 'line1', (1 + o.g % 400) || ', ' || (array['MG Road','Station Road','Park Street','Main Bazaar','Lake View','Temple Street','Ring Road','Nehru Nagar'])[1 + o.g % 8],
    'city', (${CITIES})[o.ci], 'state', o.ship_to_state, 'postalCode', (${PINS})[o.ci] || lpad((o.g % 1000)::text, 3, '0'), 'country', 'IN'),
  o.ship_to_state, o.pm, 'INR', t.subtotal, t.discount, t.shipping, t.tax, t.total,
  case when o.has_discount then 'WELCOME10' end, o.status, o.payment_status, o.fulfillment_status,
  o.placed_at + case when o.pm = 'gateway' then interval '30 minutes' else interval '3 days' end, o.placed_at,
  o.placed_at, o.placed_at + least(o.age, interval '5 days') * ${u("o.g", 34)}, encode(sha256(convert_to(o.id::text, 'UTF8')), 'hex'),
  case when o.outcome = 'pp' then t.total / 2 else 0 end,
  case when o.pm = 'manual_transfer' and o.payment_status = 'unpaid' and o.placed_at + interval '2 days' <= o.now_at then o.placed_at + interval '2 days' end
from scale_fixture.o o join scale_fixture.ot t on t.order_id = o.id
order by o.n, o.k`;

/** The order rows themselves, in dependency order (shop_order in two halves, one per lane). */
export const ORDER_INSERTS: Step[] = [
  ...(["a", "b"] as const).map((lane) => ({
    name: `shop_order (lane ${lane})`,
    sql: SHOP_ORDER_INSERT.replace("order by o.n, o.k", `where ${lane === "a" ? "" : "not "}${LANE_A_STORES}\norder by o.n, o.k`),
  })),
  {
    name: "order_line",
    sql: `
insert into order_line (id, store_id, order_id, variant_id, product_title, variant_title, sku, tax_class, preorder, quantity, unit_price, line_total, discount, position)
select id, store_id, order_id, variant_id, product_title, variant_title, sku, tax_class, preorder, qty, unit_price, line_total, discount, position
from scale_fixture.ol order by n, placed_at, order_id, position`,
  },
  {
    name: "fulfillment_order",
    sql: `
insert into fulfillment_order (id, store_id, order_id, location_id, origin_state, subtotal, discount, shipping, tax, cgst, sgst, igst, position, created_at)
select id, store_id, order_id, location_id, origin_state, subtotal, discount, shipping, tax, cgst, sgst, igst, position, placed_at
from scale_fixture.fo order by n, placed_at, order_id, position`,
  },
  {
    name: "fulfillment_order_line",
    sql: `
insert into fulfillment_order_line (store_id, fulfillment_order_id, order_line_id, quantity, reserved, backordered)
select l.store_id, f.id, l.id, l.qty,
  case when o.status = 'open' and o.outcome <> 'pp' and sh.id is null then l.qty else 0 end,
  case when o.outcome = 'pp' then l.qty else 0 end
from scale_fixture.ol l
join scale_fixture.fo f on f.order_id = l.order_id and f.position = l.parcel
join scale_fixture.o o on o.id = l.order_id
left join scale_fixture.sh sh on sh.fo_id = f.id
order by l.n, l.placed_at, l.order_id, l.position`,
  },
  {
    name: "shipment",
    sql: `
insert into shipment (id, store_id, order_id, fulfillment_order_id, provider, awb, provider_ref, courier_name, tracking_url, status,
  provider_status, status_at, created_at, updated_at, tracked_at)
select id, store_id, order_id, fo_id, provider,
  case when provider = 'shiprocket' then 'SR' else 'M' end || number || '-' || position,
  case when provider = 'shiprocket' then 'sr_' || number || '_' || position end,
  case when provider = 'shiprocket' then (array['Delhivery','Blue Dart','Ecom Express','Xpressbees'])[1 + number % 4] end,
  case when provider = 'shiprocket' then 'https://shiprocket.co/tracking/SR' || number || '-' || position end,
  status, upper(replace(status, '_', ' ')), status_at, created_at, status_at,
  case when provider = 'shiprocket' then least(status_at, now_at - interval '20 minutes') end
from scale_fixture.sh order by n, created_at`,
  },
  {
    name: "merchant_task",
    sql: `
insert into merchant_task (store_id, kind, order_id, subject_id, title, status, created_at, done_at)
select store_id, 'rto', order_id, id, 'Order #' || number || ': parcel coming back to origin (RTO)',
  case when status = 'rto_initiated' then 'open' else 'done' end, status_at,
  case when status = 'rto_delivered' then status_at end
from scale_fixture.sh where status in ('rto_initiated', 'rto_delivered') order by n, status_at`,
  },
];

/** Lane B, once shop_order is in: one payment attempt per order, and the refunds. */
export const PAYMENT_INSERTS: Step[] = [
  {
    name: "payment_attempt",
    sql: `
insert into payment_attempt (id, store_id, order_id, attempt, idempotency_key, provider, provider_ref, provider_payment_id, status, amount, created_at, updated_at)
select o.attempt_id, o.store_id, o.id, 1, o.id::text || ':1', case when o.pm = 'gateway' then 'razorpay' else 'manual_transfer' end,
  case when o.pm = 'gateway' then 'order_' || substr(md5(o.id::text), 1, 14) end,
  case when o.pm = 'gateway' and o.attempt_status in ('authorized', 'captured', 'refunded') then 'pay_' || substr(md5(o.attempt_id::text), 1, 14) end,
  o.attempt_status, t.total - case when o.outcome = 'pp' then t.total / 2 else 0 end, o.placed_at,
  o.placed_at + case when o.attempt_status = 'created' then interval '0' else interval '2 minutes' end
from scale_fixture.o o join scale_fixture.ot t on t.order_id = o.id order by o.n, o.k`,
  },
  {
    name: "refund",
    sql: `
insert into refund (store_id, order_id, payment_attempt_id, amount, reason, status, provider_refund_id, created_at, updated_at)
select o.store_id, o.id, o.attempt_id, case when o.outcome = 'dr' then greatest(1, t.total * 3 / 10) else t.total end,
  case o.outcome when 'cr' then 'Cancelled by the buyer' when 'rd' then 'Parcel returned to origin' else 'Returned goods' end, 'processed',
  case when o.pm = 'gateway' then 'rfnd_' || substr(md5(o.id::text || 'r'), 1, 14) end,
  o.placed_at + least(o.age * 0.9, interval '15 days'), o.placed_at + least(o.age * 0.9, interval '15 days')
from scale_fixture.o o join scale_fixture.ot t on t.order_id = o.id
where o.outcome in ('cr', 'dr', 'df', 'rd') order by o.n, 8`,
  },
];
