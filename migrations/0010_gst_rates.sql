-- GST rates per tax class with the date each took effect (issue 11 part 3; docs/gst.md). Global, like the
-- law: no store_id, so no RLS; the runtime may read it and nobody but the owner may change it. A change of
-- rates is a new migration inserting rows with a later effective_from; a class's rate on a day is its row
-- with the latest effective_from on or before that day (shared/orders/gst-rates.ts, ratesOn).
create table gst_rate (
  tax_class text not null check (tax_class in ('gst_exempt', 'gst_0', 'gst_5', 'gst_18', 'gst_40')),
  effective_from date not null,
  -- Basis points: 1800 = 18 %.
  rate_bp integer not null check (rate_bp between 0 and 10000),
  primary key (tax_class, effective_from)
);
grant select on gst_rate to app_user;

-- The classes are named after the slabs of GST 2.0 (in force from 2025-09-22: 5, 18 and 40 %). Before that
-- day, from GST's start on 2017-07-01, each class takes the old slab its goods came from: the 40 % slab
-- replaced the 28 % one for the goods it kept (plus compensation cess, which is not modelled), and the old
-- 12 % slab has no class of its own. Exempt and nil-rated goods were 0 throughout.
insert into gst_rate (tax_class, effective_from, rate_bp) values
  ('gst_exempt', '2017-07-01', 0),
  ('gst_0', '2017-07-01', 0),
  ('gst_5', '2017-07-01', 500),
  ('gst_18', '2017-07-01', 1800),
  ('gst_40', '2017-07-01', 2800),
  ('gst_exempt', '2025-09-22', 0),
  ('gst_0', '2025-09-22', 0),
  ('gst_5', '2025-09-22', 500),
  ('gst_18', '2025-09-22', 1800),
  ('gst_40', '2025-09-22', 4000);
