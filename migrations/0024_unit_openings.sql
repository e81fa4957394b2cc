-- Units of work in one round trip (docs/decisions/0015-one-round-trip.md, docs/database.md).
--
-- A unit sent over Neon's HTTP path is one non-interactive transaction: its statements are fixed before it
-- leaves the Worker, so nothing can be decided in TypeScript between them. The opening of such a unit is
-- one call to a function below: it sets app.store_id (tenancy, as withStore does), resolves the caller
-- (a session's member, a grant's member, or a member by id) with the same columns the WebSocket path's
-- opening statements read, checks that the caller may run what follows, and hands the caller to the
-- unit's later statements through transaction-local settings:
--
--   app.member_id, app.user_id, app.role, app.grant_id, app.grant_areas, app.contact
--
-- A caller that may not go on makes the function raise SQLSTATE CR001 with the caller it found as JSON in
-- DETAIL: the whole unit rolls back before any of its work runs, and the pipeline turns that caller into
-- the very error the step-by-step checks answer (shared/pipeline/refusal.ts). A session that is unknown
-- or past its lifetime raises CR002.
--
-- The check (p_check, null to only resolve the caller) is computed in TypeScript from the procedure and the
-- door (shared/pipeline/check.ts):
--   roles            roles whose permissions include the procedure's permission (null: any member)
--   areas            grant areas that yield that permission (empty: no grant ever may)
--   memberOnly       the procedure is for members only (access "none"): grants are refused
--   doorBinds        the door binds every caller by the store's AI-client settings (MCP, approvals);
--                    OAuth grants are bound at every door (shared/pipeline/run.ts boundBySettings)
--   customerDetails  the procedure reads customers' contact details
--   mutates          the procedure changes something
--   slug             the store the door was addressed to (MCP URLs), or null

create schema if not exists unit;
revoke all on schema unit from public;
grant usage on schema unit to app_user;

-- Whether the store's AI-client settings bind this caller at this door (boundBySettings).
create function unit.bound(p_caller jsonb, p_check jsonb) returns boolean
language sql immutable set search_path = pg_catalog
as $$ select coalesce((p_check ->> 'doorBinds')::boolean, false) or coalesce(p_caller ->> 'grant_kind' = 'oauth', false) $$;

-- The checks of shared/pipeline/run.ts (checkCaller, steps 3-5) for a resolved caller row.
create function unit.caller_allowed(p_caller jsonb, p_check jsonb) returns boolean
language sql immutable set search_path = pg_catalog
as $$
  select p_check is null or (
    (p_check ->> 'slug' is null or p_check ->> 'slug' = p_caller ->> 'slug')
    and not (coalesce((p_check ->> 'memberOnly')::boolean, false) and p_caller ? 'grant_id')
    and (
      p_check -> 'roles' is null or jsonb_typeof(p_check -> 'roles') = 'null' or (
        (p_check -> 'roles') ? (p_caller ->> 'role')
        and (not p_caller ? 'grant_id'
             or exists (select 1 from jsonb_array_elements_text(p_caller -> 'areas') a
                        where (p_check -> 'areas') ? a))
      )
    )
    and not (unit.bound(p_caller, p_check) and coalesce((p_check ->> 'customerDetails')::boolean, false)
             and not (p_caller ->> 'mcp_read_customer_details')::boolean)
    and not (unit.bound(p_caller, p_check) and coalesce((p_check ->> 'mutates')::boolean, false)
             and not (p_caller ->> 'mcp_allow_changes')::boolean)
  )
$$;

-- Hands a usable caller to the unit's statements, or refuses with the caller in DETAIL.
-- p_detail is what DETAIL carries on refusal (the caller row by default).
create function unit.admit(p_caller jsonb, p_check jsonb, p_usable boolean, p_detail jsonb default null) returns jsonb
language plpgsql volatile set search_path = pg_catalog
as $$
begin
  if not p_usable or not unit.caller_allowed(p_caller, p_check) then
    raise exception using errcode = 'CR001', message = 'caller refused',
      detail = coalesce(p_detail, jsonb_build_object('caller', p_caller))::text;
  end if;
  perform set_config('app.member_id', p_caller ->> 'member_id', true),
          set_config('app.user_id', p_caller ->> 'user_id', true),
          set_config('app.role', p_caller ->> 'role', true),
          set_config('app.grant_id', coalesce(p_caller ->> 'grant_id', ''), true),
          set_config('app.grant_areas', coalesce((select array_agg(a)::text from jsonb_array_elements_text(p_caller -> 'areas') a), ''), true),
          set_config('app.contact',
            case when unit.bound(p_caller, p_check) and not (p_caller ->> 'mcp_read_customer_details')::boolean
                 then 'off' else 'on' end, true);
  return p_caller;
end
$$;

-- The unit's store and the member's place in it (shared/db/statements.ts membershipOf), as JSON.
create function unit.member_row(p_user_id uuid) returns jsonb
language sql stable set search_path = pg_catalog, public
as $$
  select jsonb_build_object(
    'id', s.id, 'slug', s.slug, 'name', s.name, 'currency', s.currency,
    'mcp_read_customer_details', s.mcp_read_customer_details, 'mcp_allow_changes', s.mcp_allow_changes,
    'mcp_changes_need_approval', s.mcp_changes_need_approval,
    'member_id', m.id, 'user_id', m.user_id, 'role', m.role)
  from store s left join member m on m.store_id = s.id and m.user_id = p_user_id
  where s.id = nullif(current_setting('app.store_id', true), '')::uuid
$$;

-- A grant with its member (role read now) and store (shared/db/statements.ts GRANT_COLUMNS), as JSON.
create function unit.grant_row(p_grant_id uuid) returns jsonb
language sql stable set search_path = pg_catalog, public
as $$
  select jsonb_build_object(
    'grant_id', g.id, 'grant_kind', g.kind, 'areas', to_jsonb(g.areas), 'revoked_at', g.revoked_at,
    'expired', g.expires_at is not null and g.expires_at <= now(),
    'member_id', m.id, 'user_id', m.user_id, 'role', m.role,
    'id', s.id, 'slug', s.slug, 'name', s.name, 'currency', s.currency,
    'mcp_read_customer_details', s.mcp_read_customer_details, 'mcp_allow_changes', s.mcp_allow_changes,
    'mcp_changes_need_approval', s.mcp_changes_need_approval)
  from api_grant g
  join member m on m.store_id = g.store_id and m.id = g.member_id
  join store s on s.id = g.store_id
  where g.store_id = nullif(current_setting('app.store_id', true), '')::uuid and g.id = p_grant_id
$$;

-- A signed-in person (the session cookie's id, hashed) working in the session's active store.
-- Answers {"session": {...}, "caller": {...}}; CR002 when the session is unknown, idle too long or past
-- its lifetime. `touch` says the session's last_seen_at is older than p_touch_after seconds: the door
-- refreshes it after the answer (the unit itself may be READ ONLY).
create function unit.open_session(p_id_hash text, p_idle_seconds integer, p_touch_after integer, p_check jsonb) returns jsonb
language plpgsql volatile set search_path = pg_catalog, public
as $$
declare
  s record;
  v_session jsonb;
  v_caller jsonb;
begin
  select se.id_hash, se.user_id, se.active_store_id, u.email, u.name,
         se.last_seen_at < now() - make_interval(secs => p_touch_after) as touch
    into s
    from session se join user_account u on u.id = se.user_id
   where se.id_hash = p_id_hash and se.expires_at > now() and se.last_seen_at > now() - make_interval(secs => p_idle_seconds);
  if not found then
    raise exception using errcode = 'CR002', message = 'no session';
  end if;
  v_session := jsonb_build_object('idHash', s.id_hash, 'userId', s.user_id, 'email', s.email, 'name', s.name,
                                  'activeStoreId', s.active_store_id, 'touch', s.touch);
  perform set_config('app.store_id', coalesce(s.active_store_id::text, ''), true);
  v_caller := case when s.active_store_id is null then null else unit.member_row(s.user_id) end;
  perform unit.admit(v_caller, p_check, v_caller is not null and v_caller ->> 'member_id' is not null,
                     jsonb_build_object('session', v_session, 'caller', v_caller));
  return jsonb_build_object('session', v_session, 'caller', v_caller);
end
$$;

-- A member by user id in a known store (the session already looked up, e.g. by a page's earlier unit).
create function unit.open_member(p_store_id uuid, p_user_id uuid, p_check jsonb) returns jsonb
language plpgsql volatile set search_path = pg_catalog, public
as $$
declare v_caller jsonb;
begin
  perform set_config('app.store_id', p_store_id::text, true);
  v_caller := unit.member_row(p_user_id);
  return jsonb_build_object('caller', unit.admit(v_caller, p_check, v_caller is not null and v_caller ->> 'member_id' is not null));
end
$$;

-- A created token's grant, by the SHA-256 of its secret; the store comes from the privileged lookup.
create function unit.open_token(p_token_hash text, p_check jsonb) returns jsonb
language plpgsql volatile set search_path = pg_catalog, public
as $$
declare v_caller jsonb;
begin
  perform set_config('app.store_id', coalesce(privileged.store_id_by_token_hash(p_token_hash)::text, ''), true);
  v_caller := unit.grant_row((select id from api_grant
                               where store_id = nullif(current_setting('app.store_id', true), '')::uuid
                                 and secret_hash = p_token_hash and kind = 'token'));
  return jsonb_build_object('caller', unit.admit(v_caller, p_check,
    v_caller is not null and v_caller ->> 'revoked_at' is null and not (v_caller ->> 'expired')::boolean));
end
$$;

-- An OAuth connection's grant (its id and store come from the provider's verified props).
create function unit.open_grant(p_store_id uuid, p_grant_id uuid, p_check jsonb) returns jsonb
language plpgsql volatile set search_path = pg_catalog, public
as $$
declare v_caller jsonb;
begin
  perform set_config('app.store_id', p_store_id::text, true);
  v_caller := unit.grant_row(p_grant_id);
  return jsonb_build_object('caller', unit.admit(v_caller, p_check,
    v_caller is not null and v_caller ->> 'revoked_at' is null and not (v_caller ->> 'expired')::boolean));
end
$$;

-- Whether the unit's caller holds a permission, given the roles that have it and the grant areas that
-- yield it (the same rule as unit.caller_allowed), for statements that show more to some callers.
create function unit.caller_can(p_roles text[], p_areas text[]) returns boolean
language sql stable set search_path = pg_catalog
as $$
  select coalesce(current_setting('app.role', true), '') = any(p_roles)
     and (coalesce(current_setting('app.grant_id', true), '') = ''
          or coalesce(nullif(current_setting('app.grant_areas', true), ''), '{}')::text[] && p_areas)
$$;

-- A refusal decided inside a unit (a row that is not there, a state that forbids the change): raises
-- SQLSTATE CE + the HTTP-ish code's three digits, with the message and JSON data the pipeline answers.
create function unit.fail(p_code text, p_message text, p_data jsonb default null) returns void
language plpgsql volatile set search_path = pg_catalog
as $$
begin
  raise exception using errcode = 'CE' || p_code, message = p_message, detail = coalesce(p_data, '{}'::jsonb)::text;
end
$$;

do $$
declare fn regprocedure;
begin
  foreach fn in array array[
    'unit.bound(jsonb, jsonb)'::regprocedure,
    'unit.caller_allowed(jsonb, jsonb)'::regprocedure,
    'unit.admit(jsonb, jsonb, boolean, jsonb)'::regprocedure,
    'unit.member_row(uuid)'::regprocedure,
    'unit.grant_row(uuid)'::regprocedure,
    'unit.open_session(text, integer, integer, jsonb)'::regprocedure,
    'unit.open_member(uuid, uuid, jsonb)'::regprocedure,
    'unit.open_token(text, jsonb)'::regprocedure,
    'unit.open_grant(uuid, uuid, jsonb)'::regprocedure,
    'unit.caller_can(text[], text[])'::regprocedure,
    'unit.fail(text, text, jsonb)'::regprocedure
  ] loop
    execute format('revoke all on function %s from public', fn);
    execute format('grant execute on function %s to app_user', fn);
  end loop;
end
$$;
