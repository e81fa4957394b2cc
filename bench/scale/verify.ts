import type pg from "pg";

/**
 * Invariants the fixture must keep beyond the schema's own checks, each a count of rows that break it
 * (all must be 0). The order statuses are recomputed from the rows exactly as shared/rules/status.ts
 * recomputeOrder does (payment from attempts and processed refunds, fulfilment from parcels and their
 * shipments), so the fixture holds no order that the recompute routine would change.
 */
const CHECKS: Record<string, string> = {
  "order statuses = recompute(attempts, refunds, parcels, shipments)": `
with pay as (
  select a.order_id, sum(a.amount) filter (where a.status in ('captured', 'refunded')) as c,
    bool_or(a.status = 'authorized') as authorized, bool_or(a.status = 'pending') as pending
  from payment_attempt a group by a.order_id
), ref as (select order_id, sum(amount) as r from refund where status = 'processed' group by order_id),
parcel as (
  select f.order_id, case
      when bool_or(s.status = 'delivered') then 'delivered'
      when bool_or(s.status in ('pending', 'in_transit')) then 'shipped'
      when bool_or(s.status = 'rto_initiated') then 'rto_initiated'
      when bool_or(s.status = 'rto_delivered') then 'rto_delivered'
      else 'unshipped' end as state
  from fulfillment_order f left join shipment s on s.store_id = f.store_id and s.fulfillment_order_id = f.id and s.status <> 'cancelled'
  group by f.id, f.order_id
), ful as (
  select order_id, case
      when bool_or(state = 'unshipped') then case when bool_and(state = 'unshipped') then 'unfulfilled' else 'partially_fulfilled' end
      when bool_or(state = 'rto_initiated') then 'rto_initiated'
      when bool_or(state = 'shipped') then 'fulfilled'
      when bool_or(state = 'rto_delivered') then 'rto_delivered'
      else 'delivered' end as fs
  from parcel group by order_id
), want as (
  select o.id, o.status, o.payment_status, o.fulfillment_status, x.ps, ful.fs
  from shop_order o left join pay on pay.order_id = o.id left join ref on ref.order_id = o.id left join ful on ful.order_id = o.id
  cross join lateral (select coalesce(pay.c, 0) as c, coalesce(ref.r, 0) as r) m
  cross join lateral (select case
      when m.c > 0 and m.r = m.c then 'refunded'
      when m.c >= o.total and m.c - m.r >= o.total then 'paid'
      when m.c >= o.total then 'partially_refunded'
      when m.c > 0 then 'partially_paid'
      when pay.authorized then 'authorized'
      when pay.pending then 'pending'
      else 'unpaid' end as ps) x
)
select count(*) from want where ps <> payment_status or fs is distinct from fulfillment_status
  or status <> case when status in ('cancelled', 'expired') then status
                    when ps in ('paid', 'partially_refunded', 'refunded') and fs in ('delivered', 'rto_delivered') then 'completed' else 'open' end`,
  "order money = its lines and parcels (subtotal, discount, shipping, tax)": `
select count(*) from shop_order o
join (select order_id, sum(line_total) as sub, sum(discount) as disc from order_line group by order_id) l on l.order_id = o.id
join (select order_id, sum(subtotal) as sub, sum(discount) as disc, sum(shipping) as ship, sum(tax) as tax from fulfillment_order group by order_id) f on f.order_id = o.id
where o.subtotal <> l.sub or o.discount <> l.disc or o.subtotal <> f.sub or o.discount <> f.disc or o.shipping <> f.ship or o.tax <> f.tax`,
  "parcel GST split: CGST+SGST inside the state, IGST across": `
select count(*) from fulfillment_order f join shop_order o on o.store_id = f.store_id and o.id = f.order_id
where (f.origin_state = o.ship_to_state and (f.igst <> 0 or f.cgst <> (f.tax + 1) / 2)) or (f.origin_state <> o.ship_to_state and f.igst <> f.tax)`,
  "one payment attempt per order, of the order's first amount": `
select count(*) from shop_order o left join payment_attempt a on a.store_id = o.store_id and a.order_id = o.id
where a.id is null or a.amount <> o.total - o.balance_amount`,
  "order numbers 1001.. without gaps, counter next": `
select count(*) from (select store_id, max(number) as mx, min(number) as mn, count(*) as n from shop_order group by store_id) o
join order_counter c on c.store_id = o.store_id where o.mn <> 1001 or o.mx <> 1000 + o.n or c.next_number <> o.mx + 1`,
  "every buyer is a customer (by email, case ignored)": `
select count(*) from (select distinct store_id, lower(email) as email from shop_order) o
where not exists (select 1 from customer c where c.store_id = o.store_id and lower(c.email) = o.email)`,
  "stock: on_hand = the last on_hand_after; history never below zero": `
select count(*) from inventory_level l
join lateral (select on_hand_after from inventory_adjustment a where a.store_id = l.store_id and a.variant_id = l.variant_id
              and a.location_id = l.location_id order by a.created_at desc limit 1) last on true
where last.on_hand_after <> l.on_hand`,
  "stock: reserved = what open, unshipped parcels hold": `
select count(*) from inventory_level l left join (
  select fl.store_id, ol.variant_id, f.location_id, sum(fl.reserved) as held
  from fulfillment_order_line fl join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
  join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id group by 1, 2, 3) h
  on h.store_id = l.store_id and h.variant_id = l.variant_id and h.location_id = l.location_id
where l.reserved <> coalesce(h.held, 0)`,
  "parcel lines reserve only on open, unshipped parcels": `
select count(*) from fulfillment_order_line fl join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
join shop_order o on o.store_id = f.store_id and o.id = f.order_id
left join (select distinct store_id, fulfillment_order_id from shipment where status <> 'cancelled') s
  on s.store_id = f.store_id and s.fulfillment_order_id = f.id
where fl.reserved > 0 and (o.status <> 'open' or s.fulfillment_order_id is not null)`,
  "outbox rows name an order of their store": `
select count(*) from outbox_event e where e.payload ? 'orderId'
  and not exists (select 1 from shop_order o where o.store_id = e.store_id and o.id::text = e.payload->>'orderId')`,
  "outbox rows' order_id = payload.orderId (migration 0026's trigger)": `
select count(*) from outbox_event where order_id is distinct from case when payload ? 'orderId' then (payload->>'orderId')::uuid end`,
  "stored lower-cased columns = lower() of theirs": `
select (select count(*) from shop_order where email_lower is distinct from lower(email))
     + (select count(*) from customer where email_lower is distinct from lower(email)
          or name_lower is distinct from lower(concat_ws(' ', first_name, last_name))) as count`,
  "analytics rollups = counting the rows (migration 0027's triggers)": `
with o as (
  select store_id, (placed_at at time zone 'UTC')::date as day, count(*) as placed, count(*) filter (where status in ('cancelled', 'expired')) as cancelled,
    coalesce(sum(total) filter (where status not in ('cancelled', 'expired')), 0) as sales_minor,
    coalesce(sum(total) filter (where status not in ('cancelled', 'expired') and payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0) as paid_minor
  from shop_order group by 1, 2),
c as (select store_id, (created_at at time zone 'UTC')::date as day, count(*) as created from customer group by 1, 2),
t as (select store_id, count(*) as customers, count(*) filter (where accepts_marketing) as accepting from customer group by 1),
a as (select store_id, (created_at at time zone 'UTC')::date as day, count(*) as adjustments, coalesce(sum(delta) filter (where delta > 0), 0) as units_received
  from inventory_adjustment group by 1, 2)
select (select count(*) from o full join analytics_order_day r using (store_id, day)
         where (coalesce(o.placed, 0), coalesce(o.cancelled, 0), coalesce(o.sales_minor, 0), coalesce(o.paid_minor, 0))
           is distinct from (coalesce(r.placed, 0), coalesce(r.cancelled, 0), coalesce(r.sales_minor, 0), coalesce(r.paid_minor, 0)))
     + (select count(*) from c full join analytics_customer_day r using (store_id, day) where coalesce(c.created, 0) <> coalesce(r.created, 0))
     + (select count(*) from t full join analytics_customer_total r using (store_id)
         where (coalesce(t.customers, 0), coalesce(t.accepting, 0)) is distinct from (coalesce(r.customers, 0), coalesce(r.accepting, 0)))
     + (select count(*) from a full join analytics_stock_day r using (store_id, day)
         where (coalesce(a.adjustments, 0), coalesce(a.units_received, 0)) is distinct from (coalesce(r.adjustments, 0), coalesce(r.units_received, 0))) as count`,
  "store tallies = counting the rows, nothing left unfolded (migration 0031's triggers)": `
with o as (
  select store_id, count(*) filter (where payment_status = 'unpaid') as unpaid, count(*) filter (where payment_status = 'pending') as pending,
    count(*) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled') as to_ship,
    count(*) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled') as partly
  from shop_order where status = 'open' group by 1),
l as (
  select l.store_id, sum(l.on_hand) as on_hand, sum(l.on_hand - l.reserved) as available, sum(l.on_hand::numeric * v.price_minor) as value
  from inventory_level l join product_variant v on v.store_id = l.store_id and v.id = l.variant_id group by 1)
select (select count(*) from store s
          left join store_tally t on t.store_id = s.id left join o on o.store_id = s.id left join l on l.store_id = s.id
         where t.store_id is null
            or (t.open_unpaid, t.open_payment_pending, t.open_to_ship, t.open_partly_shipped, t.units_on_hand, t.units_available, t.stock_value_minor)
               is distinct from (coalesce(o.unpaid, 0), coalesce(o.pending, 0), coalesce(o.to_ship, 0), coalesce(o.partly, 0),
                                 coalesce(l.on_hand, 0), coalesce(l.available, 0), coalesce(l.value, 0)))
     + (select count(*) from store_tally_delta) as count`,
};

export async function verifyFixture(c: pg.Client, log: (m: string) => void): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const [name, sql] of Object.entries(CHECKS)) {
    const t0 = Date.now();
    const { rows } = await c.query<{ count: string }>(sql);
    found[name] = Number(rows[0]?.count ?? -1);
    log(`verify: ${name}: ${found[name] === 0 ? "ok" : `${found[name]} row(s) break it`} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  return found;
}
