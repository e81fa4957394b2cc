-- Collections and the navigation menu (issue 23 item 3; docs/collections.md). A collection is a merchant's
-- own ordered list of products at /collections/<handle>, shown to shoppers only while published (and then
-- only its active products). The menu is the store's one navigation menu, shown in the storefront's header:
-- ordered items, each a collection, a content page or a link, with a label. Both change what the storefront
-- shows, so their writes bump the store's catalogue version (migration 0008's trigger), whoever the writer is.
-- A collection's image waits for product media (issue 23 item 1): no column yet.

create table collection (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  title text not null check (length(btrim(title)) between 1 and 255),
  handle text not null check (handle ~ '^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$'),
  description text not null default '' check (length(description) <= 20000),
  published boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, handle)
);
create index collection_store_updated_idx on collection (store_id, updated_at desc, id);
select internal.make_tenant_table('collection');

-- A collection's products in the merchant's order (position 0 first). Both ends belong to the row's own
-- store: the composite keys make another store's product impossible, whatever the writer.
create table collection_product (
  store_id uuid not null references store (id) on delete cascade,
  collection_id uuid not null,
  product_id uuid not null,
  position integer not null check (position between 0 and 9999),
  primary key (store_id, collection_id, product_id),
  unique (store_id, collection_id, position),
  foreign key (store_id, collection_id) references collection (store_id, id) on delete cascade,
  foreign key (store_id, product_id) references product (store_id, id) on delete cascade
);
create index collection_product_product_idx on collection_product (store_id, product_id);
select internal.make_tenant_table('collection_product');

-- A menu item names a page of its own store the same way.
alter table page add constraint page_store_id_id_key unique (store_id, id);

-- The store's menu, in position order. A link is https, or a path of the store's own site: never javascript:,
-- data:, http: or a protocol-relative //host (browsers also read /\host so), no spaces or control characters
-- (shared/storefront/menu.ts refuses the same at the door, with the field and the reason).
create table menu_item (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  position integer not null check (position between 0 and 99),
  label text not null check (length(btrim(label)) between 1 and 60),
  kind text not null check (kind in ('collection', 'page', 'link')),
  collection_id uuid,
  page_id uuid,
  url text check (
    length(url) between 1 and 2000
    and url !~ '[[:space:][:cntrl:]]'
    and position(chr(92) in url) = 0
    and (url ~ '^https://[^/?#]+' or (url like '/%' and url not like '//%'))
  ),
  created_at timestamptz not null default now(),
  check ((kind = 'collection') = (collection_id is not null)),
  check ((kind = 'page') = (page_id is not null)),
  check ((kind = 'link') = (url is not null)),
  unique (store_id, position),
  foreign key (store_id, collection_id) references collection (store_id, id) on delete cascade,
  foreign key (store_id, page_id) references page (store_id, id) on delete cascade
);
select internal.make_tenant_table('menu_item');

do $do$
declare
  tbl text;
begin
  foreach tbl in array array['collection', 'collection_product', 'menu_item'] loop
    execute format(
      'create trigger touch_storefront after insert or update or delete on %I for each row execute function internal.touch_storefront()',
      tbl);
  end loop;
end
$do$;
