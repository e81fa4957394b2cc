-- A store's running totals of its current state, read in one row whatever the store's size (issue 19
-- "Scale"; docs/decisions/0017-store-tally.md):
--
--   open orders waiting for someone (the admin home, orders.waiting): unpaid, payment pending, to ship
--   (paid, nothing shipped), partly shipped (paid, some parcels shipped)
--   stock (analytics.summary): units on hand, units available (on hand less reserved), stock value at
--   price (on hand × the variant's price, in minor units)
--
-- Counting these from the rows read every open order and every stock level of the store: 1,683 open orders
-- and 1,800 levels in the scale fixture's big store, 2× the demo store's time for the home page's counts
-- and 1.65× for analytics. Here they are kept by the writes, without a row that writers queue on:
--
--   store_tally        one row per store: the totals folded so far
--   store_tally_delta  changes not folded yet, one row per (statement, store) that changed a total
--
-- A write's triggers insert its change as a delta row (never waiting: an insert takes no lock another
-- writer holds). Inserting deltas fires the fold, which takes the store's tally row FOR UPDATE SKIP LOCKED
-- and, if it got it, moves every delta row it can see into the tally (delete … returning, then update).
-- A writer that finds the tally row locked (another transaction is folding, and holds it until it ends)
-- leaves its delta row for the next fold. So no writer ever waits on the tally, no lock order changes and
-- no deadlock is possible; the tally row is locked only by folds, and only one fold at a time can hold it.
-- A reader adds the tally row and the store's delta rows (usually none; a few right after concurrent
-- writes), in one snapshot: a fold moves rows from one to the other in one commit, so a reader sees each
-- change exactly once.
--
-- Every writer keeps them right (checkout, webhooks, jobs, a staff edit, a migration's bulk update): the
-- triggers are statement-level with transition tables (one delta row per store a statement changed, one
-- pass for a bulk load), except a variant's delete, which takes its stock's value away row by row before
-- its levels go (the cascade deletes the levels after the variant, when its price can no longer be read).

create table store_tally (
  store_id uuid primary key references store (id) on delete cascade,
  open_unpaid integer not null default 0,
  open_payment_pending integer not null default 0,
  open_to_ship integer not null default 0,
  open_partly_shipped integer not null default 0,
  units_on_hand bigint not null default 0,
  units_available bigint not null default 0,
  stock_value_minor numeric not null default 0
) with (fillfactor = 50);

-- No foreign key, so that a delta's insert takes no key-share lock on the store's row: a delta row lives
-- from its statement to the next fold; a store's deletion deletes those left (internal.store_tally_store_gone).
create table store_tally_delta (
  store_id uuid not null,
  open_unpaid integer not null default 0,
  open_payment_pending integer not null default 0,
  open_to_ship integer not null default 0,
  open_partly_shipped integer not null default 0,
  units_on_hand bigint not null default 0,
  units_available bigint not null default 0,
  stock_value_minor numeric not null default 0
);
create index store_tally_delta_store_idx on store_tally_delta (store_id);

-- The fold -------------------------------------------------------------------------------------------------
create function internal.store_tally_fold() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  with mine as (
    select t.store_id from store_tally t
     where t.store_id in (select distinct n.store_id from new_rows n)
     order by t.store_id
       for update skip locked),
  gone as (
    delete from store_tally_delta d using mine where d.store_id = mine.store_id
    returning d.*),
  sums as (
    select store_id, sum(open_unpaid) as open_unpaid, sum(open_payment_pending) as open_payment_pending,
           sum(open_to_ship) as open_to_ship, sum(open_partly_shipped) as open_partly_shipped,
           sum(units_on_hand) as units_on_hand, sum(units_available) as units_available,
           sum(stock_value_minor) as stock_value_minor
      from gone group by store_id)
  update store_tally t
     set open_unpaid = t.open_unpaid + s.open_unpaid,
         open_payment_pending = t.open_payment_pending + s.open_payment_pending,
         open_to_ship = t.open_to_ship + s.open_to_ship,
         open_partly_shipped = t.open_partly_shipped + s.open_partly_shipped,
         units_on_hand = t.units_on_hand + s.units_on_hand,
         units_available = t.units_available + s.units_available,
         stock_value_minor = t.stock_value_minor + s.stock_value_minor
    from sums s
   where t.store_id = s.store_id;
  return null;
end
$fn$;

-- Open orders ----------------------------------------------------------------------------------------------
-- An order counts while it is open, in the one group its payment and fulfilment put it in (as orders.waiting
-- counted): the rows as they are now count +1, the rows as they were -1. A statement's transition tables
-- exist only for its kind, so each kind has its own statement (as in 0027: read straight from the
-- transition tables, a bulk load of a million orders is one pass). A delete's delta is written only while
-- its store exists (a store's deletion cascades after the store row is gone).
create function internal.store_tally_orders() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'INSERT' then
    insert into store_tally_delta (store_id, open_unpaid, open_payment_pending, open_to_ship, open_partly_shipped)
    select store_id, unpaid, pending, to_ship, partly from (
      select store_id,
             coalesce(sum(sign) filter (where payment_status = 'unpaid'), 0) as unpaid,
             coalesce(sum(sign) filter (where payment_status = 'pending'), 0) as pending,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled'), 0) as to_ship,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled'), 0) as partly
        from (select store_id, payment_status, fulfillment_status, 1 as sign from new_rows where status = 'open') x
       group by store_id) d
     where (unpaid, pending, to_ship, partly) <> (0, 0, 0, 0)
     order by store_id;
  elsif tg_op = 'UPDATE' then
    insert into store_tally_delta (store_id, open_unpaid, open_payment_pending, open_to_ship, open_partly_shipped)
    select store_id, unpaid, pending, to_ship, partly from (
      select store_id,
             coalesce(sum(sign) filter (where payment_status = 'unpaid'), 0) as unpaid,
             coalesce(sum(sign) filter (where payment_status = 'pending'), 0) as pending,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled'), 0) as to_ship,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled'), 0) as partly
        from (select store_id, payment_status, fulfillment_status, 1 as sign from new_rows where status = 'open'
              union all select store_id, payment_status, fulfillment_status, -1 as sign from old_rows where status = 'open') x
       group by store_id) d
     where (unpaid, pending, to_ship, partly) <> (0, 0, 0, 0)
     order by store_id;
  else
    insert into store_tally_delta (store_id, open_unpaid, open_payment_pending, open_to_ship, open_partly_shipped)
    select store_id, unpaid, pending, to_ship, partly from (
      select store_id,
             coalesce(sum(sign) filter (where payment_status = 'unpaid'), 0) as unpaid,
             coalesce(sum(sign) filter (where payment_status = 'pending'), 0) as pending,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled'), 0) as to_ship,
             coalesce(sum(sign) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled'), 0) as partly
        from (select store_id, payment_status, fulfillment_status, -1 as sign from old_rows where status = 'open') x
       group by store_id) d
     where (unpaid, pending, to_ship, partly) <> (0, 0, 0, 0)
       and exists (select 1 from store s where s.id = d.store_id)
     order by store_id;
  end if;
  return null;
end
$fn$;

-- Stock ----------------------------------------------------------------------------------------------------
-- A level counts its on-hand units, its available units, and its on-hand units at its variant's price (a
-- level whose variant is gone, in a variant's cascade, counts no value: the variant's delete took it).
create function internal.store_tally_levels() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'INSERT' then
    insert into store_tally_delta (store_id, units_on_hand, units_available, stock_value_minor)
    select store_id, on_hand, available, value from (
      select l.store_id, sum(l.sign * l.on_hand) as on_hand, sum(l.sign * (l.on_hand - l.reserved)) as available,
             coalesce(sum(l.sign * l.on_hand::numeric * v.price_minor), 0) as value
        from (select store_id, variant_id, on_hand, reserved, 1 as sign from new_rows) l
        left join product_variant v on v.store_id = l.store_id and v.id = l.variant_id
       group by l.store_id) d
     where (on_hand, available, value) <> (0, 0, 0)
     order by store_id;
  elsif tg_op = 'UPDATE' then
    insert into store_tally_delta (store_id, units_on_hand, units_available, stock_value_minor)
    select store_id, on_hand, available, value from (
      select l.store_id, sum(l.sign * l.on_hand) as on_hand, sum(l.sign * (l.on_hand - l.reserved)) as available,
             coalesce(sum(l.sign * l.on_hand::numeric * v.price_minor), 0) as value
        from (select store_id, variant_id, on_hand, reserved, 1 as sign from new_rows
              union all select store_id, variant_id, on_hand, reserved, -1 as sign from old_rows) l
        left join product_variant v on v.store_id = l.store_id and v.id = l.variant_id
       group by l.store_id) d
     where (on_hand, available, value) <> (0, 0, 0)
     order by store_id;
  else
    insert into store_tally_delta (store_id, units_on_hand, units_available, stock_value_minor)
    select store_id, on_hand, available, value from (
      select l.store_id, sum(l.sign * l.on_hand) as on_hand, sum(l.sign * (l.on_hand - l.reserved)) as available,
             coalesce(sum(l.sign * l.on_hand::numeric * v.price_minor), 0) as value
        from (select store_id, variant_id, on_hand, reserved, -1 as sign from old_rows) l
        left join product_variant v on v.store_id = l.store_id and v.id = l.variant_id
       group by l.store_id) d
     where (on_hand, available, value) <> (0, 0, 0)
       and exists (select 1 from store s where s.id = d.store_id)
     order by store_id;
  end if;
  return null;
end
$fn$;

-- A price change revalues the variant's stock on hand.
create function internal.store_tally_prices() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into store_tally_delta (store_id, stock_value_minor)
  select n.store_id, sum((n.price_minor - o.price_minor)::numeric * l.on_hand)
    from new_rows n
    join old_rows o on o.id = n.id
    join inventory_level l on l.store_id = n.store_id and l.variant_id = n.id
   where n.price_minor <> o.price_minor
   group by n.store_id
  having sum((n.price_minor - o.price_minor)::numeric * l.on_hand) <> 0
   order by n.store_id;
  return null;
end
$fn$;

-- A variant's delete takes its stock's value away while its price can still be read (its levels' units go
-- when the cascade deletes them).
create function internal.store_tally_variant_gone() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into store_tally_delta (store_id, stock_value_minor)
  select old.store_id, -sum(l.on_hand::numeric * old.price_minor)
    from inventory_level l
   where l.store_id = old.store_id and l.variant_id = old.id
     and exists (select 1 from store s where s.id = old.store_id)
  having sum(l.on_hand::numeric * old.price_minor) <> 0;
  return old;
end
$fn$;

-- A new store starts with its tally row (the fold only moves deltas into an existing row, so that it never
-- waits on another writer's insert of the same key).
create function internal.store_tally_new_store() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into store_tally (store_id) select id from new_rows order by id on conflict (store_id) do nothing;
  return null;
end
$fn$;

-- A store's deletion deletes its tally row (the foreign key) and its delta rows left unfolded. The deletes
-- its cascade makes write none: a delete's delta is written only while its store exists (the cascade's
-- triggers fire after this one).
create function internal.store_tally_store_gone() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from store_tally_delta d using old_rows o where d.store_id = o.id;
  return null;
end
$fn$;

-- Fired by the trigger mechanism, which needs no EXECUTE grant: nobody can call them directly.
revoke all on function internal.store_tally_fold() from public;
revoke all on function internal.store_tally_orders() from public;
revoke all on function internal.store_tally_levels() from public;
revoke all on function internal.store_tally_prices() from public;
revoke all on function internal.store_tally_variant_gone() from public;
revoke all on function internal.store_tally_new_store() from public;
revoke all on function internal.store_tally_store_gone() from public;

-- Existing rows --------------------------------------------------------------------------------------------
-- As in 0027: forcing is lifted for the owner's backfill and put back in the same transaction, which holds
-- the tables' locks throughout, so no write is missed between the backfill and the triggers.
alter table store no force row level security;
alter table shop_order no force row level security;
alter table inventory_level no force row level security;
alter table product_variant no force row level security;

insert into store_tally (store_id, open_unpaid, open_payment_pending, open_to_ship, open_partly_shipped,
                         units_on_hand, units_available, stock_value_minor)
select s.id, coalesce(o.unpaid, 0), coalesce(o.pending, 0), coalesce(o.to_ship, 0), coalesce(o.partly, 0),
       coalesce(l.on_hand, 0), coalesce(l.available, 0), coalesce(l.value, 0)
  from store s
  left join (
    select store_id,
           count(*) filter (where payment_status = 'unpaid') as unpaid,
           count(*) filter (where payment_status = 'pending') as pending,
           count(*) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled') as to_ship,
           count(*) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled') as partly
      from shop_order where status = 'open' group by store_id) o on o.store_id = s.id
  left join (
    select l.store_id, sum(l.on_hand) as on_hand, sum(l.on_hand - l.reserved) as available,
           sum(l.on_hand::numeric * v.price_minor) as value
      from inventory_level l join product_variant v on v.store_id = l.store_id and v.id = l.variant_id
     group by l.store_id) l on l.store_id = s.id;

alter table store force row level security;
alter table shop_order force row level security;
alter table inventory_level force row level security;
alter table product_variant force row level security;

select internal.make_tenant_table('store_tally');
select internal.make_tenant_table('store_tally_delta');

create trigger store_tally_fold after insert on store_tally_delta referencing new table as new_rows
  for each statement execute function internal.store_tally_fold();

create trigger store_tally_insert after insert on shop_order referencing new table as new_rows
  for each statement execute function internal.store_tally_orders();
create trigger store_tally_update after update on shop_order referencing old table as old_rows new table as new_rows
  for each statement execute function internal.store_tally_orders();
create trigger store_tally_delete after delete on shop_order referencing old table as old_rows
  for each statement execute function internal.store_tally_orders();

create trigger store_tally_insert after insert on inventory_level referencing new table as new_rows
  for each statement execute function internal.store_tally_levels();
create trigger store_tally_update after update on inventory_level referencing old table as old_rows new table as new_rows
  for each statement execute function internal.store_tally_levels();
create trigger store_tally_delete after delete on inventory_level referencing old table as old_rows
  for each statement execute function internal.store_tally_levels();

create trigger store_tally_update after update on product_variant referencing old table as old_rows new table as new_rows
  for each statement execute function internal.store_tally_prices();
create trigger store_tally_delete before delete on product_variant
  for each row execute function internal.store_tally_variant_gone();

create trigger store_tally_insert after insert on store referencing new table as new_rows
  for each statement execute function internal.store_tally_new_store();
create trigger store_tally_delete after delete on store referencing old table as old_rows
  for each statement execute function internal.store_tally_store_gone();
