-- A job's failure for one store (issue 12 part 4): the per-store unit that threw, how often, the last
-- error. The admin home shows those of the last day; a later success does not erase them (they age out).
create table job_failure (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  job text not null check (job ~ '^\{[a-z_-]+\}-[a-z_-]+$'),
  error text not null check (length(error) <= 1000),
  failures integer not null default 1 check (failures >= 1),
  first_failed_at timestamptz not null default now(),
  last_failed_at timestamptz not null default now(),
  unique (store_id, job)
);
create index job_failure_recent_idx on job_failure (store_id, last_failed_at desc);
select internal.make_tenant_table('job_failure');
