-- Idempotency keys (issue 25 item 1, docs/decisions/0041-idempotency-keys.md): a write sent with an
-- `Idempotency-Key` leaves one row here, inserted by the change's own unit, so a key is taken only by a change
-- that committed. The answer is stored right after the commit (`status`, `response`); until then a request
-- with the same key waits for it. Keys are per store and per owner: the grant of a token or OAuth connection,
-- or the signed-in member. Kept 24 hours (the daily {api}-activity-prune).
create table idempotency_key (
  store_id uuid not null references store (id) on delete cascade,
  -- 'grant:<uuid>' for a token or an OAuth connection, 'member:<uuid>' (the user) for a signed-in person.
  owner text not null check (owner ~ '^(grant|member):[0-9a-f-]{36}$'),
  key text not null check (key ~ '^[!-~]{1,255}$'),
  -- The procedure the key was first used on and the SHA-256 of its input, as sent (canonical JSON).
  procedure text not null check (length(procedure) between 3 and 100),
  request_hash text not null check (request_hash ~ '^[0-9a-f]{64}$'),
  -- The first answer, once stored: its status (200 with the output, or 202 with the proposal an AI approval holds)
  -- and its body exactly as it was sent (text, so a replay sends the same bytes).
  status smallint check (status between 200 and 299),
  response text,
  created_at timestamptz not null default now(),
  primary key (store_id, owner, key),
  check ((status is null) = (response is null))
);
create index idempotency_key_created_idx on idempotency_key (store_id, created_at);
select internal.make_tenant_table('idempotency_key');

-- The prune's store list: stores with keys older than the cutoff (read across stores, ids only).
create index idempotency_key_age_idx on idempotency_key (created_at, store_id);
select internal.allow_privileged_read('idempotency_key', 'store_id, created_at');

create function privileged.store_ids_with_old_idempotency_keys(p_before timestamptz, p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select distinct store_id from public.idempotency_key
  where created_at < p_before and created_at >= '-infinity'
  limit greatest(1, least(p_limit, 5000))
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_ids_with_old_idempotency_keys(timestamptz, integer)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
