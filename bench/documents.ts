/**
 * The cost of a printed document (shared/documents/, decision 0030): CPU time of one render, in this Node
 * process (`npx tsx bench/documents.ts`; not part of `npm run bench`, which needs the dev stack). The first
 * render pays for loading pdf-lib's code paths and the standard fonts' metrics; the warm figures are what an
 * isolate that has rendered before spends. Workers' CPU limit is per request: 10 ms on the Free plan.
 *
 * Writes bench/results/documents.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { exampleInvoice, examplePackingSlip } from "#shared/documents/example";
import { renderDocumentHtml } from "#shared/documents/html";
import type { DocumentModel } from "#shared/documents/model";
import { renderDocumentPdf } from "#shared/documents/pdf";

const ROUNDS = 50;

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

function summarize(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: at(1) };
}

async function measure(model: DocumentModel) {
  const cpu: number[] = [];
  const wall: number[] = [];
  let bytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const started = process.cpuUsage();
    const t = performance.now();
    bytes = (await renderDocumentPdf(model)).length;
    wall.push(performance.now() - t);
    cpu.push(cpuMs(started));
  }
  return { lines: model.lines.length, pdfBytes: bytes, cpuMs: summarize(cpu), wallMs: summarize(wall) };
}

async function main() {
  const invoice = exampleInvoice();
  const started = process.cpuUsage();
  await renderDocumentPdf(invoice);
  const firstCpuMs = Math.round(cpuMs(started) * 100) / 100;

  const html: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = process.cpuUsage();
    String(renderDocumentHtml(invoice));
    html.push(cpuMs(t));
  }
  const result = {
    benchmark: "documents",
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}`, loadavg1m: Math.round(os.loadavg()[0]! * 10) / 10 },
    goal: "one invoice PDF warm within Workers' Free-plan 10 ms CPU",
    firstInvoicePdfCpuMs: firstCpuMs,
    invoicePdf3Lines: await measure(invoice),
    invoicePdf120Lines: await measure(exampleInvoice(120)),
    packingSlipPdf3Lines: await measure(examplePackingSlip()),
    invoiceHtml3LinesCpuMs: summarize(html),
  };
  const out = path.join(import.meta.dirname, "results", "documents.json");
  fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
}

await main();
