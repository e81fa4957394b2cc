-- API grants (script tokens now, OAuth connections next) and the API activity log.
-- SPEC "api_grant", "api_activity"; ARCHITECTURE §4, §6. Postgres is the authority on every grant.

-- A grant acts for one member of its store: the reference is composite, so it can never name a member
-- of another store, and removing the member ends the grant.
alter table member add constraint member_store_id_id_key unique (store_id, id);

create table api_grant (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  kind text not null check (kind in ('oauth', 'token')),
  member_id uuid not null,
  name text not null check (length(btrim(name)) between 1 and 100),
  -- Each entry is '<area>:read' or '<area>:write' (write implies read); at least one.
  areas text[] not null check (
    cardinality(areas) between 1 and 7
    and areas <@ array[
      'products:read', 'products:write', 'orders:read', 'orders:write', 'customers:read', 'customers:write',
      'inventory:read', 'inventory:write', 'discounts:read', 'discounts:write', 'content:read', 'content:write',
      'analytics:read', 'analytics:write']::text[]
  ),
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  -- token grants: SHA-256 (hex) of the whole secret, and its last 4 characters to tell tokens apart.
  secret_hash text unique check (secret_hash ~ '^[0-9a-f]{64}$'),
  secret_hint text check (length(secret_hint) = 4),
  -- oauth grants: the client that was approved (provider's client id and name at consent time).
  client_id text check (length(client_id) <= 200),
  client_name text check (length(client_name) <= 200),
  unique (store_id, id),
  foreign key (store_id, member_id) references member (store_id, id) on delete cascade,
  check ((kind = 'token') = (secret_hash is not null and secret_hint is not null)),
  check (expires_at is null or expires_at > created_at)
);
create index api_grant_member_idx on api_grant (store_id, member_id, created_at desc);
select internal.make_tenant_table('api_grant');
select internal.allow_privileged_read('api_grant', 'id, store_id, secret_hash');

-- One row per successful change call; read calls folded per grant, procedure and 10-minute bucket.
create table api_activity (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  grant_id uuid not null,
  procedure text not null check (procedure ~ '^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$'),
  kind text not null check (kind in ('read', 'write')),
  via text not null check (via in ('token', 'mcp')),
  -- reads: the start of the 10-minute bucket; writes: the time of the call.
  bucket_start timestamptz not null,
  count integer not null default 1 check (count >= 1),
  last_at timestamptz not null default now(),
  foreign key (store_id, grant_id) references api_grant (store_id, id) on delete cascade
);
create unique index api_activity_read_bucket on api_activity (store_id, grant_id, procedure, via, bucket_start) where kind = 'read';
create index api_activity_recent_idx on api_activity (store_id, last_at desc);
create index api_activity_age_idx on api_activity (bucket_start);
select internal.make_tenant_table('api_activity');
select internal.allow_privileged_read('api_activity', 'store_id, bucket_start, last_at');

-- Privileged id lookups ---------------------------------------------------------------------------------
-- The store of a created token, from the hash of its secret (ids only; validity is checked in the store).
create function privileged.store_id_by_token_hash(p_hash text) returns uuid
language sql stable security definer set search_path = pg_catalog, public
as $$ select store_id from public.api_grant where secret_hash = p_hash $$;

-- Stores with activity rows last touched before the cutoff, for the daily prune job.
create function privileged.store_ids_with_old_activity(p_before timestamptz, p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select distinct store_id from public.api_activity
  where last_at < p_before
  limit greatest(1, least(p_limit, 5000))
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_id_by_token_hash(text)'::regprocedure,
    'privileged.store_ids_with_old_activity(timestamptz, integer)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
