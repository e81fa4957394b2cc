-- Guards for one-round-trip writes (docs/decisions/0015-one-round-trip.md): a change sent as one
-- non-interactive transaction cannot stop between its statements to decide in TypeScript, so a statement
-- that must hold for the change to go on says so in SQL, and the whole unit rolls back when it does not.

-- Raises SQLSTATE CE<code> (code: the HTTP status of the pipeline's error code, e.g. '404') with the
-- message and JSON data the pipeline answers, unless p_ok; answers true. The usual form locks what the
-- change will touch in the same statement: unit.ensure(exists(select 1 from t where ... for update), ...).
create function unit.ensure(p_ok boolean, p_code text, p_message text, p_data jsonb default null) returns boolean
language plpgsql volatile set search_path = pg_catalog
as $$
begin
  if p_ok is not true then
    raise exception using errcode = 'CE' || p_code, message = p_message, detail = coalesce(p_data, '{}'::jsonb)::text;
  end if;
  return true;
end
$$;

-- Raises CR409 unless p_ok: what a change's first trip read has changed since (a lost race). The
-- pipeline reads again and retries the change a few times before answering 409.
create function unit.unchanged(p_ok boolean) returns boolean
language plpgsql volatile set search_path = pg_catalog
as $$
begin
  if p_ok is not true then
    raise exception using errcode = 'CR409', message = 'changed since read';
  end if;
  return true;
end
$$;

revoke all on function unit.ensure(boolean, text, text, jsonb) from public;
grant execute on function unit.ensure(boolean, text, text, jsonb) to app_user;
revoke all on function unit.unchanged(boolean) from public;
grant execute on function unit.unchanged(boolean) to app_user;
