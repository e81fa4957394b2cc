import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { FC } from "hono/jsx";
import { plan, together } from "#shared/db/plan";
import { sql } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { buyerDocumentsPlan, documentPath, type BuyerDocumentKind } from "#shared/orders/buyer-invoices";
import { buyerAccessPlan, checkProof, opensOrder, orderPath, proofHashes } from "#shared/orders/access";
import { orderViewStatement } from "#shared/orders/order-view";
import { buyerOrderFacts } from "#shared/orders/statements/order-view";
import { FULFILLMENT_WORDS, PAYMENT_WORDS, type OrderStatus } from "#shared/rules/status";
import { formatMoney } from "#shared/storefront/catalog";
import { CART_COOKIE } from "./cart";
import { notFoundPage } from "./catalog-pages";
import { ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

/**
 * The buyer's order page, `/orders/<id>`: opened by the cart cookie that became the order, or in any
 * browser by the order's link `?k=<key>` (docs/decisions/0009-order-access-key.md). Anything else, a
 * wrong key included, is the store's 404 page, the same as an unknown order.
 */
type ShopContext = Context<ShopEnv>;

const ORDER_WORDS = {
  open: "placed",
  completed: "completed",
  cancelled: "cancelled",
  expired: "expired (not paid in time)",
} satisfies Record<OrderStatus, string>;

/** One status in words, with its value for machines (`data-value`). */
const Status: FC<{ of: string; value: string; words: Readonly<Record<string, string>> }> = ({ of, value, words }) => (
  <dd data-status={of} data-value={value}>
    {words[value] ?? value.replaceAll("_", " ")}
  </dd>
);

const BALANCE_WORDS = {
  later: (left: string) => `Your deposit is in. We will ask for the balance of ${left} when your pre-ordered items arrive.`,
  due: (left: string) => `Your pre-ordered items have arrived: the balance of ${left} is due.`,
  expired: (left: string) => `The time to pay the balance of ${left} is over: the store will contact you.`,
} as const;

const SHIPMENT_WORDS: Readonly<Record<string, string>> = {
  pending: "handed to the courier",
  in_transit: "on its way",
  delivered: "delivered",
  rto_initiated: "coming back to us",
  rto_delivered: "returned to us",
};

/** The order's tax invoices or credit notes: each with its page and its PDF, under the order's key when the shopper came with one. */
const DocumentList: FC<{ title: string; kind: BuyerDocumentKind; orderId: string; rows: readonly { id: string; number: string }[]; orderKey: string | null }> = ({ title, kind, orderId, rows, orderKey }) => (
  <>
    <h2>{title}</h2>
    <ul>
      {rows.map((d) => (
        <li data-invoice={kind === "invoices" ? d.id : undefined} data-credit-note={kind === "credit-notes" ? d.id : undefined}>
          {d.number}: <a href={documentPath(kind, orderId, d.id, orderKey)}>View</a> · <a href={documentPath(kind, orderId, d.id, orderKey, true)}>PDF</a>
        </li>
      ))}
    </ul>
  </>
);

export async function orderPage(c: ShopContext) {
  const { store, db } = c.var.shop;
  // The link carries the order's key: no cache may keep the page, and no other site may see its address.
  c.header("cache-control", "private, no-store");
  c.header("referrer-policy", "no-referrer");
  const proof = checkProof(c.req.param("orderId") ?? "", { cartToken: getCookie(c, CART_COOKIE), key: c.req.query("k") });
  if (!proof) return notFoundPage(c);
  const { orderId } = proof;
  const hashes = await proofHashes(proof);
  // One unit: the proof checked, and the order and what the page says of it, each only when the proof opens it.
  const read = await sendStoreUnit(db, store.id, (q) => {
    const storeSql = sql`${store.id}::uuid`;
    const shown = plan(
      [
        orderViewStatement(q, storeSql, sql`(select o.id from shop_order o where o.store_id = ${storeSql} and o.id = ${orderId} and ${opensOrder(hashes)})`),
        buyerOrderFacts(q, storeSql, orderId, opensOrder(hashes)),
      ] as const,
      ([[view], [facts]]) => ({ view: view?.order ?? null, facts }),
    );
    return together({ access: buyerAccessPlan(q, storeSql, hashes), shown, documents: buyerDocumentsPlan(q, storeSql, orderId, opensOrder(hashes)) });
  });
  const access = await read.access;
  const { view, facts } = read.shown;
  const { invoices, creditNotes } = read.documents;
  const found =
    access && view && facts
      ? { order: view, attempt: facts.status ? { status: facts.status, payment_method: facts.payment_method } : undefined, balance: facts.balance, shipments: facts.shipments, key: access.key }
      : null;
  if (!found) return notFoundPage(c);
  const { order, attempt, balance, shipments, key } = found;
  const money = (minor: number) => formatMoney(minor, order.currency);
  const balanceState = balance.state !== "none" && order.status === "open" && order.paymentStatus === "partially_paid" && balance.left > 0 ? balance.state : null;
  const canPay = order.status === "open" && attempt?.payment_method === "gateway" && (["unpaid", "pending"].includes(order.paymentStatus) || balanceState === "due");
  return c.html(
    <ShopPage head={{ storeName: store.name, title: `Order #${order.number}`, description: `Your order at ${store.name}.`, noindex: true }}>
      <h1>Order #{order.number}</h1>
      <p>
        Thank you for your order. We will write to <strong>{order.email}</strong> about it.
      </p>
      {key ? (
        <p class="muted">
          Keep <a href={orderPath(order.id, key)}>this order's link</a>: it shows your order on any device. Anyone with it can see the order.
        </p>
      ) : null}
      <dl class="totals">
        <dt>Order</dt>
        <Status of="order" value={order.status} words={ORDER_WORDS} />
        <dt>Payment</dt>
        <Status of="payment" value={order.paymentStatus} words={PAYMENT_WORDS} />
        <dt>Shipping</dt>
        <Status of="fulfillment" value={order.fulfillmentStatus} words={FULFILLMENT_WORDS} />
      </dl>
      {attempt?.status === "failed" ? (
        <p class="alert" role="alert">
          Your last payment did not go through. Your order is kept: you can pay again.
        </p>
      ) : null}
      {balanceState ? <p data-balance={balanceState}>{BALANCE_WORDS[balanceState](money(balance.left))}</p> : null}
      {canPay ? (
        <form method="post" action={`/api/checkout/${order.id}/pay${key ? `?k=${key}` : ""}`}>
          <button type="submit">Pay now</button>
        </form>
      ) : null}
      {shipments.length > 0 ? (
        <>
          <h2>Shipments</h2>
          <ul>
            {shipments.map((s) => (
              <li data-shipment={s.awb}>
                {s.courierName ?? "Courier"}, tracking number <strong>{s.awb}</strong>: {SHIPMENT_WORDS[s.status] ?? s.status}
                {s.trackingUrl?.startsWith("https://") || s.trackingUrl?.startsWith("http://") ? (
                  <>
                    {" "}
                    (<a href={s.trackingUrl} rel="noopener noreferrer">track it</a>)
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {invoices.length > 0 ? <DocumentList title="Tax invoices" kind="invoices" orderId={order.id} rows={invoices} orderKey={key} /> : null}
      {creditNotes.length > 0 ? <DocumentList title="Credit notes" kind="credit-notes" orderId={order.id} rows={creditNotes} orderKey={key} /> : null}
      {order.buyerGstin ? (
        <p data-buyer-gstin>
          Business purchase: GSTIN <strong>{order.buyerGstin}</strong>
          {order.buyerLegalName ? <> ({order.buyerLegalName})</> : null}, shown on your tax invoice.
        </p>
      ) : null}
      <h2>Parcels</h2>
      <ol>
        {order.parcels.map((p) => (
          <li>
            {money(p.subtotal - p.discount + p.shipping)} (GST {money(p.tax)}: {p.igst > 0 ? `IGST ${money(p.igst)}` : `CGST ${money(p.cgst)} + SGST ${money(p.sgst)}`})
          </li>
        ))}
      </ol>
      <dl class="totals">
        <dt>Subtotal</dt>
        <dd>{money(order.subtotal)}</dd>
        {order.discount > 0 ? (
          <>
            <dt>Discount</dt>
            <dd>−{money(order.discount)}</dd>
          </>
        ) : null}
        <dt>Shipping</dt>
        <dd>{money(order.shipping)}</dd>
        <dt>Total (incl. GST {money(order.tax)})</dt>
        <dd data-total="order">
          <strong>{money(order.total)}</strong>
        </dd>
      </dl>
    </ShopPage>,
  );
}
