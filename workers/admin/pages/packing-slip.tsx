import { Hono } from "hono";
import { DOCUMENT_CSS, renderDocumentHtml } from "#shared/documents/html";
import { inlineScript, inlineStyle } from "#shared/http/security-headers";
import { orderNotFound } from "#shared/orders/order-detail";
import { packingSlipDocument, packingSlipPlan, parcelNotFound } from "#shared/orders/packing-slips";
import { getOrder } from "#shared/procedures/orders";
import { gatedScope } from "#shared/procedures/scope";
import type { AdminEnv } from "../context";
import { checkOnly, planned, storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * A parcel's packing slip (`/orders/<id>/parcels/<parcelId>/packing-slip`, shared/orders/packing-slips.ts):
 * the printable page the order page links from each parcel, shipped or not. It needs what the order page
 * needs (orders.read); another store's parcel, another order's, or an id that is not a uuid is the 404 page.
 * Printed, it is A4 with the slip only (DOCUMENT_CSS); the Print button shows only where its script runs.
 */
export const packingSlipPage = new Hono<AdminEnv>();

inlineStyle(DOCUMENT_CSS);
const PRINT_SCRIPT = inlineScript(
  `(function(){var b=document.querySelector("button[data-print]");if(!b)return;b.hidden=false;b.addEventListener("click",function(){window.print()})})();`,
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const packingSlipPath = (orderId: string, parcelId: string) => `/orders/${orderId}/parcels/${parcelId}/packing-slip`;

// GET /orders/<id>/parcels/<parcelId>/packing-slip (orders.read).
packingSlipPage.get("/orders/:id/parcels/:parcelId/packing-slip", async (c) => {
  const orderId = c.req.param("id");
  const parcelId = c.req.param("parcelId");
  if (!UUID.test(orderId)) throw orderNotFound();
  if (!UUID.test(parcelId)) throw parcelNotFound();
  const { chrome, me, read } = await storePage(c, {
    access: checkOnly(getOrder),
    slip: planned((q, scope) => packingSlipPlan(q, gatedScope(scope, "orders.read").store, { orderId, parcelId }), ["NOT_FOUND"]),
  });
  const slip = packingSlipDocument(read.slip(), me.store.name);
  return c.html(
    <AdminPage title={`Packing slip ${slip.number}`} chrome={chrome}>
      <p class="no-print">
        <a href={`/orders/${orderId}`}>← Order</a>{" "}
        <button type="button" class="small" data-print hidden>
          Print
        </button>{" "}
        <span class="muted">Or print it from the browser (Ctrl+P, ⌘P): the slip prints on A4 without the admin's menus.</span>
      </p>
      {renderDocumentHtml(slip)}
      <script dangerouslySetInnerHTML={{ __html: PRINT_SCRIPT }} />
    </AdminPage>,
  );
});
