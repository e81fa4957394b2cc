-- Storefront search bounded by the page, not the matches (issue 23 item 5; decision 0035, its amendment).
--
-- Migration 0043 matched a shopper's words against every product row with pg_trgm, through one SECURITY
-- DEFINER function: each candidate was rechecked and scored, so a word a tenth of a large catalogue shares
-- ("kurta" in 3,327 of 50,000 products) cost 40-60 ms. Here the trigram matching moves to the store's
-- vocabulary (its distinct words, a few thousand to tens of thousands, each a short row), and the products
-- are read from postings, one row per (word, product), kept in the ranking's order, by equalities only
-- (texteq, booleq and uuid_eq are LEAKPROOF: index conditions for the runtime role under row-level security).
--
--   search_word      the distinct words of the store's searchable products (product_search.words) with how
--                    many products have each; a GIN trigram index led by store_id. Its id is what the one
--                    privileged function returns (ids only, the rule of the privileged schema).
--   search_posting   (store_id, word, product_id): whether the product can be bought now, the field the word
--                    is in (3 title, 2 variant/SKU/vendor/collection, 1 description only), its lower-cased
--                    title and lowest price; indexed in the ranking's order (store_id, word, buyable desc,
--                    weight desc, title, product_id), so a page of one word reads its entries and stops.
--
-- Both are kept from product_search by statement-level triggers on it (its rows are kept by 0043's triggers on
-- products, variants, stock, locations and collections): a row written replaces its product's postings (only
-- those that changed), and the vocabulary counts move by the words a product gained or lost, in one upsert
-- ordered by word (concurrent writers lock the word rows in one order), a word deleted when its count reaches
-- zero (re-checked on the locked row, so a concurrent writer adding the word keeps it).

drop function privileged.product_ids_matching(text[], bigint, bigint, boolean);
drop index product_search_words_idx;

create table search_word (
  store_id uuid not null references store (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  word text not null,
  products int not null,
  primary key (store_id, id),
  unique (store_id, word)
);
create index search_word_trgm_idx on search_word using gin (store_id, word gin_trgm_ops);
create index search_word_unused_idx on search_word (store_id) where products <= 0;

create table search_posting (
  store_id uuid not null references store (id) on delete cascade,
  word text not null,
  product_id uuid not null,
  buyable boolean not null,
  weight smallint not null check (weight between 1 and 3),
  title text not null,
  from_price bigint not null,
  primary key (store_id, word, product_id)
);
create index search_posting_rank_idx on search_posting (store_id, word, buyable desc, weight desc, title, product_id) include (from_price);

select internal.make_tenant_table('search_word');
select internal.make_tenant_table('search_posting');
select internal.allow_privileged_read('search_word', 'store_id, id, word, products');

-- An unchanged row is not rewritten (its postings stay as they are): 0043's refresh, with that guard.
create or replace function public.product_search_refresh(p_store uuid, p_products uuid[]) returns void
language sql volatile set search_path = pg_catalog, public as $fn$
  delete from public.product_search s
   where s.store_id = p_store and s.product_id = any (p_products)
     and not exists (select 1 from public.product p join public.product_variant v on v.store_id = p.store_id and v.product_id = p.id
                      where p.store_id = p_store and p.id = s.product_id and p.status = 'active');
  insert into public.product_search (store_id, product_id, title, extra, words, from_price, in_stock)
  select p.store_id, p.id, lower(p.title), x.extra,
         coalesce((select string_agg(distinct w, ' ')
                     from regexp_split_to_table(lower(p.title || ' ' || x.extra || ' ' || p.description), '[^0-9a-z\u0080-\U0010ffff]+') w
                    where w <> ''), ''),
         f.from_price,
         exists (select 1 from public.product_variant v
                  where v.store_id = p.store_id and v.product_id = p.id
                    and (v.preorder or exists (select 1 from public.inventory_level il
                                                 join public.location l on l.store_id = il.store_id and l.id = il.location_id and l.sells_online
                                                where il.store_id = v.store_id and il.variant_id = v.id and il.on_hand > il.reserved)))
    from public.product p
    cross join lateral (select min(v.price_minor) as from_price from public.product_variant v where v.store_id = p.store_id and v.product_id = p.id) f
    cross join lateral (
      select coalesce(string_agg(distinct w, ' '), '') as extra
        from regexp_split_to_table(lower(concat_ws(' ', p.vendor,
               (select string_agg(concat_ws(' ', v.title, v.sku), ' ')
                  from public.product_variant v where v.store_id = p.store_id and v.product_id = p.id),
               (select string_agg(c.title, ' ')
                  from public.collection_product cp join public.collection c on c.store_id = cp.store_id and c.id = cp.collection_id and c.published
                 where cp.store_id = p.store_id and cp.product_id = p.id))), '[^0-9a-z\u0080-\U0010ffff]+') w
       where w <> '') x
   where p.store_id = p_store and p.id = any (p_products) and p.status = 'active' and f.from_price is not null
  on conflict (store_id, product_id) do update
    set title = excluded.title, extra = excluded.extra, words = excluded.words,
        from_price = excluded.from_price, in_stock = excluded.in_stock
    where (product_search.title, product_search.extra, product_search.words, product_search.from_price, product_search.in_stock)
          is distinct from (excluded.title, excluded.extra, excluded.words, excluded.from_price, excluded.in_stock);
$fn$;

-- product_search rows written (inserted, updated or deleted, per statement): their postings and the vocabulary.
create function internal.search_postings_written() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
declare
  was public.product_search[] := '{}';
  has public.product_search[] := '{}';
begin
  if tg_op <> 'INSERT' then was := array(select o from old_rows o); end if;
  if tg_op <> 'DELETE' then has := array(select n from new_rows n); end if;

  -- Postings of the words a product no longer has.
  delete from search_posting p
   using (select o.store_id, o.product_id, w.word from unnest(was) o cross join lateral unnest(string_to_array(o.words, ' ')) w(word)
          except
          select n.store_id, n.product_id, w.word from unnest(has) n cross join lateral unnest(string_to_array(n.words, ' ')) w(word)) g
   where p.store_id = g.store_id and p.word = g.word and p.product_id = g.product_id;

  -- Its postings now, each word weighted by the best field it is in (only those that changed are written).
  insert into search_posting (store_id, word, product_id, buyable, weight, title, from_price)
  select n.store_id, w.word, n.product_id, n.in_stock,
         case when w.word = any (t.words) then 3 when w.word = any (x.words) then 2 else 1 end,
         n.title, n.from_price
    from unnest(has) n
    cross join lateral (select array(select regexp_split_to_table(n.title, '[^0-9a-z\u0080-\U0010ffff]+')) as words) t
    cross join lateral (select string_to_array(n.extra, ' ') as words) x
    cross join lateral unnest(string_to_array(n.words, ' ')) w(word)
   where w.word <> ''
  on conflict (store_id, word, product_id) do update
    set buyable = excluded.buyable, weight = excluded.weight, title = excluded.title, from_price = excluded.from_price
    where (search_posting.buyable, search_posting.weight, search_posting.title, search_posting.from_price)
          is distinct from (excluded.buyable, excluded.weight, excluded.title, excluded.from_price);

  -- The vocabulary: each word's count moves by the products that gained it less those that lost it, in word order.
  insert into search_word (store_id, word, products)
  select d.store_id, d.word, sum(d.delta)::int
    from (select s.store_id, s.word, 1 as delta
            from (select n.store_id, n.product_id, w.word from unnest(has) n cross join lateral unnest(string_to_array(n.words, ' ')) w(word)
                  except
                  select o.store_id, o.product_id, w.word from unnest(was) o cross join lateral unnest(string_to_array(o.words, ' ')) w(word)) s
          union all
          select s.store_id, s.word, -1
            from (select o.store_id, o.product_id, w.word from unnest(was) o cross join lateral unnest(string_to_array(o.words, ' ')) w(word)
                  except
                  select n.store_id, n.product_id, w.word from unnest(has) n cross join lateral unnest(string_to_array(n.words, ' ')) w(word)) s) d
   where d.word <> ''
   group by d.store_id, d.word
  having sum(d.delta) <> 0
   order by d.store_id, d.word
  on conflict (store_id, word) do update set products = search_word.products + excluded.products;

  -- Words no product has any more (checked again on the locked row: a writer that just added one keeps it).
  if tg_op <> 'INSERT' then
    delete from search_word w where w.store_id in (select distinct o.store_id from unnest(was) o) and w.products <= 0;
  end if;
  return null;
end
$fn$;
revoke all on function internal.search_postings_written() from public;

-- Existing rows (forcing lifted for the owner's backfill inside this transaction, as in 0043): their postings
-- (an update that changes no words adds none to the vocabulary), then the vocabulary counted from them.
alter table product_search no force row level security;
alter table search_word no force row level security;
alter table search_posting no force row level security;
create trigger search_postings_rebuild after update on product_search referencing old table as old_rows new table as new_rows
  for each statement execute function internal.search_postings_written();
update product_search set words = words;
drop trigger search_postings_rebuild on product_search;
insert into search_word (store_id, word, products) select store_id, word, count(*) from search_posting group by store_id, word;
alter table product_search force row level security;
alter table search_word force row level security;
alter table search_posting force row level security;

create trigger search_postings_insert after insert on product_search referencing new table as new_rows
  for each statement execute function internal.search_postings_written();
create trigger search_postings_update after update on product_search referencing old table as old_rows new table as new_rows
  for each statement execute function internal.search_postings_written();
create trigger search_postings_delete after delete on product_search referencing old table as old_rows
  for each statement execute function internal.search_postings_written();

-- The ids of the session's store's words like a shopper's word (pg_trgm word similarity at least 0.5: "kurtha"
-- is 0.57 of "kurta", "kur" 0.75), the most similar first, at most 24. The store is app.store_id, the setting
-- row-level security reads: through this function a caller sees exactly the store its policy shows it. In
-- plpgsql with custom plans: the word's trigrams are a condition of the GIN index scan.
create function privileged.search_word_ids_like(p_word text)
returns setof uuid rows 8
language plpgsql stable security definer
set search_path = pg_catalog, public
set pg_trgm.word_similarity_threshold = 0.5
set plan_cache_mode = force_custom_plan
as $fn$
begin
  return query
  select w.id from public.search_word w
   where w.store_id = nullif(current_setting('app.store_id', true), '')::uuid
     and w.word operator(public.%>) p_word and w.products > 0
   order by public.word_similarity(p_word, w.word) desc, w.word
   limit 24;
end
$fn$;
alter function privileged.search_word_ids_like(text) owner to app_privileged;
revoke all on function privileged.search_word_ids_like(text) from public;
grant execute on function privileged.search_word_ids_like(text) to app_user;
