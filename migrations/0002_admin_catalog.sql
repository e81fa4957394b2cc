-- Admin and catalog: staff invitations, products and variants, locations and stock, customers,
-- discounts, store pages, and the privileged lookups the admin needs to list a person's stores.
-- Every table here is store-scoped and goes through internal.make_tenant_table. References between
-- tenant tables are composite (store_id, id), so a row can never point at another store's row.

-- Staff invitations --------------------------------------------------------------------------------------
create table staff_invitation (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  email text not null check (position('@' in email) > 1 and length(email) <= 320),
  role text not null check (role in ('owner', 'admin', 'staff')),
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  invited_by uuid references member (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  revoked_at timestamptz
);
create unique index staff_invitation_open_email on staff_invitation (store_id, lower(email))
  where accepted_at is null and revoked_at is null;
select internal.make_tenant_table('staff_invitation');
select internal.allow_privileged_read('staff_invitation', 'id, store_id, token_hash, expires_at, accepted_at, revoked_at');

-- Catalog -----------------------------------------------------------------------------------------------
create table product (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  title text not null check (length(btrim(title)) between 1 and 255),
  handle text not null check (handle ~ '^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$'),
  description text not null default '' check (length(description) <= 20000),
  status text not null default 'draft' check (status in ('draft', 'active', 'archived')),
  vendor text check (length(vendor) <= 255),
  -- Indian GST invoices name the HSN code of the goods (4, 6 or 8 digits).
  hsn_code text check (hsn_code ~ '^[0-9]{4}([0-9]{2}){0,2}$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, handle)
);
create index product_store_updated_idx on product (store_id, updated_at desc, id);
select internal.make_tenant_table('product');

create table product_variant (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  product_id uuid not null,
  title text not null default 'Default' check (length(btrim(title)) between 1 and 255),
  sku text check (sku ~ '^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$'),
  -- Money is integer minor units (paise for INR), never floats.
  price_minor bigint not null check (price_minor >= 0 and price_minor <= 100000000000),
  compare_at_minor bigint check (compare_at_minor >= 0 and compare_at_minor <= 100000000000),
  tax_class text not null default 'gst_18' check (tax_class in ('gst_exempt', 'gst_0', 'gst_5', 'gst_18', 'gst_40')),
  preorder boolean not null default false,
  position integer not null default 0 check (position >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  foreign key (store_id, product_id) references product (store_id, id) on delete cascade
);
create unique index product_variant_sku_key on product_variant (store_id, sku) where sku is not null;
create index product_variant_product_idx on product_variant (store_id, product_id, position);
select internal.make_tenant_table('product_variant');

-- Locations and stock -----------------------------------------------------------------------------------
create table location (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  name text not null check (length(btrim(name)) between 1 and 120),
  -- Only locations that sell online take part in checkout's stock reservation.
  sells_online boolean not null default true,
  city text check (length(city) <= 120),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, id),
  unique (store_id, name)
);
select internal.make_tenant_table('location');

create table inventory_level (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  variant_id uuid not null,
  location_id uuid not null,
  on_hand integer not null default 0 check (on_hand >= 0),
  reserved integer not null default 0 check (reserved >= 0),
  updated_at timestamptz not null default now(),
  unique (store_id, variant_id, location_id),
  foreign key (store_id, variant_id) references product_variant (store_id, id) on delete cascade,
  foreign key (store_id, location_id) references location (store_id, id) on delete cascade
);
create index inventory_level_location_idx on inventory_level (store_id, location_id);
select internal.make_tenant_table('inventory_level');

-- Every stock change leaves a row: who, how much, why.
create table inventory_adjustment (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  variant_id uuid not null,
  location_id uuid not null,
  delta integer not null check (delta <> 0),
  on_hand_after integer not null check (on_hand_after >= 0),
  reason text not null check (reason in ('received', 'correction', 'damaged', 'shrinkage', 'returned', 'recount', 'other')),
  note text check (length(note) <= 500),
  member_id uuid,
  created_at timestamptz not null default now(),
  foreign key (store_id, variant_id) references product_variant (store_id, id) on delete cascade,
  foreign key (store_id, location_id) references location (store_id, id) on delete cascade
);
create index inventory_adjustment_variant_idx on inventory_adjustment (store_id, variant_id, created_at desc);
select internal.make_tenant_table('inventory_adjustment');

-- Customers ---------------------------------------------------------------------------------------------
create table customer (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  email text check (position('@' in email) > 1 and length(email) <= 320),
  first_name text check (length(first_name) <= 120),
  last_name text check (length(last_name) <= 120),
  phone text check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  city text check (length(city) <= 120),
  accepts_marketing boolean not null default false,
  note text check (length(note) <= 5000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (email is not null or phone is not null),
  unique (store_id, id)
);
create unique index customer_email_key on customer (store_id, lower(email)) where email is not null;
create index customer_store_created_idx on customer (store_id, created_at desc, id);
select internal.make_tenant_table('customer');

-- Discounts ---------------------------------------------------------------------------------------------
create table discount (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  code text not null check (code ~ '^[A-Z0-9][A-Z0-9_-]{2,39}$'),
  kind text not null check (kind in ('percentage', 'fixed_amount')),
  -- percentage: whole percent 1..100; fixed_amount: minor units of the store's currency.
  value bigint not null check (value > 0),
  starts_at timestamptz not null default now(),
  ends_at timestamptz,
  usage_limit integer check (usage_limit > 0),
  usage_count integer not null default 0 check (usage_count >= 0),
  status text not null default 'active' check (status in ('active', 'disabled')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (kind <> 'percentage' or value <= 100),
  check (ends_at is null or ends_at > starts_at)
);
create unique index discount_code_key on discount (store_id, code);
select internal.make_tenant_table('discount');

-- Store pages (content) ---------------------------------------------------------------------------------
create table page (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  title text not null check (length(btrim(title)) between 1 and 255),
  handle text not null check (handle ~ '^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$'),
  body text not null default '' check (length(body) <= 100000),
  status text not null default 'draft' check (status in ('draft', 'published')),
  published_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (store_id, handle)
);
select internal.make_tenant_table('page');

-- Privileged id lookups for the admin ----------------------------------------------------------------------
-- The stores a person belongs to (the store picker); ids only, the picker reads each store inside it.
select internal.allow_privileged_read('member', 'store_id, user_id, created_at');

create function privileged.store_ids_for_user(p_user_id uuid) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$ select store_id from public.member where user_id = p_user_id order by created_at, store_id limit 200 $$;

-- The store of an open invitation, from the hash of its token (the invitation link).
create function privileged.store_id_by_invitation(p_token_hash text) returns uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.staff_invitation
  where token_hash = p_token_hash and accepted_at is null and revoked_at is null and expires_at > now()
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_ids_for_user(uuid)'::regprocedure,
    'privileged.store_id_by_invitation(text)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
