-- The payment-window, pre-order balance and tracking jobs (issue 12): what they remember, their indexes,
-- and the privileged id lookups that tell them which stores have work (docs/order-status.md).

-- Pre-orders paid by deposit ("Pre-orders" in docs/order-status.md). 100 = pay in full, no balance.
alter table store add column preorder_deposit_percent integer not null default 100
  check (preorder_deposit_percent between 1 and 100);

-- The part of the total that waits for the backordered pre-order units (0: none), and the balance's steps.
alter table shop_order add column balance_amount bigint not null default 0;
alter table shop_order add constraint shop_order_balance_amount_check check (balance_amount between 0 and total);
alter table shop_order add column balance_requested_at timestamptz;
alter table shop_order add column balance_reminded_at timestamptz;
alter table shop_order add column balance_expired_at timestamptz;
-- A manual-transfer order's reminder before its payment window closes, sent once.
alter table shop_order add column payment_reminded_at timestamptz;

-- The units of a parcel line that were backordered at checkout (fixed; `reserved` changes). Rows placed
-- before this column are 0: the balance job only reads it on orders that have a balance, all placed since.
alter table fulfillment_order_line add column backordered integer not null default 0;
alter table fulfillment_order_line add constraint fulfillment_order_line_backordered_check check (backordered between 0 and quantity);

-- An unpaid pre-order balance after its 7 days: the merchant decides (refund the deposit, or wait).
alter table merchant_task drop constraint merchant_task_kind_check;
alter table merchant_task add constraint merchant_task_kind_check check (kind in ('rto', 'paid_late', 'refund_failed', 'balance_expired'));

-- When the tracking job last asked the courier about a shipment: it asks the longest-unasked first.
alter table shipment add column tracked_at timestamptz;

-- The jobs' work lists.
create index shop_order_unpaid_due_idx on shop_order (store_id, expires_at)
  where status = 'open' and payment_status in ('unpaid', 'pending', 'authorized');
create index shop_order_balance_idx on shop_order (store_id, placed_at)
  where status = 'open' and balance_amount > 0 and balance_expired_at is null;

select internal.allow_privileged_read('shop_order',
  'id, store_id, status, payment_status, payment_method, expires_at, payment_reminded_at, placed_at, balance_amount, balance_requested_at, balance_reminded_at, balance_expired_at');
select internal.allow_privileged_read('fulfillment_order', 'id, store_id, order_id, location_id');
select internal.allow_privileged_read('fulfillment_order_line', 'store_id, fulfillment_order_id, order_line_id, quantity, reserved');
select internal.allow_privileged_read('order_line', 'id, store_id, variant_id');
select internal.allow_privileged_read('inventory_level', 'store_id, variant_id, location_id, on_hand, reserved');
select internal.allow_privileged_read('shipment', 'store_id, provider, status, tracked_at');

-- Stores with open orders that hold no captured money and whose payment window closed by p_now, or a
-- manual-transfer order due its reminder (window closing by p_remind_until); longest-waiting first.
create function privileged.store_ids_with_unpaid_orders_due(p_now timestamptz, p_remind_until timestamptz, p_limit integer default 500)
returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.shop_order
  where status = 'open' and payment_status in ('unpaid', 'pending', 'authorized')
    and (expires_at <= p_now
         or (payment_method = 'manual_transfer' and payment_reminded_at is null and expires_at <= p_remind_until))
  group by store_id
  order by min(expires_at), store_id
  limit greatest(1, least(p_limit, 5000))
$$;

-- Stores with pre-order balance work: a deposit-paid order whose backordered units have stock at their
-- parcel's location now, a balance requested before p_remind_before and not reminded, or requested
-- before p_expire_before and not expired.
create function privileged.store_ids_with_preorder_balance_work(p_remind_before timestamptz, p_expire_before timestamptz, p_limit integer default 500)
returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select o.store_id from public.shop_order o
  where o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_amount > 0 and o.balance_expired_at is null
    and ((o.balance_requested_at is null and exists (
            select 1 from public.fulfillment_order f
            join public.fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id and fl.reserved < fl.quantity
            join public.order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
            join public.inventory_level il on il.store_id = f.store_id and il.variant_id = ol.variant_id
              and il.location_id = f.location_id and il.on_hand > il.reserved
            where f.store_id = o.store_id and f.order_id = o.id))
         or (o.balance_requested_at <= p_remind_before and o.balance_reminded_at is null)
         or o.balance_requested_at <= p_expire_before)
  group by o.store_id
  order by min(o.placed_at), o.store_id
  limit greatest(1, least(p_limit, 5000))
$$;

-- Stores with shipments still on their way that a courier can be asked about (not the merchant's own
-- tracking numbers), the store whose shipments were asked about longest ago first.
create function privileged.store_ids_with_open_shipments(p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.shipment
  where status in ('pending', 'in_transit', 'rto_initiated') and provider <> 'manual'
  group by store_id
  order by min(coalesce(tracked_at, '-infinity'::timestamptz)), store_id
  limit greatest(1, least(p_limit, 5000))
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_ids_with_unpaid_orders_due(timestamptz, timestamptz, integer)'::regprocedure,
    'privileged.store_ids_with_preorder_balance_work(timestamptz, timestamptz, integer)'::regprocedure,
    'privileged.store_ids_with_open_shipments(integer)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
