-- Short links and page views (issue 10 part 5). A short link `/l/<slug>` counts its clicks and redirects
-- to its target with its UTM tags; the storefront's page beacon records page views and credits the
-- link whose id is in the shopper's `wc_lk` cookie, when that link exists in the same store.
create table short_link (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  slug text not null check (slug ~ '^[a-z0-9-]{1,64}$'),
  -- An absolute http(s) URL, or a path on the store's own host starting with a single '/'.
  target text not null check (
    length(target) <= 2048
    and (target ~ '^https?://[^/?#\s]+([/?#]\S*)?$' or target ~ '^/([^/\\\s]\S*)?$')
  ),
  utm_source text not null check (length(utm_source) between 1 and 200),
  utm_medium text not null check (length(utm_medium) between 1 and 200),
  utm_campaign text not null check (length(utm_campaign) between 1 and 200),
  utm_term text check (length(utm_term) between 1 and 200),
  utm_content text check (length(utm_content) between 1 and 200),
  clicks bigint not null default 0 check (clicks >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, slug),
  unique (store_id, id)
);
select internal.make_tenant_table('short_link');

create table page_view (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  path text not null check (path ~ '^/' and length(path) <= 2048),
  link_id uuid,
  viewed_at timestamptz not null default now(),
  -- Deleting a link keeps its views, uncredited: only link_id is nulled (PostgreSQL 15+ column list).
  foreign key (store_id, link_id) references short_link (store_id, id) on delete set null (link_id)
);
create index page_view_link_idx on page_view (store_id, link_id);
select internal.make_tenant_table('page_view');
