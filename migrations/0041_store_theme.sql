-- The store's own look (issue 23 item 2; docs/storefront-theme.md): one row per store with the draft the
-- merchant edits on Settings -> Storefront and the copy the storefront shows, both the whole theme as JSON
-- (shared/storefront/theme.ts themeSchema checks every write at the door). The published copy is what the
-- storefront's facts carry (shared/db/statements.ts STOREFRONT_FACTS), so publishing bumps the catalogue
-- version (migration 0008) and the edge cache never serves the old look; saving a draft bumps nothing.
create table store_theme (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null unique references store (id) on delete cascade,
  draft jsonb not null check (jsonb_typeof(draft) = 'object'),
  published jsonb check (jsonb_typeof(published) = 'object'),
  published_at timestamptz,
  updated_at timestamptz not null default now(),
  check ((published is null) = (published_at is null))
);
select internal.make_tenant_table('store_theme');

-- Only a change to the published copy changes what shoppers see.
create trigger touch_storefront after insert on store_theme
  for each row when (new.published is not null) execute function internal.touch_storefront();
create trigger touch_storefront_published after update of published on store_theme
  for each row when (old.published is distinct from new.published) execute function internal.touch_storefront();
