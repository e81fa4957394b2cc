-- Marketing (issue 12, `{marketing}-tick` and `{marketing}-send`; docs/marketing.md): campaigns to a segment
-- of consenting customers, automations (abandoned checkout, first-order thank-you) that enrol from events,
-- and one send log row per message. Consent is the customer's `accepts_marketing`; this records when and
-- how it last changed. Nothing is ever sent to a customer whose consent is off at the moment of sending.

alter table customer
  add column marketing_consent_updated_at timestamptz,
  add column marketing_consent_source text check (marketing_consent_source in ('staff', 'checkout', 'unsubscribe_link'));

create table campaign (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  name text not null check (length(name) between 1 and 120),
  subject text not null check (length(subject) between 1 and 200),
  body text not null check (length(body) between 1 and 20000),
  audience text not null check (audience in ('subscribers', 'buyers', 'non_buyers')),
  status text not null default 'scheduled' check (status in ('scheduled', 'sending', 'sent', 'cancelled')),
  starts_at timestamptz not null,
  started_at timestamptz,
  finished_at timestamptz,
  recipients integer not null default 0 check (recipients >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id)
);
create index campaign_store_idx on campaign (store_id, created_at desc, id);
create index campaign_due_idx on campaign (starts_at) where status = 'scheduled';
select internal.make_tenant_table('campaign');

create table marketing_automation (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  kind text not null check (kind in ('abandoned_checkout', 'first_order_thanks')),
  enabled boolean not null default false,
  delay_minutes integer not null check (delay_minutes between 0 and 43200),
  subject text not null check (length(subject) between 1 and 200),
  body text not null check (length(body) between 1 and 20000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, kind)
);
select internal.make_tenant_table('marketing_automation');

-- One enrolment per automation and order: the event that enrolled it is its dedupe key.
create table marketing_enrolment (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  automation_id uuid not null,
  order_id uuid not null,
  email text not null check (length(email) between 3 and 320),
  event_id uuid not null,
  due_at timestamptz not null,
  status text not null default 'waiting' check (status in ('waiting', 'queued', 'skipped')),
  reason text check (reason in ('no_consent', 'converted', 'disabled', 'not_first_order')),
  created_at timestamptz not null default now(),
  decided_at timestamptz,
  unique (store_id, id),
  unique (store_id, automation_id, order_id),
  foreign key (store_id, automation_id) references marketing_automation (store_id, id) on delete cascade,
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
create index marketing_enrolment_due_idx on marketing_enrolment (store_id, due_at) where status = 'waiting';
select internal.make_tenant_table('marketing_enrolment');

-- One row per message to one customer: a campaign's recipient or an enrolment's message. It is the work
-- list of `{marketing}-send` (claimed by the tick, sent by the queue consumer) and the send log.
create table marketing_message (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  customer_id uuid not null,
  campaign_id uuid,
  enrolment_id uuid,
  recipient text not null check (length(recipient) between 3 and 320),
  status text not null default 'queued' check (status in ('queued', 'sent', 'skipped', 'failed')),
  reason text check (length(reason) <= 200),
  attempts integer not null default 0 check (attempts >= 0),
  claimed_until timestamptz,
  provider text,
  provider_id text check (length(provider_id) <= 200),
  last_error text check (length(last_error) <= 1000),
  unsubscribe_key_hash text check (unsubscribe_key_hash ~ '^[0-9a-f]{64}$'),
  unsubscribed_at timestamptz,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  check (num_nonnulls(campaign_id, enrolment_id) = 1),
  unique (store_id, id),
  unique (store_id, campaign_id, customer_id),
  unique (store_id, enrolment_id),
  foreign key (store_id, customer_id) references customer (store_id, id) on delete cascade,
  foreign key (store_id, campaign_id) references campaign (store_id, id) on delete cascade,
  foreign key (store_id, enrolment_id) references marketing_enrolment (store_id, id) on delete cascade
);
create index marketing_message_queued_idx on marketing_message (store_id, created_at) where status = 'queued';
create index marketing_message_store_idx on marketing_message (store_id, created_at desc);
select internal.make_tenant_table('marketing_message');

select internal.allow_privileged_read('campaign', 'store_id, status, starts_at');
select internal.allow_privileged_read('marketing_enrolment', 'store_id, status, due_at');
select internal.allow_privileged_read('marketing_message', 'store_id, status, claimed_until');

-- Stores with marketing work at p_now: a campaign due to start or still sending, an enrolment due, or a
-- queued message not claimed (or whose claim lapsed).
create function privileged.store_ids_with_marketing_work(p_now timestamptz, p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from (
    select store_id from public.campaign where (status = 'scheduled' and starts_at <= p_now) or status = 'sending'
    union
    select store_id from public.marketing_enrolment where status = 'waiting' and due_at <= p_now
    union
    select store_id from public.marketing_message where status = 'queued' and (claimed_until is null or claimed_until <= p_now)
  ) s
  order by store_id
  limit greatest(1, least(p_limit, 5000))
$$;
alter function privileged.store_ids_with_marketing_work(timestamptz, integer) owner to app_privileged;
revoke all on function privileged.store_ids_with_marketing_work(timestamptz, integer) from public;
grant execute on function privileged.store_ids_with_marketing_work(timestamptz, integer) to app_user;
