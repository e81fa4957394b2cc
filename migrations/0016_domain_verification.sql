-- Custom domains are verified and routed (issue 12; docs/domains.md). A domain proves its owner by a TXT
-- record `_commerce-verify.<hostname>` holding `commerce-verify=<verification_token>`; the {domains}-verify
-- job looks it up over DNS-over-HTTPS and turns the domain `verified` (or `failed` after 7 days). The
-- {domains}-route consumer then creates the hostname at the router (Cloudflare for SaaS) and keeps its id.

-- The token is random per domain (122 bits of a v4 UUID, as hex); existing rows each get their own.
alter table store_domain add column verification_token text not null
  default replace(gen_random_uuid()::text, '-', '') check (verification_token ~ '^[0-9a-f]{32}$');
alter table store_domain drop constraint store_domain_status_check;
alter table store_domain add constraint store_domain_status_check check (status in ('pending', 'verified', 'failed'));
-- The custom hostname at the router: its id and what the router last said of it and of its certificate.
alter table store_domain add column router_id text check (length(router_id) between 1 and 100);
alter table store_domain add column router_status text check (length(router_status) <= 50);
alter table store_domain add column router_ssl_status text check (length(router_ssl_status) <= 50);
alter table store_domain add column routed_at timestamptz;
alter table store_domain add constraint store_domain_store_id_id_key unique (store_id, id);
-- The verify job's work list reads pending domains only.
create index store_domain_pending_idx on store_domain (store_id) where status = 'pending';

-- The last DNS check of a pending domain and when the next one is due. A table of its own, not columns of
-- store_domain: a check every few minutes must not bump the storefront's catalogue version (the
-- touch_storefront trigger of migration 0008 fires on every update of store_domain).
create table domain_check (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  domain_id uuid not null unique,
  checks integer not null default 1 check (checks >= 1),
  last_checked_at timestamptz not null,
  last_result text not null
    check (last_result in ('verified', 'not_found', 'wrong_value', 'servfail', 'timeout', 'unavailable')),
  next_check_at timestamptz not null,
  foreign key (store_id, domain_id) references store_domain (store_id, id) on delete cascade
);
select internal.make_tenant_table('domain_check');

-- The domain events the route consumer has applied, by outbox event id: written in the transaction of the
-- effect, so a duplicate delivery changes nothing twice.
create table domain_route_receipt (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  event_id uuid not null,
  kind text not null check (kind ~ '^domain\.[a-z_]+$'),
  hostname text not null check (length(hostname) <= 253),
  router_id text check (length(router_id) between 1 and 100),
  -- What was done: routed, unrouted, or nothing because the domain had changed since the event.
  outcome text not null check (outcome in ('routed', 'unrouted', 'skipped')),
  processed_at timestamptz not null default now(),
  unique (store_id, event_id)
);
select internal.make_tenant_table('domain_route_receipt');

-- The verify job's work list: stores with a pending domain whose check is due at p_now (a domain never
-- checked is due from when it was added), longest-waiting first.
select internal.allow_privileged_read('store_domain', 'id, store_id, hostname, status, created_at');
select internal.allow_privileged_read('domain_check', 'domain_id, next_check_at');

create function privileged.store_ids_with_domains_to_verify(p_now timestamptz, p_limit integer default 100) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select d.store_id from public.store_domain d
  left join public.domain_check c on c.domain_id = d.id
  where d.status = 'pending' and coalesce(c.next_check_at, d.created_at) <= p_now
  group by d.store_id
  order by min(coalesce(c.next_check_at, d.created_at)), d.store_id
  limit greatest(1, least(p_limit, 5000))
$$;
alter function privileged.store_ids_with_domains_to_verify(timestamptz, integer) owner to app_privileged;
revoke all on function privileged.store_ids_with_domains_to_verify(timestamptz, integer) from public;
grant execute on function privileged.store_ids_with_domains_to_verify(timestamptz, integer) to app_user;
