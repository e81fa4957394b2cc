-- Double opt-in for marketing consent (issue 20 item 4; docs/decisions/0021-double-opt-in.md,
-- docs/marketing.md "Consent").
--
-- `accepts_marketing` keeps its meaning: confirmed consent, the only thing that lets marketing reach a
-- customer (campaigns, automations, the send consumer read it and nothing else). Ticking "Email me news and
-- offers" at checkout no longer sets it: it opens a request (`marketing_consent_requested_at`), which the
-- shopper confirms through a signed link in a confirmation email (`marketing_consent_key_hash`: the SHA-256
-- of the link's key; the key is derived from EMAIL_LINK_SECRET and never stored).
--
-- `marketing_consent` is the state a reader shows and a writer decides on, kept by a trigger from the
-- columns above (as customer_lower keeps email_lower), so no writer can set it wrong:
--
--   confirmed   accepts_marketing
--   pending     a request is open (not confirmed, not withdrawn since)
--   withdrawn   consent was turned off (the unsubscribe link, a member) and no request is open
--   none        never given
--
-- A confirmed or withdrawn consent has no open request: the trigger clears it. Every change of state or of
-- its stamp (`marketing_consent_updated_at`) is recorded in `marketing_consent_record` with its source and
-- time, by a statement trigger (one pass for a bulk load), so no writer can forget it.
--
-- Existing rows keep their consent: a customer with accepts_marketing stays confirmed (decision 0021), and
-- one whose consent was turned off (a stamp without consent) is withdrawn. Each gets one record, with the
-- source and time the row had (a source of null: before sources were recorded).

alter table customer drop constraint customer_marketing_consent_source_check;
alter table customer
  add constraint customer_marketing_consent_source_check
    check (marketing_consent_source in ('staff', 'checkout', 'unsubscribe_link', 'confirmation_link', 'import')),
  add column marketing_consent text not null default 'none' check (marketing_consent in ('none', 'pending', 'confirmed', 'withdrawn')),
  add column marketing_consent_requested_at timestamptz,
  add column marketing_consent_key_hash text check (marketing_consent_key_hash ~ '^[0-9a-f]{64}$');

create table marketing_consent_record (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  customer_id uuid not null,
  state text not null check (state in ('none', 'pending', 'confirmed', 'withdrawn')),
  -- As customer.marketing_consent_source; null when the change was not stamped with one.
  source text check (source in ('staff', 'checkout', 'unsubscribe_link', 'confirmation_link', 'import')),
  recorded_at timestamptz not null default now(),
  -- A customer deleted is forgotten with their consent (customers.delete).
  foreign key (store_id, customer_id) references customer (store_id, id) on delete cascade
);
create index marketing_consent_record_customer_idx on marketing_consent_record (store_id, customer_id, recorded_at desc);
select internal.make_tenant_table('marketing_consent_record');

-- The state from the columns --------------------------------------------------------------------------------
create function internal.customer_consent_state() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if new.accepts_marketing then
    new.marketing_consent_requested_at := null;
    new.marketing_consent := 'confirmed';
  elsif tg_op = 'UPDATE' and old.accepts_marketing then
    -- Turned off: whatever was asked before is closed.
    new.marketing_consent_requested_at := null;
    new.marketing_consent := 'withdrawn';
  elsif new.marketing_consent_requested_at is not null then
    new.marketing_consent := 'pending';
  elsif new.marketing_consent_updated_at is not null then
    new.marketing_consent := 'withdrawn';
  else
    new.marketing_consent := 'none';
  end if;
  return new;
end
$fn$;

-- The records of changes -------------------------------------------------------------------------------------
create function internal.customer_consent_records() returns trigger
language plpgsql set search_path = pg_catalog, public as $fn$
begin
  if tg_op = 'INSERT' then
    insert into marketing_consent_record (store_id, customer_id, state, source, recorded_at)
    select store_id, id, marketing_consent, marketing_consent_source, coalesce(marketing_consent_updated_at, now())
      from new_rows where marketing_consent <> 'none';
  else
    insert into marketing_consent_record (store_id, customer_id, state, source, recorded_at)
    select n.store_id, n.id, n.marketing_consent,
           case when n.marketing_consent_updated_at is distinct from o.marketing_consent_updated_at then n.marketing_consent_source end,
           case when n.marketing_consent_updated_at is distinct from o.marketing_consent_updated_at then coalesce(n.marketing_consent_updated_at, now()) else now() end
      from new_rows n join old_rows o on o.store_id = n.store_id and o.id = n.id
     where (n.marketing_consent, n.marketing_consent_updated_at) is distinct from (o.marketing_consent, o.marketing_consent_updated_at);
  end if;
  return null;
end
$fn$;

-- Existing rows (forcing lifted for the backfill, as in migration 0027) ----------------------------------------
alter table customer no force row level security;
alter table marketing_consent_record no force row level security;

update customer set marketing_consent = case when accepts_marketing then 'confirmed' else 'withdrawn' end
 where accepts_marketing or marketing_consent_updated_at is not null;
insert into marketing_consent_record (store_id, customer_id, state, source, recorded_at)
select store_id, id, marketing_consent, marketing_consent_source, coalesce(marketing_consent_updated_at, created_at)
  from customer where marketing_consent <> 'none';

alter table customer force row level security;
alter table marketing_consent_record force row level security;

create trigger customer_consent_state
  before insert or update of accepts_marketing, marketing_consent, marketing_consent_requested_at, marketing_consent_updated_at on customer
  for each row execute function internal.customer_consent_state();
create trigger consent_records_insert after insert on customer referencing new table as new_rows
  for each statement execute function internal.customer_consent_records();
-- (A trigger with transition tables takes no column list: every update statement passes, finding no change
-- in its rows unless consent moved.)
create trigger consent_records_update after update on customer referencing old table as old_rows new table as new_rows
  for each statement execute function internal.customer_consent_records();

-- Who is waiting for a confirmation, per store (the admin's list filter and a later reminder).
create index customer_consent_pending_idx on customer (store_id, marketing_consent_requested_at) where marketing_consent = 'pending';
