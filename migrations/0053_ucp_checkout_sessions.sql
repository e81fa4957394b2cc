-- UCP checkout sessions (issue 26 item 3; docs/ucp.md, docs/decisions/0042-ucp.md): what a shopper's AI agent
-- asked for over `/api/ucp/checkout-sessions`, kept as the agent sent it (line items by variant id and
-- quantity, the buyer, the shipping address, the discount codes). Prices, stock, totals and messages are never
-- stored: every answer recomputes them from the catalogue with the cart's own code, so a session shows what
-- the store sells now. A session lives 6 hours (the specification's default) and is the agent's that made it.
create table ucp_checkout_session (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  -- The profile URL of the agent's platform (its `UCP-Agent` header) that created the session.
  agent_profile text not null check (length(agent_profile) between 9 and 2048),
  status text not null default 'incomplete'
    check (status in ('incomplete', 'requires_escalation', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled')),
  -- [{"variant_id": uuid, "quantity": 1..}] as the agent sent them, in its order.
  line_items jsonb not null default '[]' check (jsonb_typeof(line_items) = 'array' and jsonb_array_length(line_items) <= 100),
  -- {"email", "first_name", "last_name", "phone_number"}; null when the agent sent none.
  buyer jsonb check (buyer is null or jsonb_typeof(buyer) = 'object'),
  -- The one shipping address (the fulfillment extension's destination); null when the agent sent none.
  destination jsonb check (destination is null or jsonb_typeof(destination) = 'object'),
  discount_codes text[] not null default '{}' check (cardinality(discount_codes) <= 10),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '6 hours',
  -- The order completing the session placed (set once, when it is completed).
  order_id uuid,
  foreign key (store_id, order_id) references shop_order (store_id, id) on delete set null (order_id)
);
create index ucp_checkout_session_store_idx on ucp_checkout_session (store_id, created_at desc);
select internal.make_tenant_table('ucp_checkout_session');

-- An agent's Idempotency-Key on a session's create, update or cancel is kept with the API's keys (migration
-- 0051: per store and owner, 24 hours, the same daily prune), its owner the agent: 'agent:' and the SHA-256 of
-- its `UCP-Agent` profile URL.
alter table idempotency_key drop constraint idempotency_key_owner_check,
  add constraint idempotency_key_owner_check check (owner ~ '^(grant|member):[0-9a-f-]{36}$' or owner ~ '^agent:[0-9a-f]{64}$');
