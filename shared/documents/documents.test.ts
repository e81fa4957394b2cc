import { PDFDocument } from "@cantoo/pdf-lib";
import { extractText, getDocumentProxy } from "unpdf";
import { describe, expect, it } from "vitest";
import { exampleInvoice, examplePackingSlip } from "./example";
import { renderDocumentHtml } from "./html";
import { formatRate, formatRs, formatRupees, groupIndian, INTER_STATE_COLUMNS, type DocumentModel } from "./model";
import { renderDocumentPdf } from "./pdf";
import { toWinAnsi } from "./winansi";

/** The PDF's text, page by page (unpdf detaches what it is given: it gets a copy). */
async function pdfText(bytes: Uint8Array): Promise<{ pages: string[]; all: string }> {
  const pdf = await getDocumentProxy(bytes.slice());
  const { text } = await extractText(pdf, { mergePages: false });
  return { pages: text, all: text.join("\n") };
}

describe("money, rates and text as printed", () => {
  it("groups rupees the Indian way and keeps the paise", () => {
    expect(groupIndian(0)).toBe("0.00");
    expect(groupIndian(5)).toBe("0.05");
    expect(groupIndian(99_999)).toBe("999.99");
    expect(groupIndian(100_000)).toBe("1,000.00");
    expect(groupIndian(12_345_678)).toBe("1,23,456.78");
    expect(groupIndian(123_456_789_012)).toBe("1,23,45,67,890.12");
    expect(formatRs(12_345_678)).toBe("Rs. 1,23,456.78");
    expect(formatRupees(12_345_678)).toBe("₹1,23,456.78");
    expect(formatRs(-1_000)).toBe("-Rs. 10.00");
    expect(() => groupIndian(1.5)).toThrow(/whole paise/);
  });

  it("prints rates with up to three decimals", () => {
    expect(formatRate(1800)).toBe("18 %");
    expect(formatRate(150)).toBe("1.5 %");
    expect(formatRate(25)).toBe("0.25 %");
    expect(formatRate(12.5)).toBe("0.125 %");
    expect(formatRate(0)).toBe("0 %");
  });

  it("maps text to what Helvetica can draw, never throwing", () => {
    expect(toWinAnsi("₹350.00 – “Ōsaka” café")).toBe("Rs. 350.00 – “Osaka” café");
    expect(toWinAnsi("मीरा 🙂 Iyer")).toMatch(/^\?+ \? Iyer$/);
    expect(toWinAnsi("line\nbreak\ttab")).toBe("line break tab");
  });
});

describe("renderDocumentPdf", () => {
  it("opens, and its text holds the number, the GSTINs, every line and the totals", async () => {
    const model = exampleInvoice();
    const bytes = await renderDocumentPdf(model);
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
    const { pages, all } = await pdfText(bytes);
    expect(pages).toHaveLength(1);
    expect(all).toContain("Tax invoice");
    expect(all).toContain("INV/25-26/000014");
    expect(all).toContain("02 Oct 2025");
    expect(all).toContain(model.supplier.gstin);
    expect(all).toContain(model.recipient.gstin);
    expect(all).toContain("Place of supply: Maharashtra (27)");
    for (const line of model.lines) expect(all).toContain(line.description);
    for (const total of model.totals!) expect(all).toContain(formatRs(total.amount));
    expect(all).toContain("Rs. 55,249.00"); // 2,499 + 2 × 3,200 + 3 × 15,450
    expect(all).toContain("1.5 %"); // the CGST rate of the 3 % class
    expect(all).toContain("Tax is not payable on reverse charge.");
    expect(all).toContain("Page 1 of 1");
  });

  it("runs over several pages, repeating the table's heading and numbering the pages", async () => {
    const model = exampleInvoice(120);
    const { pages } = await pdfText(await renderDocumentPdf(model));
    expect(pages.length).toBeGreaterThan(2);
    pages.forEach((text, i) => {
      expect(text).toContain(`Page ${i + 1} of ${pages.length}`);
      expect(text).toContain("Taxable value");
      if (i > 0) expect(text).toContain("Tax invoice INV/25-26/000014 (continued)");
    });
    const all = pages.join(" ").replace(/\s+/g, " "); // a long description wraps over lines of text
    for (const line of model.lines) expect(all).toContain(line.description);
    expect(all).toContain(formatRs(model.totals!.at(-1)!.amount));
  });

  it("draws a shopper's name in Devanagari or with an emoji as '?', without throwing", async () => {
    const model: DocumentModel = {
      ...exampleInvoice(),
      recipient: { name: "मीरा अय्यर 🙂 Meera", address: ["१२ सी ब्रीज़", "Mumbai ₹ 400050"], state: { name: "Maharashtra", code: "27" } },
    };
    const { all } = await pdfText(await renderDocumentPdf(model));
    expect(all).toMatch(/\?+ \?+ \? Meera/);
    expect(all).toContain("Mumbai Rs. 400050");
  });

  it("cuts a description or an address with no spaces to fit, quickly", async () => {
    const long = "A".repeat(20_000);
    const model: DocumentModel = {
      ...exampleInvoice(),
      recipient: { name: `Meera ${long}`, address: [long, "Mumbai 400050"] },
      lines: [{ ...exampleInvoice().lines[0]!, description: `Kurta ${long}` }],
    };
    const { pages, all } = await pdfText(await renderDocumentPdf(model));
    expect(pages).toHaveLength(1);
    expect(all).toContain("Mumbai 400050");
    expect(all).toContain("Kurta");
    expect(all).toContain("A\u2026");
    expect(all.length).toBeLessThan(3_000);
  });

  it("gives the same bytes for the same model", async () => {
    const model = exampleInvoice(40);
    const [a, b] = [await renderDocumentPdf(model), await renderDocumentPdf(model)];
    expect(a.length).toBeGreaterThan(1000);
    expect(b).toEqual(a);
    // Not the clock's time (two renders within a second would match anyway): the date of issue, midnight in India.
    const read = await PDFDocument.load(a, { updateMetadata: false });
    expect(read.getCreationDate()?.toISOString()).toBe("2025-10-01T18:30:00.000Z");
    expect(read.getModificationDate()?.toISOString()).toBe("2025-10-01T18:30:00.000Z");
    expect(read.context.trailerInfo.ID).toBeUndefined();
    const other = await renderDocumentPdf({ ...model, date: "2025-10-03" });
    expect(other).not.toEqual(a);
  });

  it("prints a packing slip with only description, SKU and quantity", async () => {
    const model = examplePackingSlip();
    const { all } = await pdfText(await renderDocumentPdf(model));
    expect(all).toContain("Packing slip");
    expect(all).toContain("SKU-0002");
    expect(all).not.toContain("Taxable value");
    expect(all).not.toContain("Rs.");
    // Its own party headings and a box to write in; an invoice keeps Supplier and Recipient and has no box.
    expect(all).toContain("SHIP FROM");
    expect(all).toContain("SHIP TO");
    expect(all).toContain("NOTES");
    const invoice = (await pdfText(await renderDocumentPdf(exampleInvoice()))).all;
    expect(invoice).toContain("SUPPLIER");
    expect(invoice).not.toContain("NOTES");
  });

  it("prints IGST across states and the tax summary's half rates", async () => {
    const inter: DocumentModel = {
      ...exampleInvoice(),
      columns: INTER_STATE_COLUMNS,
      lines: [{ description: "Rough diamond, 0.5 ct", hsn: "7102", quantity: 1, unit: "NOS", taxableValue: 4_000_000, rateBp: 25, igst: 10_000, total: 4_010_000 }],
      taxSummary: [{ rateBp: 25, taxableValue: 4_000_000, cgst: 0, sgst: 0, igst: 10_000 }],
    };
    const { all } = await pdfText(await renderDocumentPdf(inter));
    expect(all).toContain("IGST");
    expect(all).not.toContain("CGST rate");
    expect(all).toContain("0.25 %");
    const intra = await pdfText(await renderDocumentPdf({ ...inter, columns: exampleInvoice().columns, taxSummary: [{ rateBp: 25, taxableValue: 4_000_000, cgst: 5_000, sgst: 5_000, igst: 0 }] }));
    expect(intra.all).toContain("0.125 %");
  });
});

describe("renderDocumentHtml", () => {
  it("escapes every piece of the model", () => {
    const hostile = `<script>alert("x")</script><img src=x onerror='y'>`;
    const model: DocumentModel = {
      ...exampleInvoice(),
      number: `<b>1</b>`,
      recipient: { name: hostile, address: [hostile] },
      references: [{ label: hostile, value: hostile }],
      lines: [{ ...exampleInvoice().lines[0]!, description: hostile, hsn: hostile }],
      notes: [hostile],
      partyHeadings: { supplier: hostile, recipient: hostile },
      noteArea: hostile,
    };
    const html = String(renderDocumentHtml(model));
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>1</b>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;");
  });

  it("prints the rupee sign, the columns, the tax summary and A4 print styles", () => {
    const model = exampleInvoice();
    const html = String(renderDocumentHtml(model));
    expect(html).toContain(formatRupees(model.totals!.at(-1)!.amount));
    expect(html).toContain("₹55,249.00");
    expect(html).toContain("<th class=\"num\">SGST rate</th>");
    expect(html).toContain("@page{size:A4");
    expect(html).toMatch(/@media print\{[^]*nav,header,footer,button,\.no-print\{display:none/);
    const slip = String(renderDocumentHtml(examplePackingSlip()));
    expect(slip).toContain("<th>SKU</th>");
    expect(slip).not.toContain("Taxable value");
    expect(slip).toContain("<h2>Ship from</h2>");
    expect(slip).toContain('<section class="note-area"><h2>Notes</h2><div></div></section>');
    expect(html).toContain("<h2>Supplier</h2>");
    expect(html).not.toContain("note-area\"");
  });
});
