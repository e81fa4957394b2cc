import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { sql } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { pdfDownload } from "#shared/documents/download";
import { DOCUMENT_CSS, renderDocumentHtml } from "#shared/documents/html";
import { renderDocumentPdf } from "#shared/documents/pdf";
import { inlineStyle } from "#shared/http/security-headers";
import { checkProof, opensOrder, proofHashes } from "#shared/orders/access";
import { buyerDocumentPlan, type BuyerDocumentKind } from "#shared/orders/buyer-invoices";
import { CART_COOKIE } from "./cart";
import { notFoundPage } from "./catalog-pages";
import { ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

/**
 * A tax invoice or credit note of the buyer's order (docs/gst.md "Tax invoices", "Credit notes"),
 * `/orders/<id>/invoices/<invoiceId>` or `/orders/<id>/credit-notes/<creditNoteId>` as a printable page and
 * `….pdf` as a download: opened as the order page is (the cart cookie or
 * `?k=<key>`, shared/orders/access.ts), in one unit. Anything else, another order's invoice included, is the
 * store's 404 page.
 */
inlineStyle(DOCUMENT_CSS);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function orderInvoicePage(c: Context<ShopEnv>) {
  const { store, db } = c.var.shop;
  c.header("cache-control", "private, no-store");
  c.header("referrer-policy", "no-referrer");
  const file = c.req.param("file") ?? "";
  const pdf = file.endsWith(".pdf");
  const documentId = pdf ? file.slice(0, -4) : file;
  const kind = c.req.param("kind") as BuyerDocumentKind;
  const proof = checkProof(c.req.param("orderId") ?? "", { cartToken: getCookie(c, CART_COOKIE), key: c.req.query("k") });
  if (!proof || !UUID.test(documentId)) return notFoundPage(c);
  const hashes = await proofHashes(proof);
  const invoice = await sendStoreUnit(db, store.id, (q) => buyerDocumentPlan(q, sql`${store.id}::uuid`, { kind, orderId: proof.orderId, documentId }, opensOrder(hashes)));
  if (!invoice) return notFoundPage(c);
  if (pdf) return pdfDownload(await renderDocumentPdf(invoice.document), invoice.number, { "cache-control": "private, no-store", "referrer-policy": "no-referrer" });
  return c.html(
    <ShopPage head={{ storeName: store.name, title: `${invoice.document.title} ${invoice.number}`, description: `${invoice.document.title} ${invoice.number} from ${store.name}.`, noindex: true }}>
      {renderDocumentHtml(invoice.document)}
    </ShopPage>,
  );
}
