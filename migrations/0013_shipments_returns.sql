-- Shipments, refunds, returns and merchant tasks (issue 11, parts 7 and 8). Like payment attempts, these
-- rows are what the recompute routine reads: an order's payment_status and fulfillment_status follow from
-- its attempts, processed refunds and shipments (docs/order-status.md).

-- A parcel handed to a courier. A parcel may have more than one (a cancelled label, then a new one); the
-- parcel's state is read from all of them (shared/orders/status.ts parcelStateOf).
create table shipment (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  fulfillment_order_id uuid not null,
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{1,30}$'),
  -- The courier's tracking number (AWB) and its own id for the shipment.
  awb text not null check (length(awb) between 1 and 64),
  provider_ref text check (length(provider_ref) <= 200),
  courier_name text check (length(courier_name) <= 200),
  tracking_url text check (length(tracking_url) <= 2000),
  status text not null default 'pending'
    check (status in ('pending', 'in_transit', 'delivered', 'rto_initiated', 'rto_delivered', 'cancelled')),
  -- The courier's own words for the last status it reported (e.g. Shiprocket's "OUT FOR DELIVERY").
  provider_status text check (length(provider_status) <= 200),
  status_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, provider, awb),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade,
  foreign key (store_id, fulfillment_order_id) references fulfillment_order (store_id, id) on delete cascade
);
create index shipment_order_idx on shipment (store_id, order_id, created_at);
-- The tracking job's work list: shipments still on their way.
create index shipment_open_idx on shipment (store_id, status) where status in ('pending', 'in_transit', 'rto_initiated');
select internal.make_tenant_table('shipment');

-- What a shipment's courier reported, in order: the timeline of a parcel.
create table shipment_event (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  shipment_id uuid not null,
  status text not null
    check (status in ('pending', 'in_transit', 'delivered', 'rto_initiated', 'rto_delivered', 'cancelled')),
  provider_status text check (length(provider_status) <= 200),
  source text not null check (source in ('merchant', 'webhook', 'tracking')),
  occurred_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  foreign key (store_id, shipment_id) references shipment (store_id, id) on delete cascade
);
create index shipment_event_shipment_idx on shipment_event (store_id, shipment_id, occurred_at);
select internal.make_tenant_table('shipment_event');

-- A return: units of an order's lines coming back, through requested → approved | rejected → received
-- → refunded. Several per order; each its own return_* events (SPEC "Events").
create table order_return (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  number integer not null check (number >= 1),
  status text not null default 'requested' check (status in ('requested', 'approved', 'rejected', 'received', 'refunded')),
  reason text not null check (length(btrim(reason)) between 1 and 500),
  note text check (length(note) <= 2000),
  restocked boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, order_id, number),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
create index order_return_order_idx on order_return (store_id, order_id, number);
select internal.make_tenant_table('order_return');

create table order_return_line (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  return_id uuid not null,
  order_line_id uuid not null,
  quantity integer not null check (quantity between 1 and 999),
  unique (store_id, return_id, order_line_id),
  foreign key (store_id, return_id) references order_return (store_id, id) on delete cascade,
  foreign key (store_id, order_line_id) references order_line (store_id, id) on delete cascade
);
select internal.make_tenant_table('order_return_line');

-- Money given back against one captured attempt. Written `pending` before the gateway is called (the
-- row's id is the gateway's idempotency key), then `processed` or `failed` from its answer or webhook.
-- Only processed refunds count in the recompute.
create table refund (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  payment_attempt_id uuid not null,
  return_id uuid,
  amount bigint not null check (amount > 0),
  reason text check (length(reason) <= 500),
  status text not null default 'pending' check (status in ('pending', 'processed', 'failed')),
  provider_refund_id text check (length(provider_refund_id) <= 200),
  last_error text check (length(last_error) <= 1000),
  created_by uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade,
  foreign key (store_id, payment_attempt_id) references payment_attempt (store_id, id) on delete cascade,
  foreign key (store_id, return_id) references order_return (store_id, id) on delete set null (return_id)
);
create index refund_order_idx on refund (store_id, order_id, created_at);
create unique index refund_provider_idx on refund (store_id, provider_refund_id) where provider_refund_id is not null;
select internal.make_tenant_table('refund');

-- Work the merchant has to do by hand, written with the change that caused it: a parcel coming back to
-- origin (RTO), money that arrived on a closed order. Done by the merchant; one per cause.
create table merchant_task (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  kind text not null check (kind in ('rto', 'paid_late', 'refund_failed')),
  order_id uuid,
  -- What makes the task unique (the shipment for an RTO, the attempt for a late payment, the refund).
  subject_id uuid not null,
  title text not null check (length(title) between 1 and 300),
  status text not null default 'open' check (status in ('open', 'done')),
  created_at timestamptz not null default now(),
  done_at timestamptz,
  done_by uuid,
  unique (store_id, kind, subject_id),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
create index merchant_task_open_idx on merchant_task (store_id, created_at) where status = 'open';
select internal.make_tenant_table('merchant_task');

-- The buyer's own link to their order (`/orders/<id>?k=<key>`), kept as a SHA-256 hash: it works in any
-- browser, after the cart cookie is gone; the order confirmation email carries it (issue 12).
alter table shop_order add column access_key_hash text check (access_key_hash ~ '^[0-9a-f]{64}$');
