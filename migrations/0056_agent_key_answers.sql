-- An agent's Idempotency-Key keeps the answer of whatever the operation answered (docs/ucp.md): UCP asks that
-- the same key and request hear the same answer again, a refusal of the operation (a finished session's 409, a
-- session not found) included. The API's keys (members and grants) keep only successes, as before: a refused
-- API call rolls back with its key.
alter table idempotency_key drop constraint idempotency_key_status_check,
  add constraint idempotency_key_status_check check (status between 200 and 299 or (owner ~ '^agent:' and status between 400 and 499));
