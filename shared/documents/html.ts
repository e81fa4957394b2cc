/**
 * A document as a printable page body, for the page shell (shared/http/page.tsx) to wrap:
 * `<Page title=…>{renderDocumentHtml(model)}</Page>`. Every piece of the model is escaped; the answer is
 * marked as already escaped so the shell does not escape it twice. Its stylesheet, DOCUMENT_CSS, is inline:
 * a door registers it for the Content-Security-Policy at module top level (`inlineStyle(DOCUMENT_CSS)`).
 * Printed, the page is A4 with nothing but the document (no navigation, no buttons: mark them `no-print`).
 */
import { raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import {
  columnSpec,
  formatDocumentDate,
  formatRupees,
  formatState,
  taxSummaryTable,
  type DocumentModel,
  type DocumentParty,
} from "./model";

export const DOCUMENT_CSS = `
main:has(.document){max-width:60rem}
.document{font-size:.875rem}.document h1{font-size:1.5rem;margin:0}
.document .head{display:flex;justify-content:space-between;align-items:flex-start;gap:1rem;border-bottom:1px solid var(--line,#ccc);padding-bottom:.5rem}
.document .meta{text-align:right}.document .parties{display:flex;gap:2rem;margin:1rem 0}.document .parties section{flex:1}
.document h2{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted,#555);margin:0 0 .25rem}
.document address{font-style:normal}.document table{width:100%;border-collapse:collapse;margin:.75rem 0}
.document th,.document td{border-bottom:1px solid var(--line,#ccc);padding:.3rem .4rem;text-align:left;vertical-align:top}
.document th{background:var(--bg,#eee)}.document .num{text-align:right;white-space:nowrap}
.document .totals{margin-left:auto;width:auto;min-width:50%}.document .grand td{font-weight:700}
.document caption{text-align:left;font-weight:600}
.document .notes{color:var(--muted,#555);font-size:.8rem}
.document .note-area div{border:1px solid var(--line,#ccc);min-height:6rem}
@media screen and (max-width:40rem){.document .head,.document .parties{flex-direction:column;gap:.5rem}.document .meta{text-align:left}
.document .scrolls{overflow-x:auto}}
@page{size:A4;margin:12mm}
@media print{
:root{color-scheme:light}body{background:#fff;color:#000;font-size:10pt}main{max-width:none;margin:0;padding:0}
nav,header,footer,button,.no-print{display:none!important}.document thead{display:table-header-group}.document tr{break-inside:avoid}
.document th{background:#eee}
}
`;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);

function party(heading: string, p: DocumentParty): string {
  const lines = [
    `<strong>${esc(p.name)}</strong>`,
    ...p.address.map(esc),
    ...(p.gstin ? [`GSTIN: ${esc(p.gstin)}`] : []),
    ...(p.state ? [`State: ${esc(formatState(p.state))}`] : []),
  ];
  return `<section><h2>${esc(heading)}</h2><address>${lines.join("<br>")}</address></section>`;
}

const cell = (text: string, numeric: boolean, tag = "td") => `<${tag}${numeric ? ' class="num"' : ""}>${esc(text)}</${tag}>`;

export function renderDocumentHtml(model: DocumentModel): HtmlEscapedString {
  const specs = model.columns.map((c) => columnSpec(c, model.stateTaxLabel));
  const headings = model.partyHeadings ?? { supplier: "Supplier", recipient: "Recipient" };
  const parts: string[] = [];
  parts.push(`<article class="document"><style>${DOCUMENT_CSS}</style>`);
  parts.push(
    `<div class="head"><h1>${esc(model.title)}</h1><div class="meta"><strong>No. ${esc(model.number)}</strong><br>` +
      `Date: <time datetime="${esc(model.date)}">${esc(formatDocumentDate(model.date))}</time></div></div>`,
  );
  parts.push(
    `<div class="parties">${party(headings.supplier, model.supplier)}${party(headings.recipient, model.recipient)}` +
      `${model.shipTo ? party("Ship to", model.shipTo) : ""}</div>`,
  );
  const facts = [
    ...(model.placeOfSupply ? [["Place of supply", formatState(model.placeOfSupply)]] : []),
    ...(model.references ?? []).map((r) => [r.label, r.value]),
  ];
  if (facts.length) parts.push(`<p>${facts.map(([k, v]) => `${esc(k!)}: <strong>${esc(v!)}</strong>`).join("<br>")}</p>`);

  // On a phone the wide tables scroll inside the page: their box is focusable, so a keyboard can scroll it too.
  parts.push(`<div class="scrolls" role="region" aria-label="Lines" tabindex="0"><table class="lines"><thead><tr>${specs.map((s) => cell(s.heading, s.numeric, "th")).join("")}</tr></thead><tbody>`);
  for (const line of model.lines) parts.push(`<tr>${specs.map((s) => cell(s.cell(line, formatRupees), s.numeric)).join("")}</tr>`);
  parts.push(`</tbody></table></div>`);

  if (model.taxSummary?.length) {
    const summary = taxSummaryTable(model, formatRupees);
    parts.push(
      `<div class="scrolls" role="region" aria-label="Tax summary" tabindex="0"><table class="tax"><caption>Tax summary</caption><thead><tr>${summary.headings.map((h) => cell(h, true, "th")).join("")}</tr></thead>` +
        `<tbody>${summary.rows.map((r) => `<tr>${r.map((c) => cell(c, true)).join("")}</tr>`).join("")}</tbody></table></div>`,
    );
  }
  if (model.totals?.length) {
    parts.push(
      `<table class="totals"><tbody>${model.totals
        .map((t) => `<tr${t.grand ? ' class="grand"' : ""}>${cell(t.label, false)}${cell(formatRupees(t.amount), true)}</tr>`)
        .join("")}</tbody></table>`,
    );
  }
  if (model.notes?.length) parts.push(`<div class="notes">${model.notes.map((n) => `<p>${esc(n)}</p>`).join("")}</div>`);
  if (model.noteArea) parts.push(`<section class="note-area"><h2>${esc(model.noteArea)}</h2><div></div></section>`);
  parts.push(`</article>`);
  return raw(parts.join("\n"));
}
