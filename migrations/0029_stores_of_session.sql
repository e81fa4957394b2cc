-- The store picker in one round trip (docs/decisions/0015-one-round-trip.md): a signed-in person's session
-- and the stores they are a member of, each read inside its own store. The ids come from the privileged
-- lookup (SPEC rule 3: ids only); each store's name and the person's role in it are read with app.store_id
-- set to that store, under RLS, as the picker did one unit per store before.
create function unit.stores_of_session(p_id_hash text, p_idle_seconds integer, p_touch_after integer) returns jsonb
language plpgsql volatile set search_path = pg_catalog, public
as $$
declare
  s record;
  v_id uuid;
  v_row jsonb;
  v_stores jsonb := '[]'::jsonb;
begin
  select se.id_hash, se.user_id, se.active_store_id, u.email, u.name,
         se.last_seen_at < now() - make_interval(secs => p_touch_after) as touch
    into s
    from session se join user_account u on u.id = se.user_id
   where se.id_hash = p_id_hash and se.expires_at > now() and se.last_seen_at > now() - make_interval(secs => p_idle_seconds);
  if not found then
    raise exception using errcode = 'CR002', message = 'no session';
  end if;
  for v_id in select privileged.store_ids_for_user(s.user_id) loop
    perform set_config('app.store_id', v_id::text, true);
    select jsonb_build_object('id', st.id, 'slug', st.slug, 'name', st.name, 'role', m.role) into v_row
      from store st join member m on m.store_id = st.id and m.user_id = s.user_id where st.id = v_id;
    if v_row is not null then v_stores := v_stores || v_row; end if;
  end loop;
  perform set_config('app.store_id', '', true);
  return jsonb_build_object(
    'session', jsonb_build_object('idHash', s.id_hash, 'userId', s.user_id, 'email', s.email, 'name', s.name,
                                  'activeStoreId', s.active_store_id, 'touch', s.touch),
    'stores', v_stores);
end
$$;

revoke all on function unit.stores_of_session(text, integer, integer) from public;
grant execute on function unit.stores_of_session(text, integer, integer) to app_user;
