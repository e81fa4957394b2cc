-- The storefront's catalogue version (issue 10 part 7; ARCHITECTURE §13). Anonymous catalogue pages are
-- cached at the edge under a key that holds this number, so any change to what those pages show (products,
-- variants and prices, stock, locations that sell online, content pages, domains, the store's name,
-- currency or password) bumps it in the same transaction: triggers do it, whoever the writer is.
--
-- A transaction bumps a store's version once, however many rows it touches: the trigger records the store
-- in the transaction-local setting app.storefront_changed and skips later rows. The unit of work reads that
-- setting in its COMMIT message and, when set, pushes the store's new facts to the HOSTS KV namespace after
-- the commit (shared/db/with-store.ts), so the next request renders afresh.
create table storefront_version (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null unique references store (id) on delete cascade,
  version bigint not null default 1 check (version > 0),
  changed_at timestamptz not null default now()
);
select internal.make_tenant_table('storefront_version');

-- A separate row rather than a column of store, so catalogue writers never lock the store row. A store's
-- row is made by its first change (inside the store's own transaction, as RLS wants); until then the
-- storefront reads version 0.

create or replace function internal.touch_storefront() returns trigger
language plpgsql set search_path = public as $fn$
declare
  sid uuid;
begin
  if tg_table_name = 'store' then
    sid := new.id;
  elsif tg_op = 'DELETE' then
    sid := old.store_id;
  else
    sid := new.store_id;
  end if;
  if current_setting('app.storefront_changed', true) = sid::text then
    return null;
  end if;
  if tg_op = 'DELETE' then
    -- A delete may be the cascade of the store's own deletion: never insert for a store that is going.
    update storefront_version set version = version + 1, changed_at = now() where store_id = sid;
  else
    insert into storefront_version as v (store_id) values (sid)
      on conflict (store_id) do update set version = v.version + 1, changed_at = now();
  end if;
  perform set_config('app.storefront_changed', sid::text, true);
  return null;
end
$fn$;
-- Fired by the trigger mechanism, which needs no EXECUTE grant: nobody can call it directly.
revoke all on function internal.touch_storefront() from public;

do $do$
declare
  tbl text;
begin
  foreach tbl in array array['product', 'product_variant', 'location', 'inventory_level', 'page', 'store_domain'] loop
    execute format(
      'create trigger touch_storefront after insert or update or delete on %I for each row execute function internal.touch_storefront()',
      tbl);
  end loop;
end
$do$;

-- The store row: only the columns the storefront shows or gates on (settings such as the MCP switches
-- do not touch the shopper's pages).
create trigger touch_storefront after update of name, currency, storefront_password_hash on store
  for each row execute function internal.touch_storefront();
