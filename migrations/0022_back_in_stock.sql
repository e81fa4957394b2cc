-- Back-in-stock alerts (issue 12, `{back-in-stock}-restock`; docs/back-in-stock.md): a shopper asks on a
-- sold-out product page to be told once when a variant is back. One waiting subscription per variant and
-- email; it becomes `sent` (or `failed`, for an address the mail provider refuses) when its alert went out.
-- Subscribing again after an alert makes a new subscription: one alert per subscription, never two.
create table restock_subscription (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  variant_id uuid not null,
  email text not null check (email = lower(email) and position('@' in email) > 1 and length(email) between 3 and 254),
  status text not null default 'waiting' check (status in ('waiting', 'sent', 'failed')),
  event_id uuid,
  created_at timestamptz not null default now(),
  notified_at timestamptz,
  unique (store_id, id),
  foreign key (store_id, variant_id) references product_variant (store_id, id) on delete cascade
);
create unique index restock_subscription_waiting_key on restock_subscription (store_id, variant_id, email) where status = 'waiting';
create index restock_subscription_email_idx on restock_subscription (store_id, email) where status = 'waiting';
create index restock_subscription_store_idx on restock_subscription (store_id, created_at desc);
select internal.make_tenant_table('restock_subscription');
