import { CITIES, u, type Step } from "./fixture-catalog";

/**
 * The scale fixture, part 3: customers (every buyer is a customer from their first order on, as checkout
 * records them), stock with its history, the outbox, API grants and activity, and a few rows for the jobs'
 * work lists (pending domains, campaigns). Stock history is consistent: each variant and location opens
 * with a `received` row large enough that the running sum (`on_hand_after`) never goes below zero, and
 * inventory_level ends at that sum, its `reserved` being exactly what open, unshipped parcels hold.
 * Shipments leave a `shipped` row since migration 0014 was deployed (taken as four months ago).
 */

/** Lane B, runs beside the order inserts. */
export const SIDE_INSERTS: Step[] = [
  {
    name: "customer",
    sql: `
insert into customer (id, store_id, email, first_name, last_name, phone, city, accepts_marketing, created_at, updated_at,
  marketing_consent_updated_at, marketing_consent_source)
select c.id, c.store_id, c.email, initcap(c.first_name), initcap(c.last_name), c.phone, (${CITIES})[c.ci], c.accepts_marketing, x.at, x.at,
  case when c.accepts_marketing then x.at end, case when c.accepts_marketing then case when f.first_at is null then 'staff' else 'checkout' end end
from scale_fixture.cust c join scale_fixture.st s on s.n = c.n cross join scale_fixture.params p
left join (select n, cidx, min(placed_at) as first_at from scale_fixture.o group by n, cidx) f on f.n = c.n and f.cidx = c.idx
cross join lateral (select coalesce(f.first_at, s.opened_at + (p.now_at - s.opened_at) * ${u("c.n::bigint * 100000 + c.idx", 19)}) as at) x
order by c.n, x.at`,
  },
  {
    name: "stock history (staging)",
    sql: `
create unlogged table scale_fixture.adj as
select f.store_id, l.variant_id, f.location_id, -l.qty as delta, 'shipped' as reason, 'Order #' || sh.number as note, s.member_id,
  sh.created_at, 2 as ord
from scale_fixture.sh sh join scale_fixture.fo f on f.id = sh.fo_id
join scale_fixture.ol l on l.order_id = f.order_id and l.parcel = f.position
join scale_fixture.st s on s.n = f.n
where sh.created_at >= sh.now_at - interval '4 months'
union all
select v.store_id, v.id, lo.id, d.delta, d.reason, d.note, case when d.x < 0.9 then s.member_id end,
  v.created_at + interval '1 hour' + (p.now_at - v.created_at - interval '1 hour') * ${u("k.ek", 54)}, 2
from scale_fixture.var v join scale_fixture.loc lo on lo.n = v.n join scale_fixture.st s on s.n = v.n cross join scale_fixture.params p
cross join lateral (select ((v.n::bigint * 10000 + v.idx) * 4 + lo.idx) as lk) lv
cross join lateral generate_series(1, floor(${u("lv.lk", 50)} * 5.5)::int) i
cross join lateral (select lv.lk * 8 + i as ek) k
cross join lateral (select ${u("k.ek", 51)} as x, 1 + floor(${u("k.ek", 52)} * 4)::int as m, case when ${u("k.ek", 53)} < 0.5 then -1 else 1 end as sign) r
cross join lateral (select r.x, case
    when r.x < 0.35 then 'received' when r.x < 0.45 then 'returned' when r.x < 0.6 then 'damaged'
    when r.x < 0.8 then 'correction' when r.x < 0.95 then 'recount' else 'other' end as reason,
  case when r.x < 0.35 then 10 * r.m + 10 when r.x < 0.45 then r.m when r.x < 0.6 then -r.m else r.sign * r.m end as delta,
  case when r.x < 0.35 then 'PO-' || (k.ek % 100000) when r.x >= 0.45 and r.x < 0.6 then 'Found damaged at the shelf' end as note) d;

create unlogged table scale_fixture.lvl as
select v.n, v.store_id, v.id as variant_id, lo.id as location_id, v.created_at, s.member_id,
  coalesce(a.neg, 0) as neg, coalesce(a.net, 0) as net, coalesce(r.reserved, 0) as reserved,
  5 + floor(${u("(v.n::bigint * 10000 + v.idx) * 4 + lo.idx", 55)} * 55)::int as buffer
from scale_fixture.var v join scale_fixture.loc lo on lo.n = v.n join scale_fixture.st s on s.n = v.n
left join (select variant_id, location_id, -sum(delta) filter (where delta < 0) as neg, sum(delta) as net
           from scale_fixture.adj group by variant_id, location_id) a on a.variant_id = v.id and a.location_id = lo.id
left join (select l.variant_id, f.location_id, sum(l.qty) as reserved
           from scale_fixture.ol l join scale_fixture.fo f on f.order_id = l.order_id and f.position = l.parcel
           join scale_fixture.o o on o.id = l.order_id left join scale_fixture.sh sh on sh.fo_id = f.id
           where o.status = 'open' and o.outcome <> 'pp' and sh.id is null group by l.variant_id, f.location_id) r
  on r.variant_id = v.id and r.location_id = lo.id;
insert into scale_fixture.adj
select store_id, variant_id, location_id, neg + reserved + buffer, 'received', 'Opening stock', member_id, created_at + interval '1 minute', 1
from scale_fixture.lvl;`,
  },
  {
    name: "inventory_level",
    sql: `
insert into inventory_level (store_id, variant_id, location_id, on_hand, reserved, updated_at)
select l.store_id, l.variant_id, l.location_id, l.neg + l.reserved + l.buffer + l.net, l.reserved, p.now_at
from scale_fixture.lvl l cross join scale_fixture.params p order by l.n, l.variant_id, l.location_id`,
  },
  {
    name: "inventory_adjustment",
    sql: `
insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note, member_id, created_at)
select store_id, variant_id, location_id, delta,
  sum(delta) over (partition by variant_id, location_id order by created_at, ord rows between unbounded preceding and current row),
  reason, note, member_id, created_at
from scale_fixture.adj order by store_id, created_at`,
  },
  {
    name: "order counters, API grants and activity, domains, campaigns",
    sql: `
insert into order_counter (store_id, next_number) select id, 1001 + n_orders from scale_fixture.st order by n;

create unlogged table scale_fixture.gr as
select s.n, s.id as store_id, s.member_id, i, gen_random_uuid() as id,
  encode(sha256(convert_to('scale-token-' || s.n || '-' || i, 'UTF8')), 'hex') as secret_hash,
  s.opened_at + interval '10 days' + interval '1 day' * i as created_at
from scale_fixture.st s cross join lateral generate_series(1, case when s.n = 1 then 8 when s.n % 7 = 0 then 1 else 0 end) i;
insert into api_grant (id, store_id, kind, member_id, name, areas, created_at, last_used_at, secret_hash, secret_hint)
select g.id, g.store_id, 'token', g.member_id, 'Script token ' || g.i, array['orders:read', 'products:read', 'inventory:write'],
  g.created_at, p.now_at - interval '5 minutes', g.secret_hash, right(g.secret_hash, 4)
from scale_fixture.gr g cross join scale_fixture.params p order by g.n, g.i;

insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start, count, last_at)
select g.store_id, g.id, a.procedure, a.kind, a.via, a.bucket, a.count, least(a.bucket + interval '9 minutes' * ${u("k.ak", 64)}, p.now_at)
from scale_fixture.gr g cross join scale_fixture.params p
cross join lateral generate_series(1, case when g.n = 1 then 4000 else 12 end) j
cross join lateral (select (g.n::bigint * 16 + g.i) * 10000 + j as ak) k
cross join lateral (select ${u("k.ak", 60)} < 0.05 as write, p.now_at - interval '91 days' * ${u("k.ak", 61)} as at) w
cross join lateral (select
  case when w.write then (array['products.update', 'inventory.adjust', 'orders.setStatus'])[1 + floor(${u("k.ak", 62)} * 3)::int]
       else (array['products.list', 'orders.list', 'orders.get', 'customers.list', 'inventory.levels', 'analytics.summary'])[1 + floor(${u("k.ak", 62)} * 6)::int] end as procedure,
  case when w.write then 'write' else 'read' end as kind,
  case when ${u("k.ak", 63)} < 0.7 then 'token' else 'mcp' end as via,
  case when w.write then w.at else date_bin('10 minutes', w.at, '2000-01-01') end as bucket,
  case when w.write then 1 else 1 + floor(${u("k.ak", 65)} * 40)::int end as count) a
order by a.bucket
on conflict (store_id, grant_id, procedure, via, bucket_start) where kind = 'read' do nothing;

insert into store_domain (store_id, hostname, status, is_primary, created_at, updated_at)
select s.id, 'www.s' || s.n || '-shop.example', 'pending', false, p.now_at - interval '6 days' * ${u("s.n", 70)}, p.now_at - interval '6 days' * ${u("s.n", 70)}
from scale_fixture.st s cross join scale_fixture.params p where s.n % 50 = 0 order by s.n;
insert into domain_check (store_id, domain_id, checks, last_checked_at, last_result, next_check_at)
select d.store_id, d.id, 3, p.now_at - interval '5 minutes', 'not_found', p.now_at + interval '10 minutes' * (${u("s.n", 71)} - 0.5)
from store_domain d join scale_fixture.st s on s.id = d.store_id cross join scale_fixture.params p
where d.status = 'pending' and s.n % 100 = 0;

insert into campaign (store_id, name, subject, body, audience, status, starts_at, started_at, finished_at, recipients, created_at, updated_at)
select s.id, 'Campaign ' || i, 'News from ' || s.name, 'Hello! Something new in store.', (array['subscribers', 'buyers', 'non_buyers'])[1 + i % 3],
  case when i = 7 then 'scheduled' else 'sent' end, p.now_at + interval '1 day' * (i - 6.5) * 20,
  case when i < 7 then p.now_at + interval '1 day' * (i - 6.5) * 20 end, case when i < 7 then p.now_at + interval '1 day' * (i - 6.5) * 20 + interval '5 minutes' end,
  case when i < 7 then 100 * i else 0 end, p.now_at - interval '200 days', p.now_at - interval '200 days'
from scale_fixture.st s cross join scale_fixture.params p cross join lateral generate_series(1, case when s.n = 1 then 7 when s.n % 100 = 0 then 1 else 0 end) i;`,
  },
];

/**
 * Lane B, after shop_order: outbox rows for the newest orders (the big store's last 12,500, every other
 * store's newest), one per event the order's life emitted, with the order id in the payload as the order
 * timeline reads it. Mostly relayed; the big store's newest 600 wait (a backlog), 3 % of stores are stuck
 * behind a failing row (their newest events wait, attempts 3, with the error), and 0.4 % of rows are dead.
 * Then every customer's customer.created, sent: rows naming no order, which the retention prunes.
 */
export const OUTBOX_INSERTS: Step[] = [
  {
    name: "outbox_event",
    sql: `
insert into outbox_event (store_id, kind, payload, created_at, available_at, processed_at, attempts, last_error, dead_at)
select store_id, kind, payload, at,
  case when stuck then least(at + interval '1 minute', now_at) else at end,
  case when pending or dead then null else least(at + interval '2 seconds', now_at) end,
  case when stuck then 3 when dead then 8 else 0 end,
  case when stuck then 'The APP_EVENTS queue answered 503 Service Unavailable' when dead then 'The NOTIFICATIONS queue answered 500 after 8 tries' end,
  case when dead then least(at + interval '4 hours', now_at) end
from (
  select e.*, e.pending and e.n > 1 as stuck, not e.pending and ${u("e.ek", 81)} < 0.004 as dead
  from (
    select e.*, (e.n = 1 and e.rk <= 600) or (e.n > 1 and ${u("e.n", 80)} < 0.03 and e.rk <= 3) as pending
    from (
      select o.n, o.store_id, o.now_at, x.kind, x.at, x.payload, x.ord, o.g * 16 + x.ord as ek,
        row_number() over (partition by o.n order by x.at desc, x.ord desc) as rk
      from scale_fixture.o o join scale_fixture.st s on s.n = o.n join scale_fixture.ot t on t.order_id = o.id
      left join scale_fixture.sh sh on sh.order_id = o.id and sh.position = 0
      cross join lateral (values
        (1, 'order.placed', o.placed_at, jsonb_build_object('orderId', o.id, 'number', o.number, 'total', t.total, 'paymentMethod', o.pm), true),
        (2, 'inventory.reserved', o.placed_at, jsonb_build_object('orderId', o.id, 'items', '[]'::jsonb), o.outcome <> 'pp'),
        (3, 'order.paid', o.placed_at + interval '2 minutes', jsonb_build_object('orderId', o.id), o.payment_status in ('paid', 'partially_refunded', 'refunded')),
        (4, 'order.fulfilled', sh.created_at, jsonb_build_object('orderId', o.id), sh.id is not null),
        (5, 'order.delivered', sh.status_at, jsonb_build_object('orderId', o.id), o.fulfillment_status = 'delivered'),
        (6, 'order.cancelled', o.placed_at + least(o.age / 2, interval '1 day'), jsonb_build_object('orderId', o.id, 'number', o.number, 'paymentStatus', o.payment_status), o.status = 'cancelled'),
        (7, 'order.expired', o.placed_at + case when o.pm = 'gateway' then interval '30 minutes' else interval '3 days' end, jsonb_build_object('orderId', o.id, 'number', o.number), o.status = 'expired'),
        (8, 'order.refunded', o.placed_at + least(o.age * 0.9, interval '15 days'), jsonb_build_object('orderId', o.id, 'amount', t.total), o.outcome in ('cr', 'dr', 'df', 'rd'))
      ) x(ord, kind, at, payload, ok)
      where x.ok and x.at <= o.now_at and ((o.n = 1 and o.k > s.n_orders - 12500) or (o.n > 1 and o.k = s.n_orders))
    ) e
  ) e
) e
order by e.at, e.ord`,
  },
  {
    // Events that name no order, which the daily prune deletes 30 days after they were sent (migration 0028):
    // each customer's customer.created, relayed two seconds after it was written.
    name: "outbox_event (customers)",
    sql: `
insert into outbox_event (store_id, kind, payload, created_at, available_at, processed_at)
select c.store_id, 'customer.created', jsonb_build_object('customerId', c.id), c.created_at, c.created_at, least(c.created_at + interval '2 seconds', p.now_at)
from customer c cross join scale_fixture.params p
order by c.store_id, c.created_at`,
  },
];

export const STAGING_TABLES = ["params", "rates", "st", "loc", "prod", "var", "cust", "o", "ol", "fo0", "om", "fo", "ot", "sh", "adj", "lvl", "gr"];
