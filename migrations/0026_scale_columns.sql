-- Indexes that work under row-level security (issue 19 "Scale"; docs/database.md "Scale").
--
-- Under RLS the planner uses a condition as an index condition only if its function is LEAKPROOF (it could
-- otherwise see other stores' rows before the policy has filtered them): `=`, `<`, `^@` on text and uuid
-- are; lower(), ILIKE, LIKE and jsonb's ->> are not. So an index on lower(email) or on payload->>'orderId'
-- is never used by the runtime role, and those reads walked every row of the store. The values they
-- looked for are now stored in plain columns, kept by BEFORE triggers (so every writer, and rows copied
-- with `select *`, get them right), with plain indexes:
--
--   outbox_event.order_id     the order an event names in payload.orderId: the order's timeline
--   shop_order.email_lower    lower(email): a customer's orders, the email filter and search of orders.list
--   customer.email_lower      lower(email), and customer.name_lower, lower(first and last name): searching
--                             customers, matching buyers to orders (marketing audiences)
--
-- A search inside text (ILIKE '%…%') cannot use an index under RLS at all (trigram operators are not
-- leakproof either); it is read from an index that covers the searched columns, as a filter on the index
-- entries of the store's range, without visiting the table.
--
-- Filling the columns rewrites those rows once: the tables are locked while this migration runs. The
-- columns are the database's own (no caller writes them); the drizzle schema lists them as plain nullable
-- columns (test/schema.test.ts).

-- outbox_event.order_id ---------------------------------------------------------------------------------
alter table outbox_event add column order_id uuid;

-- Only the canonical (lower-case) text of a uuid counts, as payload->>'orderId' = o.id::text did.
create function internal.outbox_event_order_id() returns trigger
language plpgsql set search_path = pg_catalog as $fn$
begin
  new.order_id := case when new.payload ->> 'orderId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                       then (new.payload ->> 'orderId')::uuid end;
  return new;
end
$fn$;
revoke all on function internal.outbox_event_order_id() from public;

alter table outbox_event no force row level security;
update outbox_event set order_id = (payload ->> 'orderId')::uuid
 where payload ->> 'orderId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
alter table outbox_event force row level security;

create trigger outbox_event_order_id before insert or update of payload, order_id on outbox_event
  for each row execute function internal.outbox_event_order_id();
create index outbox_event_order_id_idx on outbox_event (store_id, order_id, created_at) where order_id is not null;
drop index outbox_event_order_idx;

-- shop_order.email_lower --------------------------------------------------------------------------------
alter table shop_order add column email_lower text;

create function internal.shop_order_email_lower() returns trigger
language plpgsql set search_path = pg_catalog as $fn$
begin
  new.email_lower := lower(new.email);
  return new;
end
$fn$;
revoke all on function internal.shop_order_email_lower() from public;

alter table shop_order no force row level security;
update shop_order set email_lower = lower(email);
alter table shop_order force row level security;

create trigger shop_order_email_lower before insert or update of email, email_lower on shop_order
  for each row execute function internal.shop_order_email_lower();
-- A customer's orders and orders.list's email filter, newest first.
create index shop_order_email_lower_idx on shop_order (store_id, email_lower, placed_at desc);
drop index shop_order_email_idx;
-- orders.list, newest first, in its exact order (placed_at, then number). It covers what the list filters on,
-- so a filter that matches few of a store's orders (a search inside the email, a status) is counted, and
-- the page's orders picked, from the index alone; the page's rows are then read by (store_id, number).
create index shop_order_list_idx on shop_order (store_id, placed_at desc, number desc)
  include (email_lower, status, payment_status, fulfillment_status);
drop index shop_order_placed_idx;

-- Open orders: what the home page's orders.waiting counts (from the index alone), and orders.list's
-- status=open filter, newest first.
create index shop_order_open_idx on shop_order (store_id, placed_at desc, number desc)
  include (payment_status, fulfillment_status) where status = 'open';

-- customer.email_lower, customer.name_lower -------------------------------------------------------------
alter table customer add column email_lower text, add column name_lower text;

create function internal.customer_lower() returns trigger
language plpgsql set search_path = pg_catalog as $fn$
begin
  new.email_lower := lower(new.email);
  new.name_lower := lower(concat_ws(' ', new.first_name, new.last_name));
  return new;
end
$fn$;
revoke all on function internal.customer_lower() from public;

alter table customer no force row level security;
update customer set email_lower = lower(email), name_lower = lower(concat_ws(' ', first_name, last_name));
alter table customer force row level security;

create trigger customer_lower before insert or update of email, first_name, last_name, email_lower, name_lower on customer
  for each row execute function internal.customer_lower();
-- customers.list, newest first; its search filters the entries on the covered name, email and phone.
create index customer_store_search_idx on customer (store_id, created_at desc, id) include (name_lower, email_lower, phone);
drop index customer_store_created_idx;
-- A campaign's audience and an enrolment's customer: the consenting customers by email.
create index customer_marketing_idx on customer (store_id, email_lower) include (id) where accepts_marketing;

-- An order's merchant tasks (orders.get).
create index merchant_task_order_idx on merchant_task (store_id, order_id, created_at) where order_id is not null;

-- api_activity -------------------------------------------------------------------------------------------
-- The daily prune lists the stores with rows last touched before the cutoff
-- (privileged.store_ids_with_old_activity filters on last_at; the old index was on bucket_start).
create index api_activity_last_at_idx on api_activity (last_at, store_id);
drop index api_activity_age_idx;
-- A SQL function's body is planned for any cutoff, which the planner then takes to keep a third of the
-- rows: bounded on both sides, the range is taken to be narrow and read from the index above (only the
-- rows past the retention), not from the whole of (store_id, last_at).
create or replace function privileged.store_ids_with_old_activity(p_before timestamptz, p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select distinct store_id from public.api_activity
  where last_at < p_before and last_at >= '-infinity'
  limit greatest(1, least(p_limit, 5000))
$$;
