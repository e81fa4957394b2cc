/**
 * Example documents: a tax invoice within Maharashtra with any number of lines, and a packing slip. The tests
 * and bench/documents.ts render them; a door may use them for a preview. The figures add up (each line's CGST
 * and SGST are halves of its tax at its rate), though a real invoice's come from shared/rules/gst.ts.
 */
import { INTRA_STATE_COLUMNS, PACKING_SLIP_COLUMNS, type DocumentLine, type DocumentModel, type TaxSummaryRow } from "./model";

const ITEMS = [
  { description: "Handloom cotton kurta, indigo, size M", hsn: "6205", rateBp: 500, unitPrice: 249_900 },
  { description: "Leather kolhapuri chappals, tan, size 8", hsn: "6403", rateBp: 1800, unitPrice: 320_000 },
  { description: "22 carat gold stud earrings (2.1 g)", hsn: "7113", rateBp: 300, unitPrice: 1_545_000 },
];

function line(i: number): DocumentLine {
  const item = ITEMS[i % ITEMS.length]!;
  const quantity = 1 + (i % 3);
  const total = item.unitPrice * quantity;
  const tax = Math.round((total * item.rateBp) / (10_000 + item.rateBp));
  const cgst = Math.ceil(tax / 2);
  return {
    description: i < ITEMS.length ? item.description : `${item.description} #${i + 1}`,
    sku: `SKU-${String(i + 1).padStart(4, "0")}`,
    hsn: item.hsn,
    quantity,
    unit: "PCS",
    taxableValue: total - tax,
    rateBp: item.rateBp,
    cgst,
    sgst: tax - cgst,
    total,
  };
}

/** A tax invoice from Pune to Mumbai with `count` lines (3 by default). */
export function exampleInvoice(count = 3): DocumentModel {
  const lines = Array.from({ length: count }, (_, i) => line(i));
  const byRate = new Map<number, TaxSummaryRow>();
  for (const l of lines) {
    const row = byRate.get(l.rateBp!) ?? { rateBp: l.rateBp!, taxableValue: 0, cgst: 0, sgst: 0, igst: 0 };
    row.taxableValue += l.taxableValue!;
    row.cgst += l.cgst!;
    row.sgst += l.sgst!;
    byRate.set(l.rateBp!, row);
  }
  const taxSummary = [...byRate.values()].sort((a, b) => a.rateBp - b.rateBp);
  const sum = (pick: (l: DocumentLine) => number) => lines.reduce((s, l) => s + pick(l), 0);
  return {
    title: "Tax invoice",
    number: "INV/25-26/000014",
    date: "2025-10-02",
    supplier: {
      name: "Saanjh Crafts Private Limited",
      address: ["Unit 4, Laxmi Industrial Estate", "Hadapsar, Pune 411028", "Maharashtra, India"],
      gstin: "27AAPFU0939F1ZV",
      state: { name: "Maharashtra", code: "27" },
    },
    recipient: {
      name: "Meera Iyer",
      address: ["Flat 12B, Sea Breeze", "Bandra West, Mumbai 400050"],
      gstin: "27AAACR5055K1Z7",
      state: { name: "Maharashtra", code: "27" },
    },
    placeOfSupply: { name: "Maharashtra", code: "27" },
    references: [{ label: "Order", value: "#1152 of 30 Sep 2025" }],
    columns: INTRA_STATE_COLUMNS,
    stateTaxLabel: "SGST",
    lines,
    taxSummary,
    totals: [
      { label: "Taxable value", amount: sum((l) => l.taxableValue!) },
      { label: "CGST", amount: sum((l) => l.cgst!) },
      { label: "SGST", amount: sum((l) => l.sgst!) },
      { label: "Invoice total", amount: sum((l) => l.total!), grand: true },
    ],
    notes: ["Tax is not payable on reverse charge.", "Computer-generated invoice; authorised signatory: Saanjh Crafts Private Limited."],
  };
}

/** The packing slip of the same parcel: description, SKU and quantity only. */
export function examplePackingSlip(count = 3): DocumentModel {
  const invoice = exampleInvoice(count);
  return {
    title: "Packing slip",
    number: "1152-1",
    date: invoice.date,
    partyHeadings: { supplier: "Ship from", recipient: "Ship to" },
    supplier: invoice.supplier,
    recipient: invoice.recipient,
    references: invoice.references ?? [],
    columns: PACKING_SLIP_COLUMNS,
    lines: invoice.lines,
    noteArea: "Notes",
  };
}
