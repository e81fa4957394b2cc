-- The store's assistant's conversations (issue 24 item 1): one row per conversation, its member's and store's,
-- so a member's history is listed, resumed and deleted from the admin. The messages themselves are held by the
-- conversation's Durable Object; this row is its index (title, how many messages, when it last changed).
create table assistant_conversation (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  member_id uuid not null,
  title text not null check (length(btrim(title)) between 1 and 200),
  messages integer not null default 0 check (messages >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- A member's conversations go with the member (removing someone from the store removes their history).
  foreign key (store_id, member_id) references member (store_id, id) on delete cascade
);
create index assistant_conversation_member_idx on assistant_conversation (store_id, member_id, updated_at desc, id);
select internal.make_tenant_table('assistant_conversation');
