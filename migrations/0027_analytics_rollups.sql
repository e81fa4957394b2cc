-- Per-store daily rollups for analytics.summary (issue 19 "Scale"; docs/database.md "Scale").
--
-- analytics.summary counted a store's orders, new customers and stock received in the asked range by
-- reading every row of the range (and every customer of the store): ~100 ms for a store with 200,000
-- orders over a year. These tables keep the same facts per store and UTC day, written by statement-level
-- triggers on the tables that hold the facts, in the writer's transaction, whoever the writer is:
--
--   analytics_order_day       orders by the UTC day of placed_at: placed, cancelled (cancelled or expired),
--                             sales_minor (totals of the others), paid_minor (those with money received)
--   analytics_customer_day    customers by the UTC day of created_at
--   analytics_customer_total  one row per store: customers, and those accepting marketing
--   analytics_stock_day       stock adjustments by the UTC day of created_at: count, units received (delta > 0)
--
-- A day at any utcOffset is a UTC day shifted by the offset, so a range at an offset is whole UTC days
-- (read here) plus, at each end, part of a UTC day (read from the facts' own tables through their
-- (store_id, time) indexes): together at most one day of rows, whatever the range. Every fact counts a
-- row as it is now: a change of status, payment status, total, time or consent, or a delete (a customer,
-- a variant's adjustments), moves the row's contribution, so the rollups answer exactly what counting the
-- rows answers (shared/procedures/analytics.test.ts compares the two on generated data).
--
-- The triggers are statement-level with transition tables: one write per (store, day) a statement changes,
-- in (store, day) order, so a bulk load costs one pass and writers take the rollup rows' locks in one
-- order; an update that changes no fact (a fulfillment status, updated_at) writes nothing. A delete only
-- updates, never inserts: it may be the cascade of the store's own deletion.

create table analytics_order_day (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  day date not null,
  placed integer not null default 0,
  cancelled integer not null default 0,
  sales_minor bigint not null default 0,
  paid_minor bigint not null default 0,
  -- Covering: a range is read from the index alone (a store's days lie on as many pages as days).
  unique (store_id, day) include (placed, cancelled, sales_minor, paid_minor)
) with (fillfactor = 80);

create table analytics_customer_day (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  day date not null,
  created integer not null default 0,
  unique (store_id, day) include (created)
) with (fillfactor = 80);

create table analytics_customer_total (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null unique references store (id) on delete cascade,
  customers integer not null default 0,
  accepting integer not null default 0
) with (fillfactor = 80);

create table analytics_stock_day (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  day date not null,
  adjustments integer not null default 0,
  units_received bigint not null default 0,
  unique (store_id, day) include (adjustments, units_received)
) with (fillfactor = 80);

-- Orders ------------------------------------------------------------------------------------------------
-- What an order adds to its day: the expressions analytics.summary counted with (an update adds the rows
-- as they are now and takes back the rows as they were). Written out in each statement: the triggers run
-- as the writer, which may not use schema internal, so they call no helper function.
create function internal.analytics_orders() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'DELETE' then
    update analytics_order_day r
       set placed = r.placed - d.placed, cancelled = r.cancelled - d.cancelled,
           sales_minor = r.sales_minor - d.sales_minor, paid_minor = r.paid_minor - d.paid_minor
      from (select store_id, (placed_at at time zone 'UTC')::date as day, count(*) as placed,
                   count(*) filter (where status in ('cancelled', 'expired')) as cancelled,
                   coalesce(sum(total) filter (where status not in ('cancelled', 'expired')), 0) as sales_minor,
                   coalesce(sum(total) filter (where status not in ('cancelled', 'expired')
                     and payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0) as paid_minor
              from old_rows group by 1, 2) d
     where r.store_id = d.store_id and r.day = d.day;
    return null;
  end if;
  if tg_op = 'INSERT' then
    insert into analytics_order_day as r (store_id, day, placed, cancelled, sales_minor, paid_minor)
    select store_id, (placed_at at time zone 'UTC')::date, count(*),
           count(*) filter (where status in ('cancelled', 'expired')),
           coalesce(sum(total) filter (where status not in ('cancelled', 'expired')), 0),
           coalesce(sum(total) filter (where status not in ('cancelled', 'expired')
             and payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0)
      from new_rows group by 1, 2 order by 1, 2
    on conflict (store_id, day) do update
      set placed = r.placed + excluded.placed, cancelled = r.cancelled + excluded.cancelled,
          sales_minor = r.sales_minor + excluded.sales_minor, paid_minor = r.paid_minor + excluded.paid_minor;
    return null;
  end if;
  -- UPDATE: the rows as they are now, less the rows as they were; days whose facts did not move are left alone.
  insert into analytics_order_day as r (store_id, day, placed, cancelled, sales_minor, paid_minor)
  select store_id, day, placed, cancelled, sales_minor, paid_minor from (
    select store_id, day, sum(sign) as placed,
           coalesce(sum(sign) filter (where status in ('cancelled', 'expired')), 0) as cancelled,
           coalesce(sum(sign * total) filter (where status not in ('cancelled', 'expired')), 0) as sales_minor,
           coalesce(sum(sign * total) filter (where status not in ('cancelled', 'expired')
             and payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0) as paid_minor
      from (select store_id, (placed_at at time zone 'UTC')::date as day, status, payment_status, total, 1 as sign from new_rows
            union all
            select store_id, (placed_at at time zone 'UTC')::date, status, payment_status, total, -1 from old_rows) x
     group by 1, 2) d
   where (placed, cancelled, sales_minor, paid_minor) <> (0, 0, 0, 0)
   order by 1, 2
  on conflict (store_id, day) do update
    set placed = r.placed + excluded.placed, cancelled = r.cancelled + excluded.cancelled,
        sales_minor = r.sales_minor + excluded.sales_minor, paid_minor = r.paid_minor + excluded.paid_minor;
  return null;
end
$fn$;

-- Customers ---------------------------------------------------------------------------------------------
create function internal.analytics_customers() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'INSERT' then
    insert into analytics_customer_day as r (store_id, day, created)
    select store_id, (created_at at time zone 'UTC')::date, count(*) from new_rows group by 1, 2 order by 1, 2
    on conflict (store_id, day) do update set created = r.created + excluded.created;
    insert into analytics_customer_total as r (store_id, customers, accepting)
    select store_id, count(*), count(*) filter (where accepts_marketing) from new_rows group by 1 order by 1
    on conflict (store_id) do update set customers = r.customers + excluded.customers, accepting = r.accepting + excluded.accepting;
  elsif tg_op = 'UPDATE' then
    insert into analytics_customer_day as r (store_id, day, created)
    select store_id, day, sum(sign) from (
      select store_id, (created_at at time zone 'UTC')::date as day, 1 as sign from new_rows
      union all
      select store_id, (created_at at time zone 'UTC')::date, -1 from old_rows) d
     group by 1, 2 having sum(sign) <> 0 order by 1, 2
    on conflict (store_id, day) do update set created = r.created + excluded.created;
    insert into analytics_customer_total as r (store_id, customers, accepting)
    select store_id, customers, accepting from (
      select store_id, sum(sign) as customers, coalesce(sum(sign) filter (where accepts_marketing), 0) as accepting from (
        select store_id, accepts_marketing, 1 as sign from new_rows
        union all
        select store_id, accepts_marketing, -1 from old_rows) x
       group by 1) d
     where (customers, accepting) <> (0, 0) order by 1
    on conflict (store_id) do update set customers = r.customers + excluded.customers, accepting = r.accepting + excluded.accepting;
  else
    update analytics_customer_day r set created = r.created - d.n
      from (select store_id, (created_at at time zone 'UTC')::date as day, count(*) as n from old_rows group by 1, 2) d
     where r.store_id = d.store_id and r.day = d.day;
    update analytics_customer_total r set customers = r.customers - d.n, accepting = r.accepting - d.accepting
      from (select store_id, count(*) as n, count(*) filter (where accepts_marketing) as accepting from old_rows group by 1) d
     where r.store_id = d.store_id;
  end if;
  return null;
end
$fn$;

-- Stock received ----------------------------------------------------------------------------------------
create function internal.analytics_stock() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'INSERT' then
    insert into analytics_stock_day as r (store_id, day, adjustments, units_received)
    select store_id, (created_at at time zone 'UTC')::date, count(*), coalesce(sum(delta) filter (where delta > 0), 0)
      from new_rows group by 1, 2 order by 1, 2
    on conflict (store_id, day) do update
      set adjustments = r.adjustments + excluded.adjustments, units_received = r.units_received + excluded.units_received;
  elsif tg_op = 'UPDATE' then
    insert into analytics_stock_day as r (store_id, day, adjustments, units_received)
    select store_id, day, sum(sign), coalesce(sum(sign * delta) filter (where delta > 0), 0) from (
      select store_id, (created_at at time zone 'UTC')::date as day, delta, 1 as sign from new_rows
      union all
      select store_id, (created_at at time zone 'UTC')::date, delta, -1 from old_rows) d
     group by 1, 2 having (sum(sign), coalesce(sum(sign * delta) filter (where delta > 0), 0)) <> (0, 0) order by 1, 2
    on conflict (store_id, day) do update
      set adjustments = r.adjustments + excluded.adjustments, units_received = r.units_received + excluded.units_received;
  else
    update analytics_stock_day r set adjustments = r.adjustments - d.n, units_received = r.units_received - d.units
      from (select store_id, (created_at at time zone 'UTC')::date as day, count(*) as n, coalesce(sum(delta) filter (where delta > 0), 0) as units
              from old_rows group by 1, 2) d
     where r.store_id = d.store_id and r.day = d.day;
  end if;
  return null;
end
$fn$;

-- Fired by the trigger mechanism, which needs no EXECUTE grant: nobody can call them directly.
revoke all on function internal.analytics_orders() from public;
revoke all on function internal.analytics_customers() from public;
revoke all on function internal.analytics_stock() from public;

-- Existing rows --------------------------------------------------------------------------------------------
-- The owner is bound by the tables' forced RLS, which would show it no rows: forcing is lifted for the
-- backfill and put back in the same transaction (which holds the tables' locks throughout, so no write is
-- missed between the backfill and the triggers).
alter table shop_order no force row level security;
alter table customer no force row level security;
alter table inventory_adjustment no force row level security;

insert into analytics_order_day (store_id, day, placed, cancelled, sales_minor, paid_minor)
select store_id, (placed_at at time zone 'UTC')::date, count(*),
       count(*) filter (where status in ('cancelled', 'expired')),
       coalesce(sum(total) filter (where status not in ('cancelled', 'expired')), 0),
       coalesce(sum(total) filter (where status not in ('cancelled', 'expired')
         and payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0)
  from shop_order group by 1, 2;
insert into analytics_customer_day (store_id, day, created)
select store_id, (created_at at time zone 'UTC')::date, count(*) from customer group by 1, 2;
insert into analytics_customer_total (store_id, customers, accepting)
select store_id, count(*), count(*) filter (where accepts_marketing) from customer group by 1;
insert into analytics_stock_day (store_id, day, adjustments, units_received)
select store_id, (created_at at time zone 'UTC')::date, count(*), coalesce(sum(delta) filter (where delta > 0), 0)
  from inventory_adjustment group by 1, 2;

alter table shop_order force row level security;
alter table customer force row level security;
alter table inventory_adjustment force row level security;

select internal.make_tenant_table('analytics_order_day');
select internal.make_tenant_table('analytics_customer_day');
select internal.make_tenant_table('analytics_customer_total');
select internal.make_tenant_table('analytics_stock_day');

create trigger analytics_insert after insert on shop_order referencing new table as new_rows
  for each statement execute function internal.analytics_orders();
create trigger analytics_update after update on shop_order referencing old table as old_rows new table as new_rows
  for each statement execute function internal.analytics_orders();
create trigger analytics_delete after delete on shop_order referencing old table as old_rows
  for each statement execute function internal.analytics_orders();

create trigger analytics_insert after insert on customer referencing new table as new_rows
  for each statement execute function internal.analytics_customers();
create trigger analytics_update after update on customer referencing old table as old_rows new table as new_rows
  for each statement execute function internal.analytics_customers();
create trigger analytics_delete after delete on customer referencing old table as old_rows
  for each statement execute function internal.analytics_customers();

create trigger analytics_insert after insert on inventory_adjustment referencing new table as new_rows
  for each statement execute function internal.analytics_stock();
create trigger analytics_update after update on inventory_adjustment referencing old table as old_rows new table as new_rows
  for each statement execute function internal.analytics_stock();
create trigger analytics_delete after delete on inventory_adjustment referencing old table as old_rows
  for each statement execute function internal.analytics_stock();

-- The edges of a range at an offset read stock adjustments by time (customers and orders have such indexes).
create index inventory_adjustment_store_created_idx on inventory_adjustment (store_id, created_at);
