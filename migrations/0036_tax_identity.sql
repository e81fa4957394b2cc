-- Tax identity (issue 22 item 1; docs/gst.md "Tax identity"): a location's GST registration (GSTIN), the
-- legal name and address printed on its tax invoices, and a buyer's GSTIN on a business purchase.
-- The full GSTIN validation (format, state code, check character) is in TypeScript (shared/rules/gstin.ts);
-- the checks here are the backstop: 15 characters of the alphabet, and the state that follows from it.

-- Locations ---------------------------------------------------------------------------------------------
alter table location
  add column gstin text check (gstin ~ '^[0-9A-Z]{15}$'),
  add column legal_name text check (length(btrim(legal_name)) between 1 and 200),
  add column address_line1 text check (length(btrim(address_line1)) between 1 and 200),
  add column address_line2 text check (length(btrim(address_line2)) between 1 and 200),
  add column postal_code text check (postal_code ~ '^[1-9][0-9]{5}$');

-- One registration per state: a location's state is its GSTIN's (GST state code → ISO 3166-2:IN; 97, Other
-- Territory, has no ISO code, so such a location has no state).
alter table location add constraint location_state_of_gstin check (
  gstin is null or state is not distinct from (case substr(gstin, 1, 2)
    when '01' then 'IN-JK' when '02' then 'IN-HP' when '03' then 'IN-PB' when '04' then 'IN-CH' when '05' then 'IN-UK' when '06' then 'IN-HR'
    when '07' then 'IN-DL' when '08' then 'IN-RJ' when '09' then 'IN-UP' when '10' then 'IN-BR' when '11' then 'IN-SK' when '12' then 'IN-AR'
    when '13' then 'IN-NL' when '14' then 'IN-MN' when '15' then 'IN-MZ' when '16' then 'IN-TR' when '17' then 'IN-ML' when '18' then 'IN-AS'
    when '19' then 'IN-WB' when '20' then 'IN-JH' when '21' then 'IN-OD' when '22' then 'IN-CG' when '23' then 'IN-MP' when '24' then 'IN-GJ'
    when '26' then 'IN-DH' when '27' then 'IN-MH' when '29' then 'IN-KA' when '30' then 'IN-GA' when '31' then 'IN-LD' when '32' then 'IN-KL'
    when '33' then 'IN-TN' when '34' then 'IN-PY' when '35' then 'IN-AN' when '36' then 'IN-TS' when '37' then 'IN-AP' when '38' then 'IN-LA'
  end)
);

-- A GSTIN names one location of a store (its invoices' series is per GSTIN).
create unique index location_store_id_gstin_key on location (store_id, gstin) where gstin is not null;

-- Orders ------------------------------------------------------------------------------------------------
-- A business purchase: the buyer's GSTIN (any state: the place of supply stays the delivery state) and the
-- legal name to print on the invoice. The legal name only comes with a GSTIN.
alter table shop_order
  add column buyer_gstin text check (buyer_gstin ~ '^[0-9A-Z]{15}$'),
  add column buyer_legal_name text check (length(btrim(buyer_legal_name)) between 1 and 200),
  add constraint shop_order_buyer_legal_name_with_gstin check (buyer_legal_name is null or buyer_gstin is not null);
