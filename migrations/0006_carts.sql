-- Storefront carts: one per shopper per store. The shopper's cookie holds a random 256-bit token; the
-- database keeps only its SHA-256 (hex), unique within the store. Lines point at variants of the same
-- store through composite (store_id, id) references, so a cart can never hold another store's variant.

-- A cart's discount must be of the cart's store: the composite reference needs this key on discount.
alter table discount add constraint discount_store_id_id_key unique (store_id, id);

create table cart (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  token_hash text not null check (token_hash ~ '^[0-9a-f]{64}$'),
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  discount_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, token_hash),
  -- A discount deleted later simply leaves the cart (the column alone is nulled, store_id stays).
  foreign key (store_id, discount_id) references discount (store_id, id) on delete set null (discount_id)
);
-- Abandoned carts are cleaned up by age.
create index cart_updated_idx on cart (updated_at);
select internal.make_tenant_table('cart');

create table cart_line (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  cart_id uuid not null,
  variant_id uuid not null,
  quantity integer not null check (quantity between 1 and 999),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, cart_id, variant_id),
  foreign key (store_id, cart_id) references cart (store_id, id) on delete cascade,
  foreign key (store_id, variant_id) references product_variant (store_id, id) on delete cascade
);
create index cart_line_variant_idx on cart_line (store_id, variant_id);
select internal.make_tenant_table('cart_line');
