import type { FC } from "hono/jsx";
import type { OrderDetail } from "#shared/orders/order-detail";
import { formatMoney } from "./layout";
import { IstTime, StatusBadge, words } from "./order-words";
import { Section, Table } from "./parts";

/** The order page's shipments (with their tracking history), returns, refunds and open tasks. */

const TimeCell: FC<{ at: string }> = ({ at }) => (
  <td>
    <IstTime at={at} />
  </td>
);
const StatusCell: FC<{ value: string; label: string }> = ({ value, label }) => (
  <td>
    <StatusBadge value={value} label={label} />
  </td>
);

const SHIPMENT_COLUMNS = [{ label: "Parcel" }, { label: "Courier" }, { label: "Tracking number" }, { label: "Status" }, { label: "History" }];

export const Shipments: FC<{ order: OrderDetail }> = ({ order }) => (
  <Section id="shipments" title="Shipments">
    {order.shipments.length === 0 ? (
      <p class="muted">No shipments yet. A parcel's shipment, with its courier and tracking number, shows here once it is sent.</p>
    ) : (
      <Table columns={SHIPMENT_COLUMNS}>
        {order.shipments.map((s) => (
          <tr data-shipment={s.awb}>
            <td>{order.parcels.findIndex((p) => p.id === s.parcelId) + 1}</td>
            <td>{s.courierName ?? words(s.provider)}</td>
            <td class="mono">{/^https?:\/\//.test(s.trackingUrl ?? "") ? <a href={s.trackingUrl!} rel="noopener noreferrer">{s.awb}</a> : s.awb}</td>
            <StatusCell value={s.status} label="Shipment" />
            <td>
              <ol class="timeline">
                {s.events.map((e) => (
                  <li>
                    <IstTime at={e.occurredAt} /> · {words(e.status)}
                    {e.providerStatus ? ` (${e.providerStatus})` : ""} · {e.source}
                  </li>
                ))}
              </ol>
            </td>
          </tr>
        ))}
      </Table>
    )}
  </Section>
);

const RETURN_COLUMNS = [{ label: "Return" }, { label: "Items" }, { label: "Reason" }, { label: "Status" }, { label: "Opened" }];
const REFUND_COLUMNS = [{ label: "Amount", num: true }, { label: "Status" }, { label: "Reason" }, { label: "When" }];

export const AfterSale: FC<{ order: OrderDetail }> = ({ order }) => {
  const money = (minor: number) => formatMoney(minor, order.currency);
  const lineTitle = (id: string) => order.lines.find((l) => l.id === id)?.productTitle ?? "Item";
  const open = order.tasks.filter((t) => t.status === "open");
  return (
    <>
      {open.length > 0 ? (
        <Section id="tasks" title="To do">
          <ul>
            {open.map((t) => {
              // A payment under review links to its attempt's row.
              const attempt = t.kind === "payment_review" ? order.attempts.find((a) => a.id === t.subjectId) : undefined;
              return <li data-task={t.kind}>{attempt ? <a href={`#attempt-${attempt.attempt}`}>{t.title}</a> : t.title}</li>;
            })}
          </ul>
        </Section>
      ) : null}
      {order.returns.length > 0 ? (
        <Section id="returns" title="Returns">
          <Table columns={RETURN_COLUMNS}>
            {order.returns.map((r) => (
              <tr data-return={r.number}>
                <td>{r.number}</td>
                <td>{r.lines.map((l) => `${lineTitle(l.orderLineId)} ×${l.quantity}`).join(", ")}</td>
                <td>
                  {r.reason}
                  {r.note ? <p class="muted">{r.note}</p> : null}
                </td>
                <td>
                  <StatusBadge value={r.status} label="Return" />
                  {r.restocked ? " · restocked" : ""}
                </td>
                <TimeCell at={r.createdAt} />
              </tr>
            ))}
          </Table>
        </Section>
      ) : null}
      {order.refunds.length > 0 ? (
        <Section id="refunds" title="Refunds">
          <Table columns={REFUND_COLUMNS}>
            {order.refunds.map((r) => (
              <tr>
                <td class="num">{money(r.amount)}</td>
                <StatusCell value={r.status} label="Refund" />
                <td>{r.reason ?? ""}</td>
                <TimeCell at={r.createdAt} />
              </tr>
            ))}
          </Table>
        </Section>
      ) : null}
    </>
  );
};
