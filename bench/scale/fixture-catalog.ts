/**
 * The scale fixture, part 1: helpers and the catalogue. 10,000 stores (store 1 is "Big Store", slug `big`),
 * each with an owner, a verified domain `s<n>.scale.test`, its locations, products and variants; the
 * customers are staged here and written later (their created_at is their first order's). Everything is
 * set-based and deterministic (hashes of row numbers), except the random uuids. Staging tables live in the
 * schema `scale_fixture`, unlogged, and are dropped at the end.
 */
export const SCALE = {
  stores: 10_000,
  totalOrders: 1_002_378,
  bigOrders: 200_000,
  bigCustomers: 50_000,
  bigProducts: 200,
  /** Pre-order variants of the big store (products 1 and 2): only its deposit orders use them. */
  bigPreorderVariants: 6,
} as const;

/** A deterministic number in [0, 1) from a key and a salt. */
export const u = (key: string, salt: number) => `scale_fixture.u((${key})::bigint * 97 + ${salt})`;
/** One of a text array, picked by a number in [0, 1). */
export const pick = (array: string, x: string) => `(${array})[1 + floor((${x}) * cardinality(${array}))::int]`;

const words = (list: string) => `array[${list.split(" ").map((w) => `'${w}'`).join(", ")}]`;
export const FIRST = words("aarav vivaan aditya vihaan arjun sai reyansh krishna ishaan rohan kabir ananya diya aadhya saanvi pari anika navya myra sara ira priya neha pooja kavya meera rahul amit vikram suresh ramesh deepak anjali sneha divya lakshmi farhan imran zoya ayesha john maria");
export const LAST = words("sharma verma gupta singh kumar patel shah mehta iyer nair reddy rao menon pillai das bose banerjee chatterjee mukherjee ghosh khan ali joshi kulkarni deshpande jain agarwal bansal malhotra kapoor chopra sethi bhat hegde naidu gill sandhu dsouza fernandes");
const DOMAINS = words("gmail.com gmail.com gmail.com yahoo.co.in outlook.com hotmail.com rediffmail.com icloud.com proton.me example.in");
export const CITIES = words("Mumbai Pune Bengaluru Delhi Chennai Hyderabad Kolkata Ahmedabad Jaipur Lucknow Kochi Chandigarh Indore Bhopal Patna Guwahati Panaji Surat Nagpur Coimbatore");
export const STATES = words("IN-MH IN-MH IN-KA IN-DL IN-TN IN-TS IN-WB IN-GJ IN-RJ IN-UP IN-KL IN-CH IN-MP IN-MP IN-BR IN-AS IN-GA IN-GJ IN-MH IN-TN");
export const PINS = words("400 411 560 110 600 500 700 380 302 226 682 160 452 462 800 781 403 395 440 641");
const ADJ = words("classic urban royal green happy little golden silver desi modern handmade organic bright coastal vintage");
const NOUN = words("threads bazaar kitchen crafts corner studio basket house market works looms spices leaf tea goods");
const ITEM = words("kurta saree scarf mug notebook candle lamp tote cushion bowl shirt dupatta bangle planter tea-blend soap");

/** A step of the build: one statement with parameters, or a script of several without. */
export interface Step {
  name: string;
  sql: string;
  params?: unknown[];
}

/** Steps in order, each its own transaction. The owners' step takes a password hash as `$1`. */
export const catalogSteps = (passwordHash: string): Step[] => [
  {
    name: "helpers",
    sql: `
create schema if not exists scale_fixture;
create or replace function scale_fixture.u(k bigint) returns float8 language sql immutable parallel safe
  as $$ select (hashint8(k)::float8 + 2147483648.0) / 4294967296.0 $$;
drop table if exists scale_fixture.params;
create unlogged table scale_fixture.params as select date_trunc('minute', now()) as now_at;`,
  },
  {
    name: "stores (staging)",
    sql: `
create unlogged table scale_fixture.st as
with w as (
  select n, case when n = 1 then 0::numeric else round(power((n - 1)::numeric, -0.7), 18) end as w
  from generate_series(1, ${SCALE.stores}) n
), c as (select n, w, sum(w) over (order by n) as cw, sum(w) over () as tw from w),
b as (
  select n,
    case when n = 1 then ${SCALE.bigOrders}
      else (floor(${SCALE.totalOrders - SCALE.bigOrders} * cw / tw) - floor(${SCALE.totalOrders - SCALE.bigOrders} * (cw - w) / tw))::int end as n_orders
  from c
)
select n, gen_random_uuid() as id, gen_random_uuid() as user_id, gen_random_uuid() as member_id,
  case when n = 1 then 'big' else 's' || n end as slug,
  case when n = 1 then 'Big Store' else initcap(${pick(ADJ, u("n", 1))}) || ' ' || initcap(${pick(NOUN, u("n", 2))}) || ' ' || n end as name,
  n_orders,
  case when n = 1 then ${SCALE.bigCustomers} else greatest(3, ceil(n_orders * 0.4)::int + 2) end as n_customers,
  case when n = 1 then ${SCALE.bigCustomers - 2000} else greatest(1, ceil(n_orders * 0.4)::int) end as n_buyers,
  case when n = 1 then ${SCALE.bigProducts} else 3 + n % 5 end as n_products,
  case when n = 1 then 3 else 2 end as vpp,
  case when n = 1 then 3 else 1 end as n_locations,
  case when n = 1 then 'gst_5' else (array['gst_18','gst_18','gst_18','gst_18','gst_18','gst_5','gst_5','gst_5','gst_40','gst_40','gst_exempt','gst_exempt','gst_0'])[1 + floor(${u("n", 3)} * 13)::int] end as tax_class,
  case when n = 1 or ${u("n", 4)} < 0.6 then 4900 else 0 end::bigint as shipping_fee,
  case when n = 1 then 50 else 100 end as deposit_percent,
  floor(${u("n", 5)} * 20)::int + 1 as city_idx,
  p.now_at - case when n = 1 then interval '760 days' else interval '30 days' + interval '700 days' * ${u("n", 6)} end as opened_at
from b, scale_fixture.params p;
alter table scale_fixture.st add primary key (n);
create unique index on scale_fixture.st (id);
alter table scale_fixture.st add column n_variants int generated always as (n_products * vpp) stored;`,
  },
  {
    name: "owners",
    sql: `insert into user_account (id, email, name, password_hash, created_at, updated_at)
select user_id, 'owner@' || slug || '.scale.test', 'Owner of ' || name, $1, opened_at, opened_at from scale_fixture.st order by n`,
    params: [passwordHash],
  },
  {
    name: "stores, members, domains",
    sql: `
insert into store (id, slug, name, currency, shipping_fee_minor, free_shipping_over_minor, preorder_deposit_percent, created_at, updated_at)
select id, slug, name, 'INR', shipping_fee, case when shipping_fee > 0 then 99900 end, deposit_percent, opened_at, opened_at from scale_fixture.st order by n;
insert into member (id, store_id, user_id, role, created_at, updated_at)
select member_id, id, user_id, 'owner', opened_at, opened_at from scale_fixture.st order by n;
insert into store_domain (store_id, hostname, status, is_primary, verified_at, created_at, updated_at)
select id, 's' || n || '.scale.test', 'verified', true, opened_at + interval '1 hour', opened_at, opened_at from scale_fixture.st order by n;`,
  },
  {
    name: "locations, products, variants",
    sql: `
create unlogged table scale_fixture.loc as
select s.n, s.id as store_id, i as idx, gen_random_uuid() as id,
  case when s.n = 1 then (array['Mumbai Warehouse','Bengaluru Hub','Delhi Store'])[i] else 'Warehouse' end as name,
  case when s.n = 1 then (array['Mumbai','Bengaluru','Delhi'])[i] else (${CITIES})[s.city_idx] end as city,
  case when s.n = 1 then (array['IN-MH','IN-KA','IN-DL'])[i] else (${STATES})[s.city_idx] end as state,
  s.opened_at
from scale_fixture.st s cross join lateral generate_series(1, s.n_locations) i;
create unique index on scale_fixture.loc (n, idx);
insert into location (id, store_id, name, sells_online, city, state, priority, created_at, updated_at)
select id, store_id, name, true, city, state, 100 * idx, opened_at, opened_at from scale_fixture.loc order by n, idx;

create unlogged table scale_fixture.prod as
select s.n, s.id as store_id, p as idx, gen_random_uuid() as id, t.title,
  trim(both '-' from lower(regexp_replace(t.title, '[^A-Za-z0-9]+', '-', 'g'))) || '-' || p as handle,
  case when ${u("s.n * 1000 + p", 9)} < 0.9 then 'active' when ${u("s.n * 1000 + p", 9)} < 0.95 then 'draft' else 'archived' end as status,
  s.opened_at + interval '1 minute' * p as created_at
from scale_fixture.st s cross join lateral generate_series(1, s.n_products) p
cross join lateral (select initcap(${pick(ADJ, u("s.n * 1000 + p", 7))}) || ' ' || initcap(${pick(ITEM, u("s.n * 1000 + p", 8))}) as title) t;
insert into product (id, store_id, title, handle, description, status, vendor, created_at, updated_at)
select id, store_id, title, handle, 'A ' || lower(title) || ', made for store ' || n || '.', status, 'Maker ' || (n % 97), created_at, created_at
from scale_fixture.prod order by n, idx;

create unlogged table scale_fixture.var as
select p.n, p.store_id, (p.idx - 1) * s.vpp + j as idx, gen_random_uuid() as id, p.id as product_id, p.title as product_title,
  (case when s.vpp = 3 then array['Small','Medium','Large'] else array['Standard','Deluxe'] end)[j] as title,
  'S' || p.n || '-P' || p.idx || '-V' || j as sku,
  ((floor((300 + ${u("p.n * 10000 + p.idx * 10 + j", 10)} * 4700) / 10) * 10 - 1) * 100)::bigint as price,
  s.tax_class, (p.n = 1 and p.idx <= 2) as preorder, j - 1 as position, p.created_at
from scale_fixture.prod p join scale_fixture.st s on s.n = p.n cross join lateral generate_series(1, s.vpp) j;
create unique index on scale_fixture.var (n, idx);
insert into product_variant (id, store_id, product_id, title, sku, price_minor, tax_class, preorder, position, created_at, updated_at)
select id, store_id, product_id, title, sku, price, tax_class, preorder, position, created_at, created_at from scale_fixture.var order by n, idx;`,
  },
  {
    name: "customers (staging)",
    sql: `
create unlogged table scale_fixture.cust as
select s.n, s.id as store_id, i as idx, gen_random_uuid() as id, f.first_name, f.last_name,
  case when ${u("s.n::bigint * 100000 + i", 13)} < 0.6 then f.first_name || '.' || f.last_name || i
       when ${u("s.n::bigint * 100000 + i", 13)} < 0.8 then f.first_name || i
       else left(f.first_name, 1) || f.last_name || '.' || i end
    || '@' || ${pick(DOMAINS, u("s.n::bigint * 100000 + i", 14))} as email,
  case when ${u("s.n::bigint * 100000 + i", 15)} < 0.7 then '+91' || (6000000000 + floor(${u("s.n::bigint * 100000 + i", 16)} * 3999999999))::bigint end as phone,
  c.ci, ${u("s.n::bigint * 100000 + i", 17)} < 0.35 as accepts_marketing
from scale_fixture.st s cross join lateral generate_series(1, s.n_customers) i
cross join lateral (select ${pick(FIRST, u("s.n::bigint * 100000 + i", 11))} as first_name, ${pick(LAST, u("s.n::bigint * 100000 + i", 12))} as last_name) f
cross join lateral (select 1 + floor(${u("s.n::bigint * 100000 + i", 18)} * 20)::int as ci) c;
create unique index on scale_fixture.cust (n, idx);`,
  },
];
