-- Unpaid holds bounded (issue 20 items 2, 3 and 12; docs/decisions/0020-unpaid-holds.md). An unpaid order
-- holds its stock until its window closes; this bounds who can make one and for how long, gives a
-- discount's use back when the order closes unpaid, and lets the recompute write every status change.

-- Bank transfer is a store setting, off for a new store. A store that has taken a transfer order keeps
-- offering it (its shoppers and its bank details already count on it); the rest never used it and lose
-- nothing. The hold window of a transfer order is a setting too: 72 hours as before, at most 7 days.
alter table store
  add column manual_transfer_enabled boolean not null default false,
  add column transfer_hold_hours integer not null default 72 check (transfer_hold_hours between 1 and 168);
-- The backfills below read and write every store's rows: row security is lifted for the owner while they
-- run (as 0026 and 0031 do) and forced again after the last one.
alter table store no force row level security;
alter table shop_order no force row level security;
alter table discount no force row level security;
update store s set manual_transfer_enabled = true
 where exists (select 1 from shop_order o where o.store_id = s.id and o.payment_method = 'manual_transfer');

-- The product page says what a pre-order pays now and later: a new deposit percent bumps the storefront's
-- catalogue version like the name does (0008), so no cached page shows the old one.
drop trigger touch_storefront on store;
create trigger touch_storefront after update of name, currency, storefront_password_hash, preorder_deposit_percent on store
  for each row execute function internal.touch_storefront();

-- On the order:
--   buyer_network_hash  SHA-256 (hex) of the store id and the buyer's network (the IPv4 address, or the
--                       IPv6 /64), from the storefront's cf-connecting-ip: what the per-network limit
--                       counts. The address itself is never stored (the decision record says why).
--   discount_id         the discount whose use checkout counted (its code may be renamed since), so the
--                       use can be given back.
--   cancelled_at,       the facts cancel and the expiry write; the recompute derives `cancelled` and
--   expired_at          `expired` from them (docs/order-status.md), as it derives every other status.
alter table shop_order
  add column buyer_network_hash text check (buyer_network_hash ~ '^[0-9a-f]{64}$'),
  add column discount_id uuid,
  add column cancelled_at timestamptz,
  add column expired_at timestamptz,
  add constraint shop_order_closed_once_check check (cancelled_at is null or expired_at is null);

-- Orders closed before these columns existed get their fact from the status they have; open orders learn
-- their discount by its code (unique in its store), so a later expiry or cancel gives its use back.
update shop_order set cancelled_at = updated_at where status = 'cancelled';
update shop_order set expired_at = updated_at where status = 'expired';
update shop_order o set discount_id = d.id
  from discount d
 where o.status = 'open' and o.discount_code is not null and d.store_id = o.store_id and d.code = o.discount_code;
alter table store force row level security;
alter table shop_order force row level security;
alter table discount force row level security;

-- The holds an email or a network has open in a store, counted by checkout's change (at most 3 each).
create index shop_order_holds_email_idx on shop_order (store_id, email_lower, expires_at)
  where status = 'open' and payment_status in ('unpaid', 'pending', 'authorized');
create index shop_order_holds_network_idx on shop_order (store_id, buyer_network_hash, expires_at)
  where status = 'open' and payment_status in ('unpaid', 'pending', 'authorized') and buyer_network_hash is not null;
