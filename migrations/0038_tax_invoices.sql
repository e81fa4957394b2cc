-- Tax invoices (issue 22 item 2; docs/gst.md "Tax invoices"): one per parcel, issued in the unit that ships
-- it (CGST Act s.31(1)(a): at the latest at the removal of the goods), from the GSTIN of the parcel's
-- location, numbered in a gapless series per GSTIN and financial year (rule 46(b)), its content frozen.

-- Series ------------------------------------------------------------------------------------------------
-- The next serial number of a series (a store's GSTIN, a financial year such as 2025-26, a kind of
-- document). A document takes its number by upserting this row in its own transaction
-- (insert … on conflict do update … returning): the row stays locked until commit, so concurrent documents
-- of one series queue on it, and a rollback gives the number back. Unlike a sequence, no number is lost.
create table tax_document_counter (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  gstin text not null check (gstin ~ '^[0-9A-Z]{15}$'),
  financial_year text not null check (financial_year ~ '^[0-9]{4}-[0-9]{2}$'),
  kind text not null check (kind in ('invoice', 'credit_note')),
  next_number integer not null check (next_number > 1),
  unique (store_id, gstin, financial_year, kind)
);
select internal.make_tenant_table('tax_document_counter');

-- Invoices ----------------------------------------------------------------------------------------------
-- `document` is the invoice as printed (shared/documents/model.ts DocumentModel: supplier, recipient, place
-- of supply, lines, tax by rate, totals), computed once at issue; nothing reads it back from the order.
create table tax_invoice (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  fulfillment_order_id uuid not null,
  gstin text not null check (gstin ~ '^[0-9A-Z]{15}$'),
  financial_year text not null check (financial_year ~ '^[0-9]{4}-[0-9]{2}$'),
  -- Rule 46(b): at most 16 characters, letters, digits, '-' and '/' (INV/25-26/000001).
  number text not null check (number ~ '^[A-Za-z0-9/-]{1,16}$'),
  issued_at timestamptz not null,
  document jsonb not null check (jsonb_typeof(document) = 'object' and document ->> 'number' = number),
  unique (store_id, id),
  unique (store_id, fulfillment_order_id),
  unique (store_id, gstin, financial_year, number),
  foreign key (store_id, order_id) references shop_order (store_id, id),
  foreign key (store_id, fulfillment_order_id) references fulfillment_order (store_id, id)
);
create index tax_invoice_order_idx on tax_invoice (store_id, order_id, issued_at);
select internal.make_tenant_table('tax_invoice');

-- An invoice once issued is never changed (a correction is a credit note).
create or replace function internal.tax_invoice_frozen() returns trigger
language plpgsql as $fn$
begin
  raise exception 'tax invoice % is issued: it cannot be changed (issue a credit note instead)', old.number using errcode = '42501';
end
$fn$;
create trigger tax_invoice_frozen before update on tax_invoice for each row execute function internal.tax_invoice_frozen();
