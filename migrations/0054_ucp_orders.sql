-- Orders placed by shoppers' AI agents (issue 26 items 3-5; docs/ucp.md): the channel an order came through,
-- shown in the admin and the API ('online_store': the storefront's own checkout; 'ucp': a checkout session an
-- agent completed over the Universal Commerce Protocol), and, on the session, where the agent's platform takes
-- order updates (its profile's `dev.ucp.shopping.order` webhook URL, read when the session is completed).
alter table shop_order add column channel text not null default 'online_store'
  check (channel in ('online_store', 'ucp'));

alter table ucp_checkout_session add column webhook_url text
  check (webhook_url is null or (webhook_url ~ '^https://' and length(webhook_url) <= 2048));

-- A completed session by its order (the order updates find their agent), and the agents that bought (Settings →
-- Sales channels), each under the store's row-level security.
create unique index ucp_checkout_session_order_idx on ucp_checkout_session (store_id, order_id) where order_id is not null;
create index ucp_checkout_session_agent_idx on ucp_checkout_session (store_id, agent_profile, created_at desc) where order_id is not null;
