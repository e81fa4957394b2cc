-- The store's assistant (issue 24): a change its model asks for is a proposal, as over MCP, that waits for
-- the member in the conversation. Its row names no grant: the member is signed in, and approving runs the
-- change as that member, their role read at that moment, the store's AI settings applied.
alter table ai_approval drop constraint ai_approval_source_check;
alter table ai_approval add constraint ai_approval_source_check check (source in ('mcp', 'api', 'assistant'));
alter table ai_approval add constraint ai_approval_assistant_grant_check check (source <> 'assistant' or grant_id is null);
