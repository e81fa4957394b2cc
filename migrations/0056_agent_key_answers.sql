-- An agent's Idempotency-Key keeps the answer of whatever the operation answered (docs/ucp.md): UCP asks that
-- the same key and request hear the same answer again, a refusal of the operation (a finished session's 409, a
-- session not found) included. The API's keys (members and grants) keep only successes, as before: a refused
-- API call rolls back with its key.
alter table idempotency_key drop constraint idempotency_key_status_check,
  add constraint idempotency_key_status_check check (status between 200 and 299 or (owner ~ '^agent:' and status between 400 and 499));

-- The agent platform's order webhook URL passes the apps' URL policy before it is kept (shared/apps/url.ts):
-- https to a public host, or, with APP_ENV development, the developer's own machine over http (the worker's
-- local agent platform). The column's check only bounds its form.
alter table ucp_checkout_session drop constraint ucp_checkout_session_webhook_url_check,
  add constraint ucp_checkout_session_webhook_url_check check (webhook_url is null or (webhook_url ~ '^https?://' and length(webhook_url) <= 2048));
