-- Foundation: roles, the first tables, tenancy by row-level security, and the privileged id lookups.
-- Runs as the owner role (the role that owns every object here). See docs/database.md.

-- Roles ------------------------------------------------------------------------------------------------
-- app_user: what the Workers connect as. Owns nothing, no BYPASSRLS. Locally the stack creates it with a
--   password; on Neon create it with SQL (README, "Deploy") so it is not a member of neon_superuser.
-- app_privileged: NOLOGIN. Owns the SECURITY DEFINER id lookups and may only read the id columns they need.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'app_user') then
    create role app_user nologin;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'app_privileged') then
    create role app_privileged nologin;
  end if;
  if (select rolbypassrls or rolsuper from pg_roles where rolname = 'app_user') then
    raise exception 'app_user must not have BYPASSRLS or SUPERUSER: tenancy depends on it';
  end if;
end
$$;

-- The owner must be able to hand function ownership to app_privileged.
grant app_privileged to current_user;

grant usage on schema public to app_user, app_privileged;

create schema if not exists privileged;
revoke all on schema privileged from public;
grant usage on schema privileged to app_user;
grant usage, create on schema privileged to app_privileged;

create schema if not exists internal;
revoke all on schema internal from public;

-- Tenancy helpers (owner-only, used by migrations) -----------------------------------------------------
-- Every table with a store_id column goes through internal.make_tenant_table: RLS enabled and forced,
-- one policy keyed on the transaction-local setting app.store_id. With no store set the predicate is
-- null, so reads return zero rows and writes fail. test/tenancy.test.ts checks every such table.
create or replace function internal.make_tenant_table(tbl regclass) returns void
language plpgsql as $fn$
begin
  execute format('alter table %s enable row level security', tbl);
  execute format('alter table %s force row level security', tbl);
  execute format('drop policy if exists tenant_isolation on %s', tbl);
  execute format(
    'create policy tenant_isolation on %s '
    'using (store_id = nullif(current_setting(''app.store_id'', true), '''')::uuid) '
    'with check (store_id = nullif(current_setting(''app.store_id'', true), '''')::uuid)', tbl);
  execute format('grant select, insert, update, delete on %s to app_user', tbl);
end
$fn$;

-- Lets the id-lookup functions (owned by app_privileged) read the named columns of every store's rows.
create or replace function internal.allow_privileged_read(tbl regclass, cols text) returns void
language plpgsql as $fn$
begin
  execute format('grant select (%s) on %s to app_privileged', cols, tbl);
  execute format('drop policy if exists privileged_lookup on %s', tbl);
  execute format('create policy privileged_lookup on %s for select to app_privileged using (true)', tbl);
end
$fn$;

revoke all on function internal.make_tenant_table(regclass) from public;
revoke all on function internal.allow_privileged_read(regclass, text) from public;

-- Stores ------------------------------------------------------------------------------------------------
create table store (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique
    check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'),
  name text not null check (length(btrim(name)) between 1 and 200),
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  storefront_password_hash text,
  -- Settings -> MCP & API (SPEC "Store settings that affect MCP"); safe defaults: nothing extra is exposed.
  mcp_read_customer_details boolean not null default false,
  mcp_allow_changes boolean not null default false,
  mcp_changes_need_approval boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The store row is the tenant itself: its key is id, not store_id, so it gets its own policy.
alter table store enable row level security;
alter table store force row level security;
create policy tenant_isolation on store
  using (id = nullif(current_setting('app.store_id', true), '')::uuid)
  with check (id = nullif(current_setting('app.store_id', true), '')::uuid);
grant select, insert, update on store to app_user;
select internal.allow_privileged_read('store', 'id, slug');

-- People (not store-scoped) ---------------------------------------------------------------------------
create table user_account (
  id uuid primary key default gen_random_uuid(),
  email text not null check (position('@' in email) > 1 and length(email) <= 320),
  name text,
  password_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index user_account_email_key on user_account (lower(email));
grant select, insert, update on user_account to app_user;

create table member (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  user_id uuid not null references user_account (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'staff')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, user_id)
);
create index member_user_idx on member (user_id);
select internal.make_tenant_table('member');

-- A session belongs to a person; the active store is chosen inside it (the admin issue fills this in).
create table session (
  id_hash text primary key check (id_hash ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references user_account (id) on delete cascade,
  active_store_id uuid references store (id) on delete set null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  user_agent text,
  ip text
);
create index session_user_idx on session (user_id);
create index session_expires_idx on session (expires_at);
grant select, insert, update, delete on session to app_user;

-- Domains ----------------------------------------------------------------------------------------------
create table store_domain (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  hostname text not null unique
    check (hostname = lower(hostname) and hostname ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$'
           and length(hostname) <= 253),
  status text not null default 'pending' check (status in ('pending', 'verified')),
  is_primary boolean not null default false,
  verified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index store_domain_store_idx on store_domain (store_id);
create unique index store_domain_one_primary on store_domain (store_id) where is_primary;
select internal.make_tenant_table('store_domain');
select internal.allow_privileged_read('store_domain', 'store_id, hostname, status');

-- Outbox (SPEC rule 5) ---------------------------------------------------------------------------------
create table outbox_event (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  kind text not null check (kind ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$'),
  payload jsonb not null default '{}'::jsonb check (jsonb_typeof(payload) = 'object'),
  created_at timestamptz not null default now(),
  available_at timestamptz not null default now(),
  processed_at timestamptz,
  attempts integer not null default 0 check (attempts >= 0),
  last_error text
);
create index outbox_event_pending_idx on outbox_event (store_id, available_at) where processed_at is null;
create index outbox_event_due_idx on outbox_event (available_at) where processed_at is null;
select internal.make_tenant_table('outbox_event');
select internal.allow_privileged_read('outbox_event', 'store_id, available_at, processed_at');

-- Privileged id lookups (SPEC rule 3) -------------------------------------------------------------------
-- The only code that crosses stores. Each returns ids and nothing else; listed in shared/db/privileged.ts.
create function privileged.store_id_by_slug(p_slug text) returns uuid
language sql stable security definer set search_path = pg_catalog, public
as $$ select id from public.store where slug = lower(p_slug) $$;

create function privileged.store_id_by_hostname(p_hostname text) returns uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.store_domain
  where hostname = lower(rtrim(p_hostname, '.')) and status = 'verified'
$$;

create function privileged.store_ids_with_pending_outbox(p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select distinct store_id from public.outbox_event
  where processed_at is null and available_at <= now()
  limit greatest(1, least(p_limit, 5000))
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_id_by_slug(text)'::regprocedure,
    'privileged.store_id_by_hostname(text)'::regprocedure,
    'privileged.store_ids_with_pending_outbox(integer)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
