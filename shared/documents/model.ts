/**
 * One printed paper (a tax invoice, a credit note, a packing slip) as data, and the formatting both of its
 * renderings share (html.ts for the printable page, pdf.ts for the PDF). The model carries what is printed,
 * already computed: the renderers add no tax, round nothing and look nothing up. Money is integer paise,
 * rates are basis points (a half rate such as 12.5 bp, the CGST of a 0.25 % supply, is allowed).
 */

/** The line table's columns, in the order they are printed when chosen. */
export const DOCUMENT_COLUMNS = ["description", "sku", "hsn", "quantity", "unit", "taxableValue", "rate", "cgst", "sgst", "igst", "total"] as const;
export type DocumentColumn = (typeof DOCUMENT_COLUMNS)[number];

/** The usual column sets: CGST + SGST (or UTGST) within a state, IGST across states, and a packing slip's. */
export const INTRA_STATE_COLUMNS: readonly DocumentColumn[] = ["description", "hsn", "quantity", "unit", "taxableValue", "rate", "cgst", "sgst", "total"];
export const INTER_STATE_COLUMNS: readonly DocumentColumn[] = ["description", "hsn", "quantity", "unit", "taxableValue", "rate", "igst", "total"];
export const PACKING_SLIP_COLUMNS: readonly DocumentColumn[] = ["description", "sku", "quantity"];

/** A State or union territory as GST prints it: the name and the two-digit GST state code ("Maharashtra", "27"). */
export interface DocumentState {
  name: string;
  code: string;
}

export interface DocumentParty {
  /** The legal name for a supplier; the person's or business's name for a recipient. */
  name: string;
  /** Address lines, printed one per line. */
  address: readonly string[];
  gstin?: string | null;
  state?: DocumentState | null;
}

/** A labelled reference: "Order" #1152, "Invoice" INV/25-26/000014 of 02 Oct 2025 (a credit note's). */
export interface DocumentReference {
  label: string;
  value: string;
}

export interface DocumentLine {
  description: string;
  sku?: string | null;
  hsn?: string | null;
  quantity: number;
  /** The unit quantity code (UQC), e.g. NOS or PCS. */
  unit?: string | null;
  /** After discount, before tax, paise. */
  taxableValue?: number;
  rateBp?: number;
  cgst?: number;
  /** The State's half (SGST) or the union territory's (UTGST); `stateTaxLabel` names it. */
  sgst?: number;
  igst?: number;
  /** Taxable value plus tax, paise. */
  total?: number;
}

/** The tax at one rate, split by component (the CGST and SGST rates are half of `rateBp` each). */
export interface TaxSummaryRow {
  rateBp: number;
  taxableValue: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export interface DocumentTotal {
  label: string;
  amount: number;
  /** Printed bold: the amount the document is for. */
  grand?: boolean;
}

export interface DocumentModel {
  /** "Tax invoice", "Credit note", "Packing slip". */
  title: string;
  number: string;
  /** The date of issue, YYYY-MM-DD (India's day). */
  date: string;
  supplier: DocumentParty;
  recipient: DocumentParty;
  /** The parties' headings when not "Supplier" and "Recipient" (a packing slip's "Ship from" and "Ship to"). */
  partyHeadings?: { supplier: string; recipient: string } | null;
  /** A second address for delivery when it differs from the recipient's (rule 46(o)). */
  shipTo?: DocumentParty | null;
  placeOfSupply?: DocumentState | null;
  references?: readonly DocumentReference[];
  columns: readonly DocumentColumn[];
  /** "SGST" or "UTGST" (a union territory without a legislature). */
  stateTaxLabel?: "SGST" | "UTGST";
  lines: readonly DocumentLine[];
  /** Printed with the tax columns the line table shows (CGST and SGST, or IGST). */
  taxSummary?: readonly TaxSummaryRow[];
  totals?: readonly DocumentTotal[];
  notes?: readonly string[];
  /** A labelled empty box to write in by hand (a packing slip's "Notes"), printed last. */
  noteArea?: string | null;
}

/** The rupee amount with Indian digit grouping: 12345678 paise → "1,23,456.78" (no sign symbol). */
export function groupIndian(paise: number): string {
  if (!Number.isSafeInteger(paise)) throw new RangeError(`an amount must be whole paise, got ${paise}`);
  const negative = paise < 0;
  const abs = Math.abs(paise);
  const rupees = String(Math.floor(abs / 100));
  const fraction = String(abs % 100).padStart(2, "0");
  // The last three digits, then pairs: 1,23,45,678.
  const head = rupees.slice(0, -3);
  const tail = rupees.slice(-3);
  const grouped = head ? `${head.replace(/\B(?=(\d{2})+$)/g, ",")},${tail}` : tail;
  return `${negative ? "-" : ""}${grouped}.${fraction}`;
}

/** Money as the PDF prints it (Helvetica has no ₹): "Rs. 1,23,456.78", "-Rs. 10.00". */
export function formatRs(paise: number): string {
  const text = groupIndian(paise);
  return text.startsWith("-") ? `-Rs. ${text.slice(1)}` : `Rs. ${text}`;
}

/** Money as the HTML page prints it: "₹1,23,456.78", "-₹10.00". */
export function formatRupees(paise: number): string {
  const text = groupIndian(paise);
  return text.startsWith("-") ? `-₹${text.slice(1)}` : `₹${text}`;
}

/** A rate in basis points as a percentage with up to three decimals: 1800 → "18 %", 150 → "1.5 %", 12.5 → "0.125 %". */
export function formatRate(bp: number): string {
  const thousandths = Math.round(bp * 10); // of a percent
  const whole = Math.trunc(thousandths / 1000);
  const rest = String(Math.abs(thousandths % 1000)).padStart(3, "0").replace(/0+$/, "");
  return `${thousandths < 0 && whole === 0 ? "-" : ""}${whole}${rest ? `.${rest}` : ""} %`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The date of issue as printed: "2026-11-26" → "26 Nov 2026" (no month/day order to misread). */
export function formatDocumentDate(date: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const month = match ? MONTHS[Number(match[2]) - 1] : undefined;
  if (!match || !month) throw new RangeError(`a document date must be YYYY-MM-DD, got "${date}"`);
  return `${match[3]} ${month} ${match[1]}`;
}

/** A State with its code, as printed: "Maharashtra (27)". */
export const formatState = (state: DocumentState): string => `${state.name} (${state.code})`;

/** Which tax components the document shows: the ones its line table has. */
export function taxComponents(model: DocumentModel): ("cgst" | "sgst" | "igst")[] {
  return (["cgst", "sgst", "igst"] as const).filter((c) => model.columns.includes(c));
}

/** A column's heading and how a line's cell reads, with the money formatter of the rendering. */
export interface ColumnSpec {
  heading: string;
  /** Right-aligned (numbers). */
  numeric: boolean;
  cell(line: DocumentLine, money: (paise: number) => string): string;
}

const money = (paise: number | undefined, format: (paise: number) => string) => (paise === undefined ? "" : format(paise));

export function columnSpec(column: DocumentColumn, stateTaxLabel: "SGST" | "UTGST" = "SGST"): ColumnSpec {
  switch (column) {
    case "description": return { heading: "Description", numeric: false, cell: (l) => l.description };
    case "sku": return { heading: "SKU", numeric: false, cell: (l) => l.sku ?? "" };
    case "hsn": return { heading: "HSN", numeric: false, cell: (l) => l.hsn ?? "" };
    case "quantity": return { heading: "Qty", numeric: true, cell: (l) => String(l.quantity) };
    case "unit": return { heading: "Unit", numeric: false, cell: (l) => l.unit ?? "" };
    case "taxableValue": return { heading: "Taxable value", numeric: true, cell: (l, f) => money(l.taxableValue, f) };
    case "rate": return { heading: "Rate", numeric: true, cell: (l) => (l.rateBp === undefined ? "" : formatRate(l.rateBp)) };
    case "cgst": return { heading: "CGST", numeric: true, cell: (l, f) => money(l.cgst, f) };
    case "sgst": return { heading: stateTaxLabel, numeric: true, cell: (l, f) => money(l.sgst, f) };
    case "igst": return { heading: "IGST", numeric: true, cell: (l, f) => money(l.igst, f) };
    case "total": return { heading: "Total", numeric: true, cell: (l, f) => money(l.total, f) };
  }
}

/** The tax summary's columns: taxable value, then rate and amount per component shown, then the tax. */
export function taxSummaryTable(model: DocumentModel, format: (paise: number) => string): { headings: string[]; rows: string[][] } {
  const components = taxComponents(model);
  const label = { cgst: "CGST", sgst: model.stateTaxLabel ?? "SGST", igst: "IGST" };
  const headings = ["Rate", "Taxable value", ...components.flatMap((c) => [`${label[c]} rate`, label[c]]), "Tax"];
  const rows = (model.taxSummary ?? []).map((row) => [
    formatRate(row.rateBp),
    format(row.taxableValue),
    ...components.flatMap((c) => [formatRate(c === "igst" ? row.rateBp : row.rateBp / 2), format(row[c])]),
    format(components.reduce((sum, c) => sum + row[c], 0)),
  ]);
  return { headings, rows };
}
