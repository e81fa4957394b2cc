-- Product media (issue 23 item 1; docs/media.md, decision 0034): a product's images, in order, each with its
-- alt text. The files live in R2 (the MEDIA binding) under <store_id>/<hash>/<width>.webp|jpg: the row names
-- the content hash and the widths the upload was resized to, never a URL. The same photo on two products of a
-- store is one set of objects and two rows; the objects go when the last row naming the hash goes.
create table product_media (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  product_id uuid not null,
  position integer not null default 0 check (position >= 0),
  alt text not null check (length(btrim(alt)) between 1 and 500),
  -- SHA-256 of the uploaded bytes, lower-case hex.
  hash text not null check (hash ~ '^[0-9a-f]{64}$'),
  original_type text not null check (original_type in ('image/jpeg', 'image/png', 'image/webp', 'image/avif')),
  original_bytes integer not null check (original_bytes between 1 and 10485760),
  width integer not null check (width between 1 and 10000),
  height integer not null check (height between 1 and 10000),
  -- The served widths, ascending (never wider than the original; at most 1920).
  widths integer[] not null check (cardinality(widths) between 1 and 6 and 0 < all (widths) and 1920 >= all (widths)),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, product_id, id),
  unique (store_id, product_id, hash),
  foreign key (store_id, product_id) references product (store_id, id) on delete cascade
);
create index product_media_product_idx on product_media (store_id, product_id, position, id);
create index product_media_hash_idx on product_media (store_id, hash);
select internal.make_tenant_table('product_media');
create trigger touch_storefront after insert or update or delete on product_media
  for each row execute function internal.touch_storefront();

-- The image a variant shows (one per variant), always one of its own product's: removing the image clears it.
alter table product_variant add column media_id uuid;
alter table product_variant add constraint product_variant_media_fkey
  foreign key (store_id, product_id, media_id) references product_media (store_id, product_id, id) on delete set null (media_id);
create index product_variant_media_idx on product_variant (store_id, media_id) where media_id is not null;
