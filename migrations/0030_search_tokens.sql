-- Word-prefix search that an index answers under row-level security (issue 19 "Scale";
-- docs/decisions/0016-search-under-rls.md).
--
-- Searching inside text (`ILIKE '%…%'`, trigram `%`) cannot be an index condition for the runtime role:
-- those operators are not LEAKPROOF, so they run after the store's policy, as a filter on every entry of
-- the store (~28 ms for 200,000 orders). A search is now a word-prefix search over the words of the
-- searched fields, kept in token tables: a word of the query matches a row when it begins one of the row's
-- words. Finding the rows whose word begins with `w` is `token >= w and token < w || U+10FFFF` on a "C"
-- collated column: text_ge and text_lt are leakproof, so it is an index range of the store's tokens.
--
--   order_search_token      the words of an order's email (lower-cased)
--   customer_search_token   the words of a customer's name (contact = false), of the email, and the phone's
--                           digits with and without the country code (contact = true: only a caller who may
--                           see contact details searches them)
--
-- A word is a run of characters that are not ASCII punctuation, space or control characters (letters of
-- any script, digits): `Priya.Sharma+tag@Example.co.in` has the words priya, sharma, tag, example, co, in.
-- The query is split by the same rule (shared/procedures/search.ts) and each of its words lower-cased here,
-- by the database's lower(), as the tokens were.
--
-- Kept by triggers, so every writer (checkout, an import, a staff edit, rows copied by a migration) keeps
-- them right: an insert adds the new rows' words (per statement, one pass for a bulk load); an update that
-- changes a searched field or the row's place in its list replaces that row's words; a delete takes them
-- by the foreign key's cascade.

-- Each token carries its row's place in the list (orders: placed_at, number; customers: created_at), so a
-- search's page and count are read from the token index alone: the matching rows sorted, then only the
-- page's rows read.
create table order_search_token (
  store_id uuid not null,
  order_id uuid not null,
  token text collate "C" not null,
  placed_at timestamptz not null,
  number integer not null,
  primary key (store_id, token, order_id) include (placed_at, number),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
-- An order's words: the cascade of its deletion, an update's replacement, and a second word of a query
-- checked against the orders the first word found.
create index order_search_token_order_idx on order_search_token (store_id, order_id, token);

create table customer_search_token (
  store_id uuid not null,
  customer_id uuid not null,
  token text collate "C" not null,
  contact boolean not null,
  created_at timestamptz not null,
  primary key (store_id, token, customer_id, contact) include (created_at),
  foreign key (store_id, customer_id) references customer (store_id, id) on delete cascade
);
create index customer_search_token_customer_idx on customer_search_token (store_id, customer_id, token, contact);

-- The word rule: lower(x), split on runs of ASCII non-alphanumerics. In schema public (the triggers run as
-- the writer, which may not use schema internal); pure functions of their arguments, so the runtime role
-- may call them without learning anything.
create function public.search_words(x text) returns setof text
language sql immutable strict parallel safe set search_path = pg_catalog as $fn$
  select w from regexp_split_to_table(lower(x), '[^0-9a-z\u0080-\U0010ffff]+') w where w <> ''
$fn$;

-- A customer's tokens: the name's words, the email's (contact), and the phone's digits with and without the
-- country code (contact): E.164 by its check, so its last ten digits are the number as Indian customers say it.
create function public.customer_search_words(name_lower text, email_lower text, phone text)
returns table (token text, contact boolean)
language sql immutable parallel safe set search_path = pg_catalog, public as $fn$
  select w, false from public.search_words(name_lower) w
  union
  select w, true from public.search_words(email_lower) w
  union
  select d, true from (select ltrim(phone, '+') as d union all select right(phone, 10) where length(phone) > 11) p
   where d is not null and d <> ''
$fn$;

-- Orders ---------------------------------------------------------------------------------------------------
create function internal.order_search_tokens_insert() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into order_search_token (store_id, order_id, token, placed_at, number)
  select distinct n.store_id, n.id, w, n.placed_at, n.number from new_rows n, public.search_words(n.email_lower) w;
  return null;
end
$fn$;

create function internal.order_search_tokens_update() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from order_search_token where store_id = new.store_id and order_id = new.id;
  insert into order_search_token (store_id, order_id, token, placed_at, number)
  select distinct new.store_id, new.id, w, new.placed_at, new.number from public.search_words(new.email_lower) w;
  return null;
end
$fn$;

-- Customers ------------------------------------------------------------------------------------------------
create function internal.customer_search_tokens_insert() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into customer_search_token (store_id, customer_id, token, contact, created_at)
  select n.store_id, n.id, t.token, t.contact, n.created_at
    from new_rows n, public.customer_search_words(n.name_lower, n.email_lower, n.phone) t;
  return null;
end
$fn$;

create function internal.customer_search_tokens_update() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from customer_search_token where store_id = new.store_id and customer_id = new.id;
  insert into customer_search_token (store_id, customer_id, token, contact, created_at)
  select new.store_id, new.id, t.token, t.contact, new.created_at
    from public.customer_search_words(new.name_lower, new.email_lower, new.phone) t;
  return null;
end
$fn$;

-- Fired by the trigger mechanism, which needs no EXECUTE grant: nobody can call them directly.
revoke all on function internal.order_search_tokens_insert() from public;
revoke all on function internal.order_search_tokens_update() from public;
revoke all on function internal.customer_search_tokens_insert() from public;
revoke all on function internal.customer_search_tokens_update() from public;

-- Existing rows ----------------------------------------------------------------------------------------------
-- As in 0027: forcing is lifted for the owner's backfill and put back in the same transaction, which holds
-- the tables' locks, so no write is missed between the backfill and the triggers.
alter table shop_order no force row level security;
alter table customer no force row level security;

insert into order_search_token (store_id, order_id, token, placed_at, number)
select distinct o.store_id, o.id, w, o.placed_at, o.number from shop_order o, public.search_words(o.email_lower) w;

insert into customer_search_token (store_id, customer_id, token, contact, created_at)
select c.store_id, c.id, t.token, t.contact, c.created_at
  from customer c, public.customer_search_words(c.name_lower, c.email_lower, c.phone) t;

alter table shop_order force row level security;
alter table customer force row level security;

select internal.make_tenant_table('order_search_token');
select internal.make_tenant_table('customer_search_token');
analyze order_search_token;
analyze customer_search_token;

create trigger search_tokens_insert after insert on shop_order referencing new table as new_rows
  for each statement execute function internal.order_search_tokens_insert();
create trigger search_tokens_update after update of email, email_lower, placed_at, number on shop_order
  for each row when (old.email_lower is distinct from new.email_lower or old.placed_at is distinct from new.placed_at
                     or old.number is distinct from new.number)
  execute function internal.order_search_tokens_update();

create trigger search_tokens_insert after insert on customer referencing new table as new_rows
  for each statement execute function internal.customer_search_tokens_insert();
create trigger search_tokens_update after update of email, email_lower, first_name, last_name, name_lower, phone, created_at on customer
  for each row when (old.email_lower is distinct from new.email_lower or old.name_lower is distinct from new.name_lower
                     or old.phone is distinct from new.phone or old.created_at is distinct from new.created_at)
  execute function internal.customer_search_tokens_update();
