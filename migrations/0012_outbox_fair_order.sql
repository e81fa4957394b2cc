-- The relay's list of stores with due outbox rows, longest-waiting first: with more stores than one pass
-- takes, a store is never starved behind newer ones (the list was unordered before).
create or replace function privileged.store_ids_with_pending_outbox(p_limit integer default 500) returns setof uuid
language sql stable security definer set search_path = pg_catalog, public
as $$
  select store_id from public.outbox_event
  where processed_at is null and available_at <= now()
  group by store_id
  order by min(available_at), store_id
  limit greatest(1, least(p_limit, 5000))
$$;
