-- Value-based and special GST rates (issue 22 item 4; docs/gst.md "Rates" and "Value-based classes").
-- gst_rate stays global and read-only to the runtime (grants of 0010 unchanged: app_user may only select).

-- New classes: precious metals and jewellery (3 %), cut and polished diamonds (1.5 % since 2022-07-18),
-- rough or simply sawn diamonds and precious or semi-precious stones (0.25 %), and two value-based classes
-- whose rate depends on the unit's transaction value: apparel (per piece) and footwear (per pair).
alter table gst_rate drop constraint gst_rate_tax_class_check;
alter table gst_rate add constraint gst_rate_tax_class_check check (tax_class in
  ('gst_exempt', 'gst_0', 'gst_5', 'gst_18', 'gst_40', 'gst_3', 'gst_1_5', 'gst_0_25', 'gst_apparel', 'gst_footwear'));
alter table product_variant drop constraint product_variant_tax_class_check;
alter table product_variant add constraint product_variant_tax_class_check check (tax_class in
  ('gst_exempt', 'gst_0', 'gst_5', 'gst_18', 'gst_40', 'gst_3', 'gst_1_5', 'gst_0_25', 'gst_apparel', 'gst_footwear'));

-- A value-based row: rate_bp applies while the unit's value before GST (its inclusive amount after discount
-- divided by the quantity and by 1 + rate_bp) is at most threshold_minor, rate_above_bp above it. Both are
-- null for a class with one rate (shared/rules/gst.ts, resolveRate).
alter table gst_rate add column threshold_minor bigint check (threshold_minor > 0);
alter table gst_rate add column rate_above_bp integer check (rate_above_bp between 0 and 10000);
alter table gst_rate add constraint gst_rate_threshold_pair check ((threshold_minor is null) = (rate_above_bp is null));

-- As in 0010, every class has a row from GST's start (2017-07-01) and one dating GST 2.0 (2025-09-22).
-- Diamonds cut and polished: 3 % at GST's start, 0.25 % from 2018-01-25 (25th Council), 1.5 % from
-- 2022-07-18 (N/N 6/2022-CT(Rate), 47th Council). Apparel and footwear before 2025-09-22: 5 % up to ₹1,000
-- a unit, 12 % above (history only: the platform has no orders from then); from 2025-09-22 5 % up to
-- ₹2,500, 18 % above (N/N 9/2025-CT(Rate)).
insert into gst_rate (tax_class, effective_from, rate_bp, threshold_minor, rate_above_bp) values
  ('gst_3', '2017-07-01', 300, null, null),
  ('gst_3', '2025-09-22', 300, null, null),
  ('gst_1_5', '2017-07-01', 300, null, null),
  ('gst_1_5', '2018-01-25', 25, null, null),
  ('gst_1_5', '2022-07-18', 150, null, null),
  ('gst_1_5', '2025-09-22', 150, null, null),
  ('gst_0_25', '2017-07-01', 25, null, null),
  ('gst_0_25', '2025-09-22', 25, null, null),
  ('gst_apparel', '2017-07-01', 500, 100000, 1200),
  ('gst_apparel', '2025-09-22', 500, 250000, 1800),
  ('gst_footwear', '2017-07-01', 500, 100000, 1200),
  ('gst_footwear', '2025-09-22', 500, 250000, 1800);
