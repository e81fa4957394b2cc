-- Credit notes (issue 22 item 3; docs/gst.md "Credit notes"): a processed refund of an invoiced order is
-- credited against the order's tax invoices (CGST Act s.34; CGST Rules, rule 53(1A)), one credit note per
-- invoice it touches, in that GSTIN's own series (CN/25-26/000001: the counter's kind 'credit_note'),
-- issued by the documents consumer of `order.refunded` (shared/orders/credit-notes.ts), its content frozen.

create table tax_credit_note (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references store (id) on delete cascade,
  order_id uuid not null,
  refund_id uuid not null,
  invoice_id uuid not null,
  gstin text not null check (gstin ~ '^[0-9A-Z]{15}$'),
  financial_year text not null check (financial_year ~ '^[0-9]{4}-[0-9]{2}$'),
  -- Rule 53(1A)(b): the same as an invoice's, at most 16 characters of letters, digits, '-' and '/'.
  number text not null check (number ~ '^[A-Za-z0-9/-]{1,16}$'),
  issued_at timestamptz not null,
  -- What it credits of each line of the invoice, by the invoice line's position: {total, taxable, cgst, sgst, igst}
  -- in paise (zeros for a line it does not touch). The sum over an invoice's credit notes never passes the invoice.
  credited jsonb not null check (jsonb_typeof(credited) = 'array'),
  document jsonb not null check (jsonb_typeof(document) = 'object' and document ->> 'number' = number),
  unique (store_id, id),
  unique (store_id, refund_id, invoice_id),
  unique (store_id, gstin, financial_year, number),
  foreign key (store_id, order_id) references shop_order (store_id, id),
  foreign key (store_id, refund_id) references refund (store_id, id),
  foreign key (store_id, invoice_id) references tax_invoice (store_id, id)
);
create index tax_credit_note_order_idx on tax_credit_note (store_id, order_id, issued_at);
create index tax_credit_note_invoice_idx on tax_credit_note (store_id, invoice_id);
select internal.make_tenant_table('tax_credit_note');

-- An issued credit note is never changed, as an invoice is not (one trigger function for both, from now).
create function internal.tax_document_frozen() returns trigger
language plpgsql as $fn$
begin
  raise exception '% % is issued: it cannot be changed%', tg_argv[0], old.number, coalesce(' (' || tg_argv[1] || ')', '') using errcode = '42501';
end
$fn$;
create trigger tax_credit_note_frozen before update on tax_credit_note for each row execute function internal.tax_document_frozen('credit note');
drop trigger tax_invoice_frozen on tax_invoice;
create trigger tax_invoice_frozen before update on tax_invoice for each row execute function internal.tax_document_frozen('tax invoice', 'issue a credit note instead');
drop function internal.tax_invoice_frozen();
