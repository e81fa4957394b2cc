/**
 * A document as a PDF, drawn by hand with @cantoo/pdf-lib (docs/decisions/0030-documents-pdf.md): A4,
 * Helvetica (no font bytes; WinAnsi text, see winansi.ts), amounts as "Rs. 1,23,456.78". Lines that do not
 * fit start a new page with the table's heading again; every page says "Page i of n". The same model gives
 * the same bytes: the dates inside are the document's, and nothing random is written.
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from "@cantoo/pdf-lib";
import {
  columnSpec,
  formatDocumentDate,
  formatRs,
  formatState,
  groupIndian,
  taxSummaryTable,
  type DocumentModel,
  type DocumentParty,
} from "./model";
import { toWinAnsi } from "./winansi";

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 36;
const WIDTH = A4[0] - 2 * MARGIN;
const FOOTER = 30; // room kept at the bottom for the page number
const BODY = 9;
const CELL = 8;
const LEADING = 1.25;
const PAD = 3;
const MAX_DESCRIPTION_LINES = 3;
const MAX_BLOCK_LINES = 2; // per name or address line of a party
const NOTE_BOX = 72; // the height of a note area to write in
const GREY = rgb(0.55, 0.55, 0.55);
const SHADE = rgb(0.93, 0.93, 0.93);

/** Fixed widths (points) of the line table's columns; the description takes what is left. */
const COLUMN_WIDTH: Readonly<Record<string, number>> = {
  sku: 110, hsn: 44, quantity: 30, unit: 30, taxableValue: 64, rate: 38, cgst: 54, sgst: 54, igst: 60, total: 64,
};

interface Table {
  headings: string[];
  widths: number[];
  numeric: boolean[];
  /** Index of the column whose text wraps (the description), or -1. */
  wraps: number;
}

/** Draws pages top to bottom, starting a new page (with the running heading) when the next block does not fit. */
class Pen {
  readonly pages: PDFPage[] = [];
  y = 0;
  private repeat: Table | null = null;

  constructor(
    private readonly doc: PDFDocument,
    readonly regular: PDFFont,
    readonly bold: PDFFont,
    private readonly runningHead: string,
  ) {
    this.newPage(true);
  }

  get page(): PDFPage {
    return this.pages[this.pages.length - 1]!;
  }

  newPage(first = false): void {
    this.pages.push(this.doc.addPage(A4));
    this.y = A4[1] - MARGIN;
    if (!first) {
      this.text(this.runningHead, MARGIN, BODY, this.bold, GREY);
      this.y -= BODY * LEADING + 6;
      if (this.repeat) this.tableHeading(this.repeat);
    }
  }

  /** Makes room for `height` points, on a new page if needed. */
  room(height: number): void {
    if (this.y - height < MARGIN + FOOTER) this.newPage();
  }

  text(text: string, x: number, size: number, font = this.regular, color = rgb(0, 0, 0)): void {
    this.page.drawText(text, { x, y: this.y - size, size, font, color });
  }

  /** A line of text (already WinAnsi) and the pen moves below it. */
  line(text: string, size = BODY, font = this.regular, x = MARGIN): void {
    this.room(size * LEADING);
    this.text(text, x, size, font);
    this.y -= size * LEADING;
  }

  gap(points: number): void {
    this.y -= points;
  }

  rule(): void {
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + WIDTH, y: this.y }, thickness: 0.5, color: GREY });
  }

  startTable(table: Table): void {
    this.room(rowHeight(1) * 2);
    this.tableHeading(table);
    this.repeat = table;
  }

  endTable(): void {
    this.repeat = null;
    this.gap(8);
  }

  private tableHeading(table: Table): void {
    const height = rowHeight(1);
    this.page.drawRectangle({ x: MARGIN, y: this.y - height, width: WIDTH, height, color: SHADE });
    this.cells(table, table.headings.map((h) => [h]), this.bold);
    this.y -= height;
  }

  row(table: Table, cells: string[]): void {
    const split = cells.map((cell, i) => (i === table.wraps ? wrap(cell, table.widths[i]! - 2 * PAD, this.regular, CELL, MAX_DESCRIPTION_LINES) : [cell]));
    const height = rowHeight(Math.max(...split.map((s) => s.length)));
    this.room(height);
    this.cells(table, split, this.regular);
    this.y -= height;
    this.rule();
  }

  private cells(table: Table, cells: string[][], font: PDFFont): void {
    let x = MARGIN;
    cells.forEach((lines, i) => {
      const width = table.widths[i]! - 2 * PAD;
      lines.forEach((text, n) => {
        const top = this.y - PAD - n * CELL * LEADING;
        if (table.numeric[i]) {
          // A number is never cut: it shrinks to fit its column.
          let size = CELL;
          while (size > 5 && font.widthOfTextAtSize(text, size) > width) size -= 0.5;
          this.page.drawText(text, { x: x + PAD + width - font.widthOfTextAtSize(text, size), y: top - size, size, font });
        } else {
          this.page.drawText(fit(text, width, font, CELL), { x: x + PAD, y: top - CELL, size: CELL, font });
        }
      });
      x += table.widths[i]!;
    });
  }
}

const rowHeight = (lines: number) => lines * CELL * LEADING + 2 * PAD;

/** How many leading characters of the text fit the width (binary search: a width only grows with the text). */
function fitting(text: string, width: number, font: PDFFont, size: number): number {
  let [low, high] = [0, text.length];
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (font.widthOfTextAtSize(text.slice(0, mid), size) <= width) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The text cut to the width with an ellipsis. */
function fit(text: string, width: number, font: PDFFont, size: number): string {
  if (font.widthOfTextAtSize(text, size) <= width) return text;
  return `${text.slice(0, fitting(text, width - font.widthOfTextAtSize("\u2026", size), font, size)).trimEnd()}\u2026`;
}

/** Words over lines of at most `width` points; a word wider than a line is broken; the last line is cut. */
function wrap(text: string, width: number, font: PDFFont, size: number, maxLines = Infinity): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = current ? `${current} ${word}` : word;
    if (font.widthOfTextAtSize(candidate, size) <= width) {
      current = candidate;
      continue;
    }
    if (current) lines.push(current);
    current = word;
    while (current.length > 1 && lines.length <= maxLines && font.widthOfTextAtSize(current, size) > width) {
      const cut = Math.max(1, fitting(current, width, font, size));
      lines.push(current.slice(0, cut));
      current = current.slice(cut);
    }
    if (lines.length > maxLines) break; // the rest is cut below anyway
  }
  if (current || lines.length === 0) lines.push(current);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = fit(`${kept[maxLines - 1]} ${lines[maxLines]}`, width, font, size);
  return kept;
}

function partyLines(party: DocumentParty): string[] {
  return [
    ...party.address,
    ...(party.gstin ? [`GSTIN: ${party.gstin}`] : []),
    ...(party.state ? [`State: ${formatState(party.state)}`] : []),
  ];
}

/** Labelled blocks side by side (supplier | recipient), each wrapped to its half. */
function blocks(pen: Pen, parts: { label: string; party: DocumentParty }[]): void {
  const column = WIDTH / parts.length;
  const laid = parts.map(({ label, party }) => ({
    label: toWinAnsi(label),
    name: wrap(toWinAnsi(party.name), column - 12, pen.bold, BODY, MAX_BLOCK_LINES),
    rest: partyLines(party).flatMap((l) => wrap(toWinAnsi(l), column - 12, pen.regular, BODY, MAX_BLOCK_LINES)),
  }));
  const height = Math.max(...laid.map((b) => 1 + b.name.length + b.rest.length)) * BODY * LEADING;
  pen.room(height);
  const top = pen.y;
  laid.forEach((b, i) => {
    const x = MARGIN + i * column;
    pen.y = top;
    pen.text(b.label.toUpperCase(), x, BODY - 1, pen.bold, GREY);
    pen.y -= BODY * LEADING;
    for (const l of b.name) (pen.text(l, x, BODY, pen.bold), (pen.y -= BODY * LEADING));
    for (const l of b.rest) (pen.text(l, x, BODY), (pen.y -= BODY * LEADING));
  });
  pen.y = top - height - 8;
}

/** The document's date of issue at midnight in India, the PDF's creation and modification date. */
const issueMoment = (date: string) => new Date(`${date}T00:00:00+05:30`);

export async function renderDocumentPdf(model: DocumentModel): Promise<Uint8Array> {
  const date = formatDocumentDate(model.date);
  const doc = await PDFDocument.create({ updateMetadata: false });
  const title = toWinAnsi(`${model.title} ${model.number}`);
  doc.setTitle(title);
  doc.setAuthor(toWinAnsi(model.supplier.name));
  doc.setCreator("edge-commerce");
  doc.setProducer("edge-commerce (@cantoo/pdf-lib)");
  doc.setCreationDate(issueMoment(model.date));
  doc.setModificationDate(issueMoment(model.date));
  const [regular, bold] = await Promise.all([doc.embedFont(StandardFonts.Helvetica), doc.embedFont(StandardFonts.HelveticaBold)]);
  const pen = new Pen(doc, regular, bold, `${title} (continued)`);

  // Title, number and date.
  pen.text(toWinAnsi(model.title), MARGIN, 16, bold);
  const numberText = toWinAnsi(`No. ${model.number}`);
  const dateText = `Date: ${date}`;
  pen.page.drawText(numberText, { x: MARGIN + WIDTH - bold.widthOfTextAtSize(numberText, BODY + 1), y: pen.y - BODY - 1, size: BODY + 1, font: bold });
  pen.page.drawText(dateText, { x: MARGIN + WIDTH - regular.widthOfTextAtSize(dateText, BODY), y: pen.y - 2 * BODY - 5, size: BODY, font: regular });
  pen.gap(34);
  pen.rule();
  pen.gap(8);

  const headings = model.partyHeadings ?? { supplier: "Supplier", recipient: "Recipient" };
  blocks(pen, [
    { label: headings.supplier, party: model.supplier },
    { label: headings.recipient, party: model.recipient },
    ...(model.shipTo ? [{ label: "Ship to", party: model.shipTo }] : []),
  ]);
  if (model.placeOfSupply) pen.line(toWinAnsi(`Place of supply: ${formatState(model.placeOfSupply)}`));
  for (const ref of model.references ?? []) pen.line(toWinAnsi(`${ref.label}: ${ref.value}`));
  pen.gap(8);

  // The lines.
  const specs = model.columns.map((c) => columnSpec(c, model.stateTaxLabel));
  const fixed = model.columns.reduce((sum, c) => sum + (c === "description" ? 0 : COLUMN_WIDTH[c]!), 0);
  const lineTable: Table = {
    headings: specs.map((s) => toWinAnsi(s.heading)),
    widths: model.columns.map((c) => (c === "description" ? WIDTH - fixed : COLUMN_WIDTH[c]!)),
    numeric: specs.map((s) => s.numeric),
    wraps: model.columns.indexOf("description"),
  };
  const hasMoney = model.columns.some((c) => ["taxableValue", "cgst", "sgst", "igst", "total"].includes(c));
  if (hasMoney) pen.line("Amounts in Indian rupees (Rs.)", CELL);
  pen.startTable(lineTable);
  for (const line of model.lines) pen.row(lineTable, specs.map((s) => toWinAnsi(s.cell(line, groupIndian))));
  pen.endTable();

  // Tax per rate and component.
  if (model.taxSummary?.length) {
    const summary = taxSummaryTable(model, groupIndian);
    pen.room(BODY * LEADING + rowHeight(1) * 2);
    pen.line("Tax summary", BODY, bold);
    const table: Table = {
      headings: summary.headings.map(toWinAnsi),
      widths: summary.headings.map(() => WIDTH / summary.headings.length),
      numeric: summary.headings.map(() => true),
      wraps: -1,
    };
    pen.startTable(table);
    for (const row of summary.rows) pen.row(table, row);
    pen.endTable();
  }

  // Totals, right-aligned.
  for (const total of model.totals ?? []) {
    const font = total.grand ? bold : regular;
    const size = total.grand ? BODY + 1 : BODY;
    const amount = formatRs(total.amount);
    pen.room(size * LEADING);
    pen.page.drawText(toWinAnsi(total.label), { x: MARGIN + WIDTH - 230, y: pen.y - size, size, font });
    pen.page.drawText(amount, { x: MARGIN + WIDTH - font.widthOfTextAtSize(amount, size), y: pen.y - size, size, font });
    pen.gap(size * LEADING + 2);
  }
  if (model.notes?.length) pen.gap(10);
  for (const note of model.notes ?? []) for (const l of wrap(toWinAnsi(note), WIDTH, regular, CELL)) pen.line(l, CELL);
  if (model.noteArea) {
    pen.gap(10);
    pen.room(BODY * LEADING + NOTE_BOX);
    pen.line(toWinAnsi(model.noteArea.toUpperCase()), BODY - 1, bold);
    pen.page.drawRectangle({ x: MARGIN, y: pen.y - NOTE_BOX, width: WIDTH, height: NOTE_BOX, borderColor: GREY, borderWidth: 0.5 });
    pen.gap(NOTE_BOX);
  }

  // Page numbers, once the count is known.
  const count = pen.pages.length;
  const numberOnFoot = toWinAnsi(model.number);
  pen.pages.forEach((page, i) => {
    const label = `Page ${i + 1} of ${count}`;
    page.drawText(numberOnFoot, { x: MARGIN, y: MARGIN, size: CELL, font: regular, color: GREY });
    page.drawText(label, { x: MARGIN + WIDTH - regular.widthOfTextAtSize(label, CELL), y: MARGIN, size: CELL, font: regular, color: GREY });
  });
  return doc.save();
}
