-- Outbox retention (issue 19 "Scale", phase B; docs/events.md "Retention"): the daily {api}-activity-prune
-- job also deletes the outbox rows that were sent (processed_at) more than 30 days ago, store by store.
--
-- Kept: rows not sent (due, waiting for a retry, or dead: dead rows stay until a merchant retries them), and
-- every row that names an order (order_id, migration 0026): those events are the order's timeline in
-- orders.get, which is kept as long as the order (docs/events.md says why). So the prunable rows are exactly
-- `processed_at is not null and order_id is null`, and both indexes hold those rows only.
--
-- Building the indexes locks outbox_event against writes while this migration runs (a few seconds for the
-- scale fixture); CREATE INDEX CONCURRENTLY cannot run in a migration's transaction.

-- A store's prunable rows, oldest sent first: the job's delete (`store_id = $1 and processed_at < $2`).
create index outbox_event_sent_idx on outbox_event (store_id, processed_at)
  where processed_at is not null and order_id is null;

-- The job's store list: the prunable rows sent before the cutoff, across stores, read from the index alone.
create index outbox_event_sent_at_idx on outbox_event (processed_at, store_id)
  where processed_at is not null and order_id is null;

-- The list reads order_id (to leave the order's events out), besides the columns 0001/0019 granted.
grant select (order_id) on outbox_event to app_privileged;

-- Stores with prunable outbox rows sent before the cutoff. As in store_ids_with_old_activity (0026): a SQL
-- function's body gets a generic plan, which takes `processed_at < $1` to keep a third of the rows; bounded on
-- both sides, the range is taken to be narrow and read from outbox_event_sent_at_idx (only the old rows).
create function privileged.store_ids_with_sent_outbox(p_before timestamptz, p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select distinct store_id from public.outbox_event
  where processed_at < p_before and processed_at >= '-infinity' and order_id is null
  limit greatest(1, least(p_limit, 5000))
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'privileged.store_ids_with_sent_outbox(timestamptz, integer)'::regprocedure
  ] loop
    execute format('alter function %s owner to app_privileged', fn);
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
