-- The store's assistant's daily token budget (issue 24 item 5): how many model tokens (prompt and answer)
-- the store's conversations may use in a day, India's day (Asia/Kolkata, as the admin's "today"), and what
-- each day used. 0 turns the assistant off. A model call is refused before it is made once the day's
-- tokens reach the budget; a call in flight when it is reached finishes (its tokens are counted after it).
alter table store add column assistant_daily_tokens integer not null default 200000
  check (assistant_daily_tokens between 0 and 100000000);

create table assistant_usage (
  store_id uuid not null references store (id) on delete cascade,
  day date not null,
  input_tokens bigint not null default 0 check (input_tokens >= 0),
  output_tokens bigint not null default 0 check (output_tokens >= 0),
  model_calls integer not null default 0 check (model_calls >= 0),
  updated_at timestamptz not null default now(),
  primary key (store_id, day)
);
select internal.make_tenant_table('assistant_usage');
