import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AppError } from "#shared/core/errors";
import { renderDocumentHtml, DOCUMENT_CSS } from "#shared/documents/html";
import { pdfDownload } from "#shared/documents/download";
import { renderDocumentPdf } from "#shared/documents/pdf";
import { inlineStyle } from "#shared/http/security-headers";
import { orderNotFound } from "#shared/orders/order-detail";
import { listOrderInvoices } from "#shared/procedures/invoices";
import type { AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { AdminPage } from "./layout";
import { Section } from "./parts";

/**
 * An order's tax invoices (docs/gst.md "Tax invoices"): the order page's "Invoices" block, and each invoice
 * as a printable page (`/orders/<id>/invoices/<invoiceId>`) and a PDF (`…/<invoiceId>.pdf`), both the
 * document frozen at issue, read through orders.invoices (orders.read; another store's order or invoice is 404).
 */
export const orderInvoicesPage = new Hono<AdminEnv>();

inlineStyle(DOCUMENT_CSS);

type InvoiceRow = { id: string; number: string };

export const Invoices: FC<{ orderId: string; invoices: readonly InvoiceRow[] | undefined }> = ({ orderId, invoices }) =>
  invoices && invoices.length > 0 ? (
    <Section id="invoices" title="Invoices">
      <ul>
        {invoices.map((i) => (
          <li data-invoice={i.id}>
            <span class="mono">{i.number}</span> <a href={`/orders/${orderId}/invoices/${i.id}`}>View</a>{" "}
            <a href={`/orders/${orderId}/invoices/${i.id}.pdf`}>PDF</a>
          </li>
        ))}
      </ul>
    </Section>
  ) : null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const invoiceNotFound = () => new AppError("NOT_FOUND", "Invoice not found on this order.");

// GET /orders/<id>/invoices/<invoiceId>[.pdf] (orders.read).
orderInvoicesPage.get("/orders/:id/invoices/:file", async (c) => {
  const id = c.req.param("id");
  const file = c.req.param("file");
  const pdf = file.endsWith(".pdf");
  const invoiceId = pdf ? file.slice(0, -4) : file;
  if (!UUID.test(id)) throw orderNotFound();
  if (!UUID.test(invoiceId)) throw invoiceNotFound();
  const { chrome, read } = await storePage(c, { invoices: call(listOrderInvoices, { id }, ["NOT_FOUND"]) });
  const invoice = read.invoices().invoices.find((i) => i.id === invoiceId);
  if (!invoice) throw invoiceNotFound();
  if (pdf) return pdfDownload(await renderDocumentPdf(invoice.document), invoice.number, { "cache-control": "no-store" });
  return c.html(
    <AdminPage title={`Invoice ${invoice.number}`} chrome={chrome}>
      <p class="no-print">
        <a href={`/orders/${id}`}>← Order</a> · <a href={`/orders/${id}/invoices/${invoiceId}.pdf`}>PDF</a>
      </p>
      {renderDocumentHtml(invoice.document)}
    </AdminPage>,
  );
});
