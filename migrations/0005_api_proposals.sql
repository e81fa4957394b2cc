-- Changes an OAuth connection makes through the token API (/api/v1) wait in AI approvals too while the
-- store's 'Changes need approval' is on (docs/decisions/0005-doors-and-limits.md). Such a proposal names
-- the procedure it would run; the assistant's tool name is kept when the change came through an MCP tool.
alter table ai_approval drop constraint ai_approval_source_check;
alter table ai_approval add constraint ai_approval_source_check check (source in ('mcp', 'api'));
alter table ai_approval alter column tool drop not null;
