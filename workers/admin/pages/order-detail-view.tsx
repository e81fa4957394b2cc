import type { FC } from "hono/jsx";
import { INDIAN_STATE_NAMES, isIndianStateCode, UTGST_TERRITORIES } from "#shared/rules/gst";
import type { AttemptView, OrderDetail } from "#shared/orders/order-detail";
import type { ParcelView } from "#shared/orders/order-view";
import { formatMoney } from "./layout";
import { packingSlipPath } from "./packing-slip";
import { eventWords, IstTime, StatusBadge, words } from "./order-words";
import { Section, Table } from "./parts";

/** The sections of the order page (./order-detail.tsx): everything orders.get answers, read-only. */

type Money = (minor: number) => string;
const moneyOf = (order: OrderDetail): Money => (minor) => formatMoney(minor, order.currency);

export const OrderHeader: FC<{ order: OrderDetail }> = ({ order }) => (
  <header class="order-head">
    <h1>Order #{order.number}</h1>
    <p class="badges">
      <StatusBadge value={order.status} label="Status" /> <StatusBadge value={order.paymentStatus} label="Payment" />{" "}
      <StatusBadge value={order.fulfillmentStatus} label="Fulfillment" />
      {order.channel === "ucp" ? (
        <>
          {" "}
          <StatusBadge value={order.channel} label="Channel" />
        </>
      ) : null}
    </p>
    <p class="muted">
      Placed <IstTime at={order.placedAt} /> · {order.paymentMethod === "gateway" ? "Online payment" : words(order.paymentMethod)}
      {order.agent ? (
        <>
          {" "}
          · placed by an AI agent of{" "}
          <span data-agent={order.agent.host} title={order.agent.profileUrl}>
            {order.agent.host}
          </span>
        </>
      ) : order.channel === "online_store" ? (
        " · Online store"
      ) : null}
    </p>
    {order.expiresAt && order.status === "open" && ["unpaid", "pending", "authorized"].includes(order.paymentStatus) ? (
      <p class="notice" data-hold={new Date(order.expiresAt).toISOString()}>
        Waiting for payment: its items are held until <IstTime at={order.expiresAt} />. If the money has not arrived by then, the stock is
        released and the order expires. Cancel it to release the stock now.
      </p>
    ) : null}
  </header>
);

const stateName = (code: string | undefined) => (code && isIndianStateCode(code) ? INDIAN_STATE_NAMES[code] : code);

export const Customer: FC<{ order: OrderDetail }> = ({ order }) => {
  const a = order.shippingAddress;
  const place = [a["city"], stateName(a["state"]), a["postalCode"]].filter(Boolean).join(", ");
  return (
    <Section id="customer" title="Customer">
      <div class="card compact">
        <p>
          <a href={`mailto:${order.email}`}>{order.email}</a>
          {order.phone ? (
            <>
              {" · "}
              <a href={`tel:${order.phone}`}>{order.phone}</a>
            </>
          ) : (
            <span class="muted"> · no phone</span>
          )}
        </p>
        {order.buyerGstin ? (
          <p data-buyer-gstin>
            Business purchase: GSTIN <strong>{order.buyerGstin}</strong>
            {order.buyerLegalName ? ` · ${order.buyerLegalName}` : ""}
          </p>
        ) : null}
        <address>
          {[a["name"], a["line1"], a["line2"], place, a["country"] === "IN" ? "India" : a["country"]].filter(Boolean).map((text) => (
            <>
              {text}
              <br />
            </>
          ))}
        </address>
      </div>
    </Section>
  );
};

const LINE_COLUMNS = [
  { label: "Product" },
  { label: "SKU" },
  { label: "Qty", num: true },
  { label: "Unit price", num: true },
  { label: "Discount", num: true },
  { label: "Line total", num: true },
];

export const Lines: FC<{ order: OrderDetail }> = ({ order }) => {
  const money = moneyOf(order);
  return (
    <Section id="lines" title="Items">
      <Table columns={LINE_COLUMNS}>
        {order.lines.map((l) => (
          <tr>
            <td>
              {l.productTitle}
              <div class="muted">
                {l.variantTitle}
                {l.preorder ? " · pre-order" : ""}
              </div>
            </td>
            <td class="mono">{l.sku ?? "—"}</td>
            <td class="num">{l.quantity}</td>
            <td class="num">{money(l.unitPrice)}</td>
            <td class="num">{l.discount > 0 ? `−${money(l.discount)}` : "—"}</td>
            <td class="num">{money(l.lineTotal)}</td>
          </tr>
        ))}
      </Table>
    </Section>
  );
};

/** CGST + SGST within a state (UTGST for a union territory without a legislature), else IGST. */
function gstText(p: ParcelView, money: Money, shipTo: string | undefined): string {
  if (p.igst > 0) return `IGST ${money(p.igst)}`;
  const half = shipTo && isIndianStateCode(shipTo) && UTGST_TERRITORIES.has(shipTo) ? "UTGST" : "SGST";
  return `CGST ${money(p.cgst)} + ${half} ${money(p.sgst)}`;
}

const PARCEL_COLUMNS = [
  { label: "Parcel" },
  { label: "Ships from" },
  { label: "Subtotal", num: true },
  { label: "Discount", num: true },
  { label: "Shipping", num: true },
  { label: "GST (included)", num: true },
];

export const Parcels: FC<{ order: OrderDetail; locations: ReadonlyMap<string, string> }> = ({ order, locations }) => {
  const money = moneyOf(order);
  return (
    <Section id="parcels" title="Parcels">
      <Table columns={PARCEL_COLUMNS}>
        {order.parcels.map((p, i) => (
          <tr data-parcel={p.id}>
            <td>
              {i + 1}
              <div>
                <a href={packingSlipPath(order.id, p.id)}>Packing slip</a>
              </div>
            </td>
            <td>{p.locationId ? (locations.get(p.locationId) ?? <span class="mono">{p.locationId.slice(0, 8)}</span>) : <span class="muted">Backordered</span>}</td>
            <td class="num">{money(p.subtotal)}</td>
            <td class="num">{p.discount > 0 ? `−${money(p.discount)}` : "—"}</td>
            <td class="num">{money(p.shipping)}</td>
            <td class="num">
              {money(p.tax)}
              <div class="muted">{gstText(p, money, order.shippingAddress["state"])}</div>
            </td>
          </tr>
        ))}
      </Table>
    </Section>
  );
};

export const Totals: FC<{ order: OrderDetail }> = ({ order }) => {
  const money = moneyOf(order);
  return (
    <Section id="totals" title="Totals">
      <table class="totals">
        <tbody>
          <tr>
            <th scope="row">Subtotal</th>
            <td class="num">{money(order.subtotal)}</td>
          </tr>
          {order.discount > 0 ? (
            <tr>
              <th scope="row">Discount{order.discountCode ? ` (${order.discountCode})` : ""}</th>
              <td class="num">−{money(order.discount)}</td>
            </tr>
          ) : null}
          <tr>
            <th scope="row">Shipping</th>
            <td class="num">{money(order.shipping)}</td>
          </tr>
          <tr>
            <th scope="row">Total</th>
            <td class="num" data-total="order">
              <strong>{money(order.total)}</strong>
            </td>
          </tr>
          <tr>
            <th scope="row">GST included in the total</th>
            <td class="num">{money(order.tax)}</td>
          </tr>
        </tbody>
      </table>
    </Section>
  );
};

const ATTEMPT_COLUMNS = [
  { label: "Attempt" },
  { label: "Key" },
  { label: "Provider" },
  { label: "Status" },
  { label: "Amount", num: true },
  { label: "When" },
];

/** What a payment under review reported, in words (its currency may be any the gateway sent). */
const ReviewNote: FC<{ review: NonNullable<AttemptView["review"]>; money: Money }> = ({ review, money }) => {
  const { report } = review;
  const currency = report.currency ?? "";
  const amount = /^[A-Z]{3}$/.test(currency) ? formatMoney(report.amount, currency) : `${report.amount} ${currency}`.trim();
  return (
    <p class="muted" data-review={review.reason}>
      Reported {report.status} for {report.currency ? amount : money(report.amount)}
      {report.paymentId ? ` (payment ${report.paymentId})` : ""} by {words(report.trigger).toLowerCase()}, <IstTime at={review.at} />:{" "}
      {review.reason === "currency_differs" ? "another currency than the order's" : "less than this attempt asked"}. It does not count towards the order.
    </p>
  );
};

export const Attempts: FC<{ order: OrderDetail }> = ({ order }) => {
  const money = moneyOf(order);
  return (
    <Section id="payments" title="Payment attempts">
      {order.attempts.length === 0 ? (
        <p class="muted">No payment attempts.</p>
      ) : (
        <Table columns={ATTEMPT_COLUMNS}>
          {order.attempts.map((a) => (
            <tr data-attempt={a.attempt} id={`attempt-${a.attempt}`}>
              <td>{a.attempt}</td>
              <td class="mono">{a.idempotencyKey}</td>
              <td>{words(a.provider)}</td>
              <td>
                <StatusBadge value={a.status} label="Attempt" />
                {a.review ? (
                  <>
                    {" "}
                    <StatusBadge value="under_review" label="Payment check" />
                    <ReviewNote review={a.review} money={money} />
                  </>
                ) : null}
              </td>
              <td class="num">{money(a.amount)}</td>
              <td>
                <IstTime at={a.createdAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
};

/** Events of one transaction share its time: the order's own event reads first (placed, then stock reserved). */
const orderEventsFirst = (kind: string) => (kind.startsWith("order.") ? 0 : 1);

export const Timeline: FC<{ order: OrderDetail }> = ({ order }) => (
  <Section id="timeline" title="Timeline">
    {order.events.length === 0 ? (
      <p class="muted">Nothing recorded yet.</p>
    ) : (
      <ol class="timeline">
        {order.events
          .toSorted((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || orderEventsFirst(a.kind) - orderEventsFirst(b.kind))
          .map((e) => (
            <li data-kind={e.kind}>
              <IstTime at={e.createdAt} /> · {eventWords(e.kind)}
            </li>
          ))}
      </ol>
    )}
  </Section>
);
