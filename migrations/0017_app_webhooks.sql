-- App webhooks (issue 12, the {apps}-events and {apps}-jobs queues): a merchant's apps receive the store's
-- public events as signed POSTs. docs/apps.md describes the protocol; decision 0011 the secrets.

-- An app: where its webhooks go and which event kinds it wants. Its signing secret is never stored: it is
-- derived from the deployment's APP_WEBHOOK_ROOT_SECRET, the app id, secret_version and secret_salt, and
-- shown once; secret_hash (its SHA-256) lets the sender notice when the derivation no longer gives it.
-- After a rotation the previous secret also signs until previous_secret_expires_at.
create table store_app (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  name text not null check (length(btrim(name)) between 1 and 100),
  url text not null check (length(url) <= 2048 and url ~ '^https?://'),
  -- Kinds (order.paid) or groups (order.*) of shared/apps/events.ts APP_EVENT_KINDS, or '*'.
  events text[] not null check (cardinality(events) between 1 and 50),
  active boolean not null default true,
  secret_version integer not null default 1 check (secret_version >= 1),
  secret_salt text not null check (secret_salt ~ '^[A-Za-z0-9_-]{43}$'),
  secret_hash text not null check (secret_hash ~ '^[0-9a-f]{64}$'),
  secret_hint text not null check (length(secret_hint) = 4),
  previous_secret_version integer check (previous_secret_version >= 1),
  previous_secret_salt text check (previous_secret_salt ~ '^[A-Za-z0-9_-]{43}$'),
  previous_secret_hash text check (previous_secret_hash ~ '^[0-9a-f]{64}$'),
  previous_secret_expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, name),
  check (
    (previous_secret_version is null) = (previous_secret_salt is null)
    and (previous_secret_salt is null) = (previous_secret_hash is null)
    and (previous_secret_hash is null) = (previous_secret_expires_at is null)
  )
);
select internal.make_tenant_table('store_app');

-- One event to one app: made once per (app, event) by the {apps}-events consumer, then tried by the
-- {apps}-jobs consumer, one message per attempt. `attempts` counts the tries of the current round; a
-- redelivery starts a new round. `claimed_at` is set while a try is in flight, so a duplicate message
-- never sends twice; a claim older than a minute counts as abandoned (the Worker died mid-try).
create table app_delivery (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  app_id uuid not null,
  event_id uuid not null,
  event_kind text not null check (event_kind ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$'),
  event_created_at timestamptz not null,
  payload jsonb not null default '{}'::jsonb check (jsonb_typeof(payload) = 'object'),
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  round integer not null default 1 check (round >= 1),
  attempts integer not null default 0 check (attempts between 0 and 20),
  claimed_at timestamptz,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  last_status integer check (last_status between 100 and 599),
  last_error text check (length(last_error) <= 500),
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (app_id, event_id),
  foreign key (store_id, app_id) references store_app (store_id, id) on delete cascade
);
-- The app's delivery log, newest first.
create index app_delivery_log_idx on app_delivery (store_id, app_id, created_at desc, id);
create index app_delivery_event_idx on app_delivery (store_id, event_id);
select internal.make_tenant_table('app_delivery');
