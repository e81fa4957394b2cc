-- AI approvals: a change an AI client proposed over MCP, waiting for the member who connected it
-- (SPEC "Grants, tokens and approvals"). Runs at most once; expires (docs/decisions/0004-mcp-oauth.md).
create table ai_approval (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  grant_id uuid not null,
  member_id uuid not null,
  source text not null default 'mcp' check (source in ('mcp')),
  tool text not null check (tool ~ '^[a-z][A-Za-z]{1,60}$'),
  procedure text not null check (procedure ~ '^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$'),
  input jsonb not null check (jsonb_typeof(input) = 'object'),
  summary text not null check (length(summary) between 1 and 2000),
  -- What would change, field by field ({field, from, to}), read when the proposal was made.
  diff jsonb not null default '[]'::jsonb check (jsonb_typeof(diff) = 'array'),
  status text not null default 'pending' check (status in ('pending', 'approved', 'rejected', 'failed')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  decided_at timestamptz,
  decided_by uuid,
  result jsonb,
  error text check (length(error) <= 2000),
  foreign key (store_id, grant_id) references api_grant (store_id, id) on delete cascade,
  check ((status = 'pending') = (decided_at is null))
);
create index ai_approval_pending_idx on ai_approval (store_id, member_id, created_at desc) where status = 'pending';
create index ai_approval_recent_idx on ai_approval (store_id, created_at desc);
select internal.make_tenant_table('ai_approval');
