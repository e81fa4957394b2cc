-- An order's timeline (orders.get) reads its outbox events by the order id in their payload.
create index outbox_event_order_idx on outbox_event (store_id, (payload ->> 'orderId'), created_at) where payload ? 'orderId';
