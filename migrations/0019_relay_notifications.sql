-- The outbox relay and notifications (issue 12). A row the relay could not send after its last try is
-- dead: kept with its error, visible to the merchant, sent again by Retry.
alter table outbox_event add column dead_at timestamptz;
-- Rows of one transaction share created_at; the relay sends a store's rows in the order they were written.
alter table outbox_event add column seq bigserial;
grant usage on sequence outbox_event_seq_seq to app_user;
create index outbox_event_relay_idx on outbox_event (store_id, seq) where processed_at is null and dead_at is null;
create index outbox_event_dead_idx on outbox_event (store_id, dead_at desc) where dead_at is not null;

-- The relay's list of stores with rows due, longest-waiting first, dead rows left out.
create or replace function privileged.store_ids_with_pending_outbox(p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.outbox_event
  where processed_at is null and dead_at is null and available_at <= now()
  group by store_id
  order by min(available_at), store_id
  limit greatest(1, least(p_limit, 5000))
$$;
select internal.allow_privileged_read('outbox_event', 'store_id, available_at, processed_at, dead_at');

-- One message to a person per event and template: the row is the send's idempotency (a second delivery
-- of the queue message finds it) and the store's notification log.
create table notification (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  event_id uuid not null,
  template text not null check (template ~ '^[a-z][a-z_]{1,60}$'),
  recipient text not null check (length(recipient) between 3 and 320),
  subject text not null check (length(subject) <= 300),
  status text not null default 'sending' check (status in ('sending', 'sent', 'failed')),
  provider text,
  provider_id text check (length(provider_id) <= 200),
  attempts integer not null default 0 check (attempts >= 0),
  last_error text check (length(last_error) <= 1000),
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  unique (store_id, event_id, template)
);
create index notification_store_idx on notification (store_id, created_at desc);
select internal.make_tenant_table('notification');

-- The local mailer's mailbox (development and tests): what would have been sent, for the admin to open.
create table mailbox_message (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  idempotency_key text not null check (length(idempotency_key) between 1 and 256),
  sender text not null,
  recipient text not null,
  subject text not null,
  text_body text not null,
  html_body text not null,
  tag text not null,
  created_at timestamptz not null default now(),
  unique (store_id, idempotency_key)
);
create index mailbox_message_store_idx on mailbox_message (store_id, created_at desc);
select internal.make_tenant_table('mailbox_message');
