-- Orders, parcels and payment attempts (issue 11). Money is integer minor units in the order's currency;
-- prices are inclusive of GST, so an order's total is subtotal − discount + shipping and its tax is the
-- GST contained in that, stored per parcel (fulfillment_order) and summed onto the order.

-- Where a location ships from (its GST origin): an ISO 3166-2:IN code. Unset means "not known", which
-- checkout treats as another state (IGST): the tax is the same, only its split differs.
alter table location add column state text check (state ~ '^IN-[A-Z]{2}$');
-- Reservation picks locations by fewest parcels, then by this priority (lower first), then by name.
alter table location add column priority integer not null default 100 check (priority between 0 and 10000);

-- What a store charges for shipping an order (inclusive of GST), and from which subtotal it is free.
alter table store add column shipping_fee_minor bigint not null default 0 check (shipping_fee_minor between 0 and 100000000);
alter table store add column free_shipping_over_minor bigint check (free_shipping_over_minor between 0 and 100000000000);

-- Per-store order numbers (#1001, #1002, …): one counter row per store, taken in the checkout's transaction.
create table order_counter (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null unique references store (id) on delete cascade,
  next_number integer not null default 1001 check (next_number > 0)
);
select internal.make_tenant_table('order_counter');

create table shop_order (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  number integer not null,
  -- The cart it was placed from: one order per cart, which is what makes a second submit a replay.
  cart_id uuid,
  email text not null check (length(email) between 3 and 254),
  phone text check (phone ~ '^\+[1-9][0-9]{7,14}$'),
  shipping_address jsonb not null check (jsonb_typeof(shipping_address) = 'object'),
  ship_to_state text not null check (ship_to_state ~ '^IN-[A-Z]{2}$'),
  payment_method text not null check (payment_method in ('gateway', 'manual_transfer')),
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  subtotal bigint not null check (subtotal >= 0),
  discount bigint not null default 0 check (discount >= 0),
  shipping bigint not null default 0 check (shipping >= 0),
  tax bigint not null default 0 check (tax >= 0),
  total bigint not null check (total >= 0 and total = subtotal - discount + shipping),
  discount_code text,
  -- Derived: written only by the recompute routine (SPEC "Checkout and payment behaviour" 6).
  status text not null default 'open' check (status in ('open', 'completed', 'cancelled', 'expired')),
  payment_status text not null default 'unpaid',
  fulfillment_status text not null default 'unfulfilled',
  expires_at timestamptz,
  placed_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, number),
  unique (store_id, cart_id),
  foreign key (store_id, cart_id) references cart (store_id, id) on delete set null (cart_id)
);
create index shop_order_placed_idx on shop_order (store_id, placed_at desc);
create index shop_order_email_idx on shop_order (store_id, lower(email));
select internal.make_tenant_table('shop_order');

create table order_line (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  -- Kept when the variant is deleted later: the line keeps what was sold.
  variant_id uuid,
  product_title text not null,
  variant_title text not null,
  sku text,
  tax_class text not null,
  preorder boolean not null default false,
  quantity integer not null check (quantity between 1 and 999),
  unit_price bigint not null check (unit_price >= 0),
  line_total bigint not null check (line_total = unit_price * quantity),
  discount bigint not null default 0 check (discount >= 0 and discount <= line_total),
  position integer not null default 0,
  unique (store_id, id),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade,
  foreign key (store_id, variant_id) references product_variant (store_id, id) on delete set null (variant_id)
);
create index order_line_order_idx on order_line (store_id, order_id, position);
select internal.make_tenant_table('order_line');

-- A parcel: the part of an order one location ships, with its share of the money and its GST.
create table fulfillment_order (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  location_id uuid,
  origin_state text check (origin_state ~ '^IN-[A-Z]{2}$'),
  subtotal bigint not null check (subtotal >= 0),
  discount bigint not null default 0 check (discount >= 0),
  shipping bigint not null default 0 check (shipping >= 0),
  tax bigint not null default 0 check (tax >= 0),
  cgst bigint not null default 0 check (cgst >= 0),
  sgst bigint not null default 0 check (sgst >= 0),
  igst bigint not null default 0 check (igst >= 0),
  position integer not null default 0,
  created_at timestamptz not null default now(),
  unique (store_id, id),
  check (tax = cgst + sgst + igst),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade,
  foreign key (store_id, location_id) references location (store_id, id) on delete set null (location_id)
);
create index fulfillment_order_order_idx on fulfillment_order (store_id, order_id, position);
select internal.make_tenant_table('fulfillment_order');

-- Which units of which line a parcel carries; `reserved` of them were taken from the location's stock,
-- the rest (pre-order units beyond what is on hand) are backordered and reserve nothing.
create table fulfillment_order_line (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  fulfillment_order_id uuid not null,
  order_line_id uuid not null,
  quantity integer not null check (quantity > 0),
  reserved integer not null check (reserved >= 0 and reserved <= quantity),
  unique (store_id, fulfillment_order_id, order_line_id),
  foreign key (store_id, fulfillment_order_id) references fulfillment_order (store_id, id) on delete cascade,
  foreign key (store_id, order_line_id) references order_line (store_id, id) on delete cascade
);
select internal.make_tenant_table('fulfillment_order_line');

create table payment_attempt (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  attempt integer not null check (attempt >= 1),
  idempotency_key text not null,
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{1,30}$'),
  provider_ref text,
  provider_payment_id text,
  status text not null default 'created'
    check (status in ('created', 'pending', 'authorized', 'captured', 'refunded', 'failed')),
  amount bigint not null check (amount >= 0),
  last_error text check (length(last_error) <= 1000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, order_id, attempt),
  unique (store_id, idempotency_key),
  check (idempotency_key = order_id::text || ':' || attempt::text),
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete cascade
);
create index payment_attempt_provider_ref_idx on payment_attempt (store_id, provider, provider_ref);
select internal.make_tenant_table('payment_attempt');

-- Webhook deliveries already applied, by the provider's event id: a second delivery changes nothing.
create table webhook_receipt (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  provider text not null,
  event_id text not null check (length(event_id) between 1 and 200),
  received_at timestamptz not null default now(),
  unique (store_id, provider, event_id)
);
select internal.make_tenant_table('webhook_receipt');

-- A converted cart names its order; the cart API treats it as no cart (the next add starts a new one).
alter table cart add column converted_order_id uuid;
alter table cart add constraint cart_converted_order_fk
  foreign key (store_id, converted_order_id) references shop_order (store_id, id) on delete set null (converted_order_id);
