-- Word-prefix search that an index answers under row-level security, in the list's order (issue 19 "Scale";
-- docs/decisions/0016-search-under-rls.md).
--
-- Searching inside text (`ILIKE '%…%'`, trigram `%`) cannot be an index condition for the runtime role:
-- those operators are not LEAKPROOF, so they run after the store's policy, as a filter on every entry of
-- the store (~28 ms for 200,000 orders). A search is now by word prefix: a word of the query matches a row
-- when it begins one of the row's words. Every prefix of every word of the searched fields (up to 32
-- characters) is a token, with the row's place in its list; a query word is then an equality on the token
-- (texteq is leakproof), and the index `(store_id, token, <the list's order>)` gives its rows already in
-- the list's order: a page stops at its rows and a count at its cap, whatever the word.
--
--   order_search_token      the prefixes of the words of an order's email, with its placed_at and number
--                           (an order is named by (store_id, number), as the list reads it)
--   customer_search_token   the prefixes of the words of a customer's name, email and phone (the digits
--                           with and without the country code), with created_at; `contact` when a prefix
--                           is found only in the email or phone: only a caller who may see contact details
--                           matches those
--
-- A word is a run of characters that are not ASCII punctuation, space or control characters (letters of
-- any script, digits): `Priya.Sharma+tag@Example.co.in` has the words priya, sharma, tag, example, co, in.
-- The query is split by the same rule (shared/procedures/search.ts) and each of its words lower-cased here,
-- by the database's lower(), as the tokens were.
--
-- Kept by triggers, so every writer (checkout, an import, a staff edit, rows copied by a migration) keeps
-- them right: an insert adds the new rows' tokens (per statement, one pass for a bulk load); an update that
-- changes a searched field or the row's place in its list replaces that row's tokens; a delete takes them.
-- Each is found by its primary key from the row's old values, so the tables need no other index.

create table order_search_token (
  store_id uuid not null references store (id) on delete cascade,
  token text collate "C" not null,
  placed_at timestamptz not null,
  number integer not null,
  primary key (store_id, token, placed_at, number)
);

create table customer_search_token (
  store_id uuid not null references store (id) on delete cascade,
  token text collate "C" not null,
  created_at timestamptz not null,
  customer_id uuid not null,
  contact boolean not null,
  primary key (store_id, token, created_at, customer_id) include (contact)
);

-- The word rule: lower(x), split on runs of ASCII non-alphanumerics; and a word's prefixes. In schema public
-- (the triggers run as the writer, which may not use schema internal); pure functions of their arguments,
-- so the runtime role may call them without learning anything. Written to be inlined into the statements
-- that call them (no SET clause, not STRICT, every name outside pg_catalog qualified): called per row, as
-- functions, they cost ~5 ms a customer.
create function public.search_words(x text) returns setof text
language sql immutable parallel safe as $fn$
  select w from pg_catalog.regexp_split_to_table(pg_catalog.lower(x), '[^0-9a-z\u0080-\U0010ffff]+') w where w <> ''
$fn$;

create function public.search_prefixes(x text) returns setof text
language sql immutable parallel safe as $fn$
  select distinct pg_catalog.left(w, n)
    from public.search_words(x) w, pg_catalog.generate_series(1, least(pg_catalog.length(w), 32)) n
$fn$;

-- A customer's tokens: the prefixes of the name's words, of the email's and of the phone's digits with and
-- without the country code (E.164 by its check, so its last ten digits are the number as Indian customers
-- say it); `contact` unless the name has the prefix too.
create function public.customer_search_prefixes(name_lower text, email_lower text, phone text)
returns table (token text, contact boolean)
language sql immutable parallel safe as $fn$
  select pg_catalog.left(w.word, n), pg_catalog.bool_and(w.contact)
    from (
      select x as word, false as contact from public.search_words(name_lower) x
      union all
      select x, true from public.search_words(email_lower) x
      union all
      select d, true
        from (select pg_catalog.ltrim(phone, '+') as d union all select pg_catalog.right(phone, 10) where pg_catalog.length(phone) > 11) p
       where d is not null and d <> ''
    ) w, pg_catalog.generate_series(1, least(pg_catalog.length(w.word), 32)) n
   group by 1
$fn$;

-- Orders ---------------------------------------------------------------------------------------------------
create function internal.order_search_tokens_insert() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into order_search_token (store_id, token, placed_at, number)
  select n.store_id, p, n.placed_at, n.number from new_rows n, public.search_prefixes(n.email_lower) p;
  return null;
end
$fn$;

create function internal.order_search_tokens_delete() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from order_search_token t
   using old_rows o, public.search_prefixes(o.email_lower) p
   where t.store_id = o.store_id and t.token = p and t.placed_at = o.placed_at and t.number = o.number;
  return null;
end
$fn$;

create function internal.order_search_tokens_update() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from order_search_token t
   where t.store_id = old.store_id and t.token = any (array(select public.search_prefixes(old.email_lower)))
     and t.placed_at = old.placed_at and t.number = old.number;
  insert into order_search_token (store_id, token, placed_at, number)
  select new.store_id, p, new.placed_at, new.number from public.search_prefixes(new.email_lower) p;
  return null;
end
$fn$;

-- Customers ------------------------------------------------------------------------------------------------
create function internal.customer_search_tokens_insert() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  insert into customer_search_token (store_id, token, created_at, customer_id, contact)
  select n.store_id, t.token, n.created_at, n.id, t.contact
    from new_rows n, public.customer_search_prefixes(n.name_lower, n.email_lower, n.phone) t;
  return null;
end
$fn$;

create function internal.customer_search_tokens_delete() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from customer_search_token t
   using old_rows o, public.customer_search_prefixes(o.name_lower, o.email_lower, o.phone) p
   where t.store_id = o.store_id and t.token = p.token and t.created_at = o.created_at and t.customer_id = o.id;
  return null;
end
$fn$;

create function internal.customer_search_tokens_update() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  delete from customer_search_token t
   where t.store_id = old.store_id
     and t.token = any (array(select p.token from public.customer_search_prefixes(old.name_lower, old.email_lower, old.phone) p))
     and t.created_at = old.created_at and t.customer_id = old.id;
  insert into customer_search_token (store_id, token, created_at, customer_id, contact)
  select new.store_id, t.token, new.created_at, new.id, t.contact
    from public.customer_search_prefixes(new.name_lower, new.email_lower, new.phone) t;
  return null;
end
$fn$;

-- Fired by the trigger mechanism, which needs no EXECUTE grant: nobody can call them directly.
revoke all on function internal.order_search_tokens_insert() from public;
revoke all on function internal.order_search_tokens_delete() from public;
revoke all on function internal.order_search_tokens_update() from public;
revoke all on function internal.customer_search_tokens_insert() from public;
revoke all on function internal.customer_search_tokens_delete() from public;
revoke all on function internal.customer_search_tokens_update() from public;

-- Existing rows ----------------------------------------------------------------------------------------------
-- As in 0027: forcing is lifted for the owner's backfill and put back in the same transaction, which holds
-- the tables' locks, so no write is missed between the backfill and the triggers.
alter table shop_order no force row level security;
alter table customer no force row level security;

insert into order_search_token (store_id, token, placed_at, number)
select o.store_id, p, o.placed_at, o.number from shop_order o, public.search_prefixes(o.email_lower) p;

insert into customer_search_token (store_id, token, created_at, customer_id, contact)
select c.store_id, t.token, c.created_at, c.id, t.contact
  from customer c, public.customer_search_prefixes(c.name_lower, c.email_lower, c.phone) t;

alter table shop_order force row level security;
alter table customer force row level security;

select internal.make_tenant_table('order_search_token');
select internal.make_tenant_table('customer_search_token');

create trigger search_tokens_insert after insert on shop_order referencing new table as new_rows
  for each statement execute function internal.order_search_tokens_insert();
create trigger search_tokens_delete after delete on shop_order referencing old table as old_rows
  for each statement execute function internal.order_search_tokens_delete();
create trigger search_tokens_update after update of email, email_lower, placed_at, number on shop_order
  for each row when (old.email_lower is distinct from new.email_lower or old.placed_at is distinct from new.placed_at
                     or old.number is distinct from new.number)
  execute function internal.order_search_tokens_update();

create trigger search_tokens_insert after insert on customer referencing new table as new_rows
  for each statement execute function internal.customer_search_tokens_insert();
create trigger search_tokens_delete after delete on customer referencing old table as old_rows
  for each statement execute function internal.customer_search_tokens_delete();
create trigger search_tokens_update after update of email, email_lower, first_name, last_name, name_lower, phone, created_at on customer
  for each row when (old.email_lower is distinct from new.email_lower or old.name_lower is distinct from new.name_lower
                     or old.phone is distinct from new.phone or old.created_at is distinct from new.created_at)
  execute function internal.customer_search_tokens_update();
