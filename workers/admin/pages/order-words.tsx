import type { FC } from "hono/jsx";

/**
 * How the Orders pages say things: statuses as words and coloured badges, times and days in India (the
 * stores sell in INR; GST days are Indian days too), and the order timeline's event kinds in words.
 */

const WORDS: Readonly<Record<string, string>> = { rto_initiated: "Returning to origin (RTO)", rto_delivered: "Returned to origin (RTO)", ucp: "AI agent (UCP)" };

/** `partially_paid` → `Partially paid`. */
export const words = (value: string): string => {
  if (WORDS[value]) return WORDS[value];
  const text = value.replace(/[_.]/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
};

type Tone = "good" | "wait" | "bad" | "off";

const TONES: Readonly<Record<string, Tone>> = {
  // order
  completed: "good",
  cancelled: "bad",
  expired: "off",
  // payment (an order's, and an attempt's)
  unpaid: "wait",
  pending: "wait",
  created: "wait",
  authorized: "wait",
  partially_paid: "wait",
  paid: "good",
  captured: "good",
  failed: "bad",
  partially_refunded: "off",
  refunded: "off",
  under_review: "bad",
  // fulfillment
  partially_fulfilled: "wait",
  fulfilled: "wait",
  delivered: "good",
  rto_initiated: "bad",
  rto_delivered: "off",
};

/** A status as a badge; `label` names which status it is for screen readers and tooltips. */
export const StatusBadge: FC<{ value: string; label: string }> = ({ value, label }) => (
  <span class={`badge ${TONES[value] ?? ""}`.trim()} title={label} data-status={value}>
    <span class="sr-only">{label}: </span>
    {words(value)}
  </span>
);

// India keeps one time zone, UTC+05:30, with no daylight saving.
const IST_OFFSET_MS = 330 * 60_000;
export const IST_OFFSET = "+05:30";

/** An instant as `2026-01-31 15:30 IST`, in a <time> carrying the exact instant. */
export const IstTime: FC<{ at: Date | string | null }> = ({ at }) => {
  if (!at) return <span class="muted">—</span>;
  const d = at instanceof Date ? at : new Date(at);
  const local = new Date(d.getTime() + IST_OFFSET_MS).toISOString();
  return <time datetime={d.toISOString()}>{`${local.slice(0, 10)} ${local.slice(11, 16)} IST`}</time>;
};

/** An order's first cells in a list: its number, linking to its page, and when it was placed. */
export const OrderCells: FC<{ order: { id: string; number: number; placedAt: Date | string } }> = ({ order }) => (
  <>
    <td>
      <a href={`/orders/${order.id}`}>#{order.number}</a>
    </td>
    <td>
      <IstTime at={order.placedAt} />
    </td>
  </>
);

/** The instant an Indian day (YYYY-MM-DD) starts, or the next day's start when `after` (an inclusive end). */
export function istDayStart(day: string, after = false): string {
  const next = after ? new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : day;
  return `${next}T00:00:00${IST_OFFSET}`;
}

const EVENT_WORDS: Readonly<Record<string, string>> = {
  "order.placed": "Order placed",
  "inventory.reserved": "Stock reserved",
  "payment.failed": "A payment attempt failed",
  "order.paid": "Paid in full",
  "order.paid_late": "Paid after the order had closed",
  "payment.review": "A payment did not add up: held for review",
  "order.fulfilled": "Every parcel shipped",
  "order.cancelled": "Order cancelled",
  "inventory.released": "Reserved stock released",
};

/** An outbox event kind in words; kinds without words of their own are spelled out (`refund.created` → `Refund created`). */
export const eventWords = (kind: string): string => EVENT_WORDS[kind] ?? words(kind);
