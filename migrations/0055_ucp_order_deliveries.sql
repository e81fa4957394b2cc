-- Order updates to the agent's platform (issue 26 item 4; docs/ucp.md "Order updates to the agent"): when an
-- order an agent placed through a UCP checkout session is paid, shipped, delivered, cancelled or refunded, its
-- platform's order webhook (the session's webhook_url, migration 0054) receives the order as it then stands,
-- signed with the store's UCP key. One row per (store, outbox event): made by the {apps}-events consumer for the
-- event's `ucp_order` route, so a repeated message or a replayed relay adds none, then tried by the {apps}-jobs
-- consumer, one message per try, with the apps' backoff. `claimed_at` is set while a try is in flight, so a
-- duplicate message never sends twice; a claim older than a minute counts as abandoned (the Worker died).
create table ucp_order_delivery (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  event_id uuid not null,
  event_kind text not null check (event_kind ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$'),
  event_created_at timestamptz not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
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
  unique (store_id, event_id),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
-- An order's updates to its agent, newest first (the admin's order page and Settings → Sales channels).
create index ucp_order_delivery_order_idx on ucp_order_delivery (store_id, order_id, created_at desc);
select internal.make_tenant_table('ucp_order_delivery');
