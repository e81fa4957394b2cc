-- Several-word storefront searches bounded by their matches, not by their words' postings (issue 23 item 5;
-- decision 0035, second amendment).
--
-- Migration 0045 intersected several query words by reading every posting of every word and grouping them
-- by product: "saree silk" read 6,464 postings in a 50,000-product store to find 208 products (3.0x the demo
-- store). Here each product's search row carries the keys of its words, and a GIN index on them intersects
-- the words' lists inside the index (compressed posting lists, skipping through the longer ones), so the
-- statement reads only the products that have every word.
--
--   search_word.id      now the word's key: md5 of (store, word) as a uuid, the same wherever it is computed,
--                       so a product's keys need no lookup. One store's word never shares a key with another
--                       store's (a collision of md5 over these inputs is not a practical concern, and the reader
--                       below checks the store on every row besides).
--   product_search      word_keys (its words' keys) and title_words (its title's words, for the ranking's
--                       weight), both generated from the row; GIN index on word_keys, no store column in it (a key
--                       is one store's word already).
--
-- The index is read by privileged.product_ids_with_words (SECURITY DEFINER: `&&` is not LEAKPROOF, so under
-- row-level security it cannot be an index condition for the runtime role; decision 0016). It names the store
-- from app.store_id only and returns product ids only, best first.

create function public.search_word_key(p_store uuid, p_word text) returns uuid
language sql immutable parallel safe set search_path = pg_catalog
as $$ select md5(p_store::text || ' ' || p_word)::uuid $$;

create function public.search_word_keys(p_store uuid, p_words text) returns uuid[]
language sql immutable parallel safe set search_path = pg_catalog
as $$ select array(select md5(p_store::text || ' ' || w)::uuid from unnest(string_to_array(p_words, ' ')) w where w <> '') $$;

-- The title's words, split as every other search text is (runs of letters and digits).
create function public.search_title_words(p_title text) returns text[]
language sql immutable parallel safe set search_path = pg_catalog
as $$ select array(select distinct w from regexp_split_to_table(p_title, '[^0-9a-z\u0080-\U0010ffff]+') w where w <> '') $$;

-- Generated columns and the trigger below call these as the writer (the runtime role writes product_search
-- through its triggers); in public, as the runtime role has no use of the internal schema.
revoke all on function public.search_word_key(uuid, text) from public;
revoke all on function public.search_word_keys(uuid, text) from public;
revoke all on function public.search_title_words(text) from public;
grant execute on function public.search_word_key(uuid, text) to app_user;
grant execute on function public.search_word_keys(uuid, text) to app_user;
grant execute on function public.search_title_words(text) to app_user;

-- A word's id is its key, for the words there are and every word added.
alter table search_word no force row level security;
update search_word set id = public.search_word_key(store_id, word);
alter table search_word force row level security;

create function internal.search_word_keyed() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  new.id := public.search_word_key(new.store_id, new.word);
  return new;
end
$fn$;
revoke all on function internal.search_word_keyed() from public;
create trigger search_word_keyed before insert on search_word for each row execute function internal.search_word_keyed();
alter table search_word alter column id drop default;

alter table product_search
  add column word_keys uuid[] generated always as (public.search_word_keys(store_id, words)) stored,
  add column title_words text[] generated always as (public.search_title_words(title)) stored;
create index product_search_word_keys_idx on product_search using gin (word_keys);
select internal.allow_privileged_read('product_search', 'word_keys, title_words');

-- The session's store's products that have, for each of the query's p_word_count words, one of the store words
-- given for it (p_ids, each with its query word's number in p_groups and its similarity in p_sims): at most
-- 2,000 ids, best first (something can be bought; then the sum over the matched words of similarity x weight,
-- 3 in the title, 2 in a variant, SKU, vendor or collection, 1 in the description only; then the title).
-- Ids that are not this store's words are ignored; a query word none of whose store words is given matches
-- nothing. Planned per call (force_custom_plan) so the keys are conditions of the one GIN scan and the
-- conditions of the words not given fold away.
create function privileged.product_ids_with_words(p_ids uuid[], p_groups int[], p_sims real[], p_word_count int,
                                                  p_min_price bigint, p_max_price bigint, p_in_stock_only boolean)
returns setof uuid rows 100
language plpgsql stable security definer
set search_path = pg_catalog, public
set plan_cache_mode = force_custom_plan
as $fn$
declare
  v_store uuid := nullif(current_setting('app.store_id', true), '')::uuid;
  v_keys uuid[];
  v_words text[];
  v_groups int[];
  v_sims real[];
  k1 uuid[]; k2 uuid[]; k3 uuid[]; k4 uuid[]; k5 uuid[]; k6 uuid[];
begin
  if v_store is null or p_word_count not between 1 and 6 then return; end if;
  select array_agg(w.id order by q.o), array_agg(w.word order by q.o), array_agg(q.g order by q.o), array_agg(q.s order by q.o)
    into v_keys, v_words, v_groups, v_sims
    from unnest(p_ids, p_groups, p_sims) with ordinality q (id, g, s, o)
    join public.search_word w on w.store_id = v_store and w.id = q.id
   where q.g between 1 and p_word_count;
  if v_keys is null or exists (select 1 from generate_series(1, p_word_count) i where i <> all (v_groups)) then return; end if;
  k1 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 1);
  k2 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 2);
  k3 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 3);
  k4 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 4);
  k5 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 5);
  k6 := array(select v_keys[j] from generate_subscripts(v_keys, 1) j where v_groups[j] = 6);
  return query
  select s.product_id from public.product_search s
   cross join lateral (
     select sum(q.s * case when q.w = any (s.title_words) then 3 when q.w = any (string_to_array(s.extra, ' ')) then 2 else 1 end) as score
       from unnest(v_keys, v_words, v_sims) q (k, w, s) where q.k = any (s.word_keys)) r
   where s.word_keys && k1
     and (p_word_count < 2 or s.word_keys && k2)
     and (p_word_count < 3 or s.word_keys && k3)
     and (p_word_count < 4 or s.word_keys && k4)
     and (p_word_count < 5 or s.word_keys && k5)
     and (p_word_count < 6 or s.word_keys && k6)
     and s.store_id = v_store
     and s.from_price >= coalesce(p_min_price, 0) and s.from_price <= coalesce(p_max_price, 9223372036854775807)
     and (s.in_stock or not coalesce(p_in_stock_only, false))
   order by s.in_stock desc, r.score desc, s.title, s.product_id
   limit 2000;
end
$fn$;
alter function privileged.product_ids_with_words(uuid[], int[], real[], int, bigint, bigint, boolean) owner to app_privileged;
revoke all on function privileged.product_ids_with_words(uuid[], int[], real[], int, bigint, bigint, boolean) from public;
grant execute on function privileged.product_ids_with_words(uuid[], int[], real[], int, bigint, bigint, boolean) to app_user;
