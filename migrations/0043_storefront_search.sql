-- Storefront product search that finds (issue 23 item 5; docs/decisions/0035-storefront-search.md).
--
-- A shopper's words are matched by trigram word similarity (pg_trgm), so a typo still finds ("kurtha" finds
-- "Cotton Kurta"), in any order, every word against something of the product: its title, its variants'
-- titles and SKUs, its vendor, its description. pg_trgm's operators are not LEAKPROOF, so under row-level
-- security they run after the store's policy, as a filter on every row of the store, never as an index
-- condition (decision 0016). The index is therefore read by one SECURITY DEFINER function owned by
-- app_privileged, privileged.product_ids_matching, which names the store itself from the transaction's
-- app.store_id (the setting the policy reads: no store argument a caller could choose) and returns product
-- ids only, best first. What a page shows of them is read by the runtime role under RLS, by primary key.
--
--   product_search   one row per active product with a variant, lower-cased: its title; `extra`, the distinct
--                    words of its vendor, variants' titles and SKUs and published collections' titles; `words`,
--                    the distinct words of all of it and its description (each once: the index's recheck and
--                    the similarity read short text), under a GIN trigram index led by store_id (btree_gin);
--                    the lowest variant price and whether anything can be bought now (a pre-order variant, or
--                    stock over reservations at a location that sells online), for the filters and the ranking.
--
-- Kept by triggers, so every writer keeps it right (a staff edit, an import, checkout's reservations):
-- products and variants written replace their products' rows; stock rows added or removed, a stock row whose
-- "can sell" flips (on_hand over reserved, checked per row, so a reservation that does not sell a variant
-- out costs a comparison), a location that starts or stops selling online, a product put in or taken out of a
-- collection, a collection renamed, published or withdrawn: each refreshes the products it concerns.
-- One definition of a row, public.product_search_refresh, runs as the writer under RLS (it writes only rows
-- the writer may write, as the writer could itself).

create extension if not exists pg_trgm;
create extension if not exists btree_gin;

create table product_search (
  store_id uuid not null references store (id) on delete cascade,
  product_id uuid not null,
  title text not null,
  extra text not null,
  words text not null,
  from_price bigint not null,
  in_stock boolean not null,
  primary key (store_id, product_id),
  foreign key (store_id, product_id) references product (store_id, id) on delete cascade
);
create index product_search_words_idx on product_search using gin (store_id, words gin_trgm_ops);

create function public.product_search_refresh(p_store uuid, p_products uuid[]) returns void
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
        from_price = excluded.from_price, in_stock = excluded.in_stock;
$fn$;
revoke all on function public.product_search_refresh(uuid, uuid[]) from public;
grant execute on function public.product_search_refresh(uuid, uuid[]) to app_user;

-- Products and variants: per statement (one pass for a bulk load).
create function internal.product_search_products_written() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  perform public.product_search_refresh(n.store_id, array_agg(n.id)) from new_rows n group by n.store_id;
  return null;
end
$fn$;

-- Rows that name a product (variants, a collection's products) written, per statement.
create function internal.product_search_product_rows() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'DELETE' then
    perform public.product_search_refresh(o.store_id, array_agg(distinct o.product_id)) from old_rows o group by o.store_id;
  else
    perform public.product_search_refresh(n.store_id, array_agg(distinct n.product_id)) from new_rows n group by n.store_id;
  end if;
  return null;
end
$fn$;

-- Stock rows added or removed (per statement), one whose "can sell" flips (per row, guarded by the trigger's
-- WHEN), a location that starts or stops selling online (per row, guarded).
create function internal.product_search_stock_rows() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'DELETE' then
    perform public.product_search_refresh(v.store_id, array_agg(distinct v.product_id))
       from old_rows o join product_variant v on v.store_id = o.store_id and v.id = o.variant_id group by v.store_id;
  else
    perform public.product_search_refresh(v.store_id, array_agg(distinct v.product_id))
       from new_rows n join product_variant v on v.store_id = n.store_id and v.id = n.variant_id group by v.store_id;
  end if;
  return null;
end
$fn$;

create function internal.product_search_stock_flipped() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  perform public.product_search_refresh(new.store_id, array[v.product_id])
     from product_variant v where v.store_id = new.store_id and v.id = new.variant_id;
  return null;
end
$fn$;

create function internal.product_search_location_flipped() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  perform public.product_search_refresh(new.store_id, array_agg(distinct v.product_id))
     from inventory_level il join product_variant v on v.store_id = il.store_id and v.id = il.variant_id
    where il.store_id = new.store_id and il.location_id = new.id
   having count(*) > 0;
  return null;
end
$fn$;

-- A product put in or taken out of a collection (per statement: product_search_product_rows, as for
-- variants); a collection renamed, published or withdrawn (per row, guarded): its title is a searched word
-- of its products while it is published.
create function internal.product_search_collection_changed() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  perform public.product_search_refresh(new.store_id, array_agg(cp.product_id))
     from collection_product cp where cp.store_id = new.store_id and cp.collection_id = new.id
   having count(*) > 0;
  return null;
end
$fn$;

revoke all on function internal.product_search_products_written() from public;
revoke all on function internal.product_search_collection_changed() from public;
revoke all on function internal.product_search_product_rows() from public;
revoke all on function internal.product_search_stock_rows() from public;
revoke all on function internal.product_search_stock_flipped() from public;
revoke all on function internal.product_search_location_flipped() from public;

select internal.make_tenant_table('product_search');
select internal.allow_privileged_read('product_search', 'store_id, product_id, title, extra, words, from_price, in_stock');

-- Existing products (as in 0030: forcing is lifted for the owner's backfill inside this transaction).
alter table product no force row level security;
alter table product_variant no force row level security;
alter table inventory_level no force row level security;
alter table location no force row level security;
alter table collection no force row level security;
alter table collection_product no force row level security;
alter table product_search no force row level security;
select public.product_search_refresh(store_id, array_agg(id)) from product where status = 'active' group by store_id;
alter table product force row level security;
alter table product_variant force row level security;
alter table inventory_level force row level security;
alter table location force row level security;
alter table collection force row level security;
alter table collection_product force row level security;
alter table product_search force row level security;

create trigger product_search_insert after insert on product referencing new table as new_rows
  for each statement execute function internal.product_search_products_written();
create trigger product_search_update after update on product referencing new table as new_rows
  for each statement execute function internal.product_search_products_written();
create trigger product_search_insert after insert on product_variant referencing new table as new_rows
  for each statement execute function internal.product_search_product_rows();
create trigger product_search_update after update on product_variant referencing new table as new_rows
  for each statement execute function internal.product_search_product_rows();
create trigger product_search_delete after delete on product_variant referencing old table as old_rows
  for each statement execute function internal.product_search_product_rows();
create trigger product_search_insert after insert on inventory_level referencing new table as new_rows
  for each statement execute function internal.product_search_stock_rows();
create trigger product_search_delete after delete on inventory_level referencing old table as old_rows
  for each statement execute function internal.product_search_stock_rows();
create trigger product_search_flip after update of on_hand, reserved on inventory_level
  for each row when ((old.on_hand > old.reserved) is distinct from (new.on_hand > new.reserved))
  execute function internal.product_search_stock_flipped();
create trigger product_search_insert after insert on collection_product referencing new table as new_rows
  for each statement execute function internal.product_search_product_rows();
create trigger product_search_delete after delete on collection_product referencing old table as old_rows
  for each statement execute function internal.product_search_product_rows();
create trigger product_search_change after update of title, published on collection
  for each row when (old.title is distinct from new.title or old.published is distinct from new.published)
  execute function internal.product_search_collection_changed();
create trigger product_search_flip after update of sells_online on location
  for each row when (old.sells_online is distinct from new.sells_online)
  execute function internal.product_search_location_flipped();

-- The ids of the session's store's products with something like every word (pg_trgm word similarity at least
-- 0.5: "kurtha" is 0.57 of "kurta"), within the price bounds (the lowest variant price), only what can be
-- bought when asked; best first: what can be bought, then the words' similarity (to the title three times, to
-- a variant, SKU, vendor or collection twice; a word found only in the description adds nothing more), then the
-- title. At most 2,000. The store is app.store_id, the setting row-level security reads: through this function
-- a caller sees exactly the store its policy shows it.
create function privileged.product_ids_matching(p_words text[], p_min_price bigint, p_max_price bigint, p_in_stock_only boolean)
returns setof uuid
language plpgsql stable security definer
set search_path = pg_catalog, public
set pg_trgm.word_similarity_threshold = 0.5
set plan_cache_mode = force_custom_plan
as $fn$
begin
  -- Planned for its words each time (force_custom_plan): a generic plan cannot see the words' trigrams and
  -- reads the store's rows by primary key instead of the trigram index; a custom one folds away the
  -- conditions of the words not given, so every word given is a condition of the one index scan.
  return query
  select s.product_id from public.product_search s
   where s.store_id = nullif(current_setting('app.store_id', true), '')::uuid
     and cardinality(p_words) between 1 and 6
     and s.words operator(public.%>) p_words[1]
     and (cardinality(p_words) < 2 or s.words operator(public.%>) p_words[2])
     and (cardinality(p_words) < 3 or s.words operator(public.%>) p_words[3])
     and (cardinality(p_words) < 4 or s.words operator(public.%>) p_words[4])
     and (cardinality(p_words) < 5 or s.words operator(public.%>) p_words[5])
     and (cardinality(p_words) < 6 or s.words operator(public.%>) p_words[6])
     and s.from_price >= coalesce(p_min_price, 0) and s.from_price <= coalesce(p_max_price, 9223372036854775807)
     and (s.in_stock or not coalesce(p_in_stock_only, false))
   order by s.in_stock desc,
            (select sum(greatest(3 * public.word_similarity(w, s.title), 2 * public.word_similarity(w, s.extra))) from unnest(p_words) w) desc,
            s.title, s.product_id
   limit 2000;
end
$fn$;
alter function privileged.product_ids_matching(text[], bigint, bigint, boolean) owner to app_privileged;
revoke all on function privileged.product_ids_matching(text[], bigint, bigint, boolean) from public;
grant execute on function privileged.product_ids_matching(text[], bigint, bigint, boolean) to app_user;
