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
 * An order's tax invoices and credit notes (docs/gst.md "Tax invoices", "Credit notes"): the order page's
 * "Invoices" block, and each document as a printable page (`/orders/<id>/invoices/<invoiceId>`,
 * `/orders/<id>/credit-notes/<creditNoteId>`) and a PDF (`….pdf`), both the document frozen at issue, read
 * through orders.invoices (orders.read; another store's order or document is 404).
 */
export const orderInvoicesPage = new Hono<AdminEnv>();

inlineStyle(DOCUMENT_CSS);

type DocumentRow = { id: string; number: string };
type Kind = "invoices" | "credit-notes";

const DocumentLinks: FC<{ orderId: string; kind: Kind; rows: readonly DocumentRow[] }> = ({ orderId, kind, rows }) => (
  <ul>
    {rows.map((d) => (
      <li data-document={d.id}>
        <span class="mono">{d.number}</span> <a href={`/orders/${orderId}/${kind}/${d.id}`}>View</a> <a href={`/orders/${orderId}/${kind}/${d.id}.pdf`}>PDF</a>
      </li>
    ))}
  </ul>
);

export const Invoices: FC<{ orderId: string; documents: { invoices: readonly DocumentRow[]; creditNotes: readonly DocumentRow[] } | undefined }> = ({ orderId, documents }) =>
  documents && documents.invoices.length + documents.creditNotes.length > 0 ? (
    <Section id="invoices" title="Invoices">
      <DocumentLinks orderId={orderId} kind="invoices" rows={documents.invoices} />
      {documents.creditNotes.length > 0 ? (
        <>
          <h3>Credit notes</h3>
          <DocumentLinks orderId={orderId} kind="credit-notes" rows={documents.creditNotes} />
        </>
      ) : null}
    </Section>
  ) : null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const documentNotFound = (kind: Kind) => new AppError("NOT_FOUND", `${kind === "invoices" ? "Invoice" : "Credit note"} not found on this order.`);

// GET /orders/<id>/invoices/<invoiceId>[.pdf], /orders/<id>/credit-notes/<creditNoteId>[.pdf] (orders.read).
orderInvoicesPage.get("/orders/:id/:kind{invoices|credit-notes}/:file", async (c) => {
  const id = c.req.param("id");
  const kind = c.req.param("kind") as Kind;
  const file = c.req.param("file");
  const pdf = file.endsWith(".pdf");
  const documentId = pdf ? file.slice(0, -4) : file;
  if (!UUID.test(id)) throw orderNotFound();
  if (!UUID.test(documentId)) throw documentNotFound(kind);
  const { chrome, read } = await storePage(c, { documents: call(listOrderInvoices, { id }, ["NOT_FOUND"]) });
  const documents = read.documents();
  const found = (kind === "invoices" ? documents.invoices : documents.creditNotes).find((d) => d.id === documentId);
  if (!found) throw documentNotFound(kind);
  if (pdf) return pdfDownload(await renderDocumentPdf(found.document), found.number, { "cache-control": "no-store" });
  return c.html(
    <AdminPage title={`${found.document.title} ${found.number}`} chrome={chrome}>
      <p class="no-print">
        <a href={`/orders/${id}`}>← Order</a> · <a href={`/orders/${id}/${kind}/${documentId}.pdf`}>PDF</a>
      </p>
      {renderDocumentHtml(found.document)}
    </AdminPage>,
  );
});
