-- Domain claims and the member an AI proposal waits for (issue 20 items 6 and 11; docs/domains.md "Claims",
-- docs/decisions/0024-domain-claims.md).

-- Domains ----------------------------------------------------------------------------------------------
-- A hostname was unique across all stores and all states, so a store that added someone else's hostname
-- as pending kept its real owner from ever adding it. Now a hostname may be claimed (pending) by several
-- stores; only a verified one is unique: the first store whose TXT record is found wins it (the verify job
-- serialises the claims of one hostname with a transaction-level advisory lock, and this index is the
-- backstop), and the others' claims fail with the reason `taken`. A store lists a hostname once.
alter table store_domain drop constraint store_domain_hostname_key;
alter table store_domain add constraint store_domain_store_id_hostname_key unique (store_id, hostname);
-- Also the index of the storefront's hostname lookup (privileged.store_id_by_hostname reads verified only).
create unique index store_domain_verified_hostname on store_domain (hostname) where status = 'verified';

-- Why a claim failed: `lapsed` (no TXT record 7 days after it was added) or `taken` (another store verified
-- the hostname first). Set exactly when the status is failed.
alter table store_domain add column failed_reason text check (failed_reason in ('lapsed', 'taken'));
-- Every store's failed claims: row security lifted for the owner while they are backfilled (as in 0026).
alter table store_domain no force row level security;
update store_domain set failed_reason = 'lapsed' where status = 'failed';
alter table store_domain force row level security;
alter table store_domain add constraint store_domain_failed_reason_set check ((status = 'failed') = (failed_reason is not null));

-- The verify job's work list: stores with a pending domain whose check is due at p_now, or whose hostname
-- another store has verified (that claim fails at once, without a DNS lookup), longest-waiting first.
create or replace function privileged.store_ids_with_domains_to_verify(p_now timestamptz, p_limit integer default 100) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select d.store_id from public.store_domain d
  left join public.domain_check c on c.domain_id = d.id
  where d.status = 'pending'
    and (coalesce(c.next_check_at, d.created_at) <= p_now
         or exists (select 1 from public.store_domain v where v.hostname = d.hostname and v.status = 'verified'))
  group by d.store_id
  order by min(coalesce(c.next_check_at, d.created_at)), d.store_id
  limit greatest(1, least(p_limit, 5000))
$$;

-- AI approvals -----------------------------------------------------------------------------------------
-- A proposal waits for the member who connected the client (SPEC "Grants, tokens and approvals"). Removing
-- that member deletes their grants (migration 0003's cascade), which deleted their proposals with them; a
-- proposal now outlives its grant, without it, so the store keeps its history, and staff.remove expires
-- the member's pending ones in the same unit.
alter table ai_approval alter column grant_id drop not null;
alter table ai_approval drop constraint ai_approval_store_id_grant_id_fkey;
alter table ai_approval add constraint ai_approval_store_id_grant_id_fkey
  foreign key (store_id, grant_id) references api_grant (store_id, id) on delete set null (grant_id);
