/**
 * The two status routines' pure decisions (docs/order-status.md): which status a payment attempt may move
 * to, and what an order's payment_status, fulfillment_status and open/completed status are, given its rows.
 * No database, no clock: the statements that read the rows and write the answers live elsewhere.
 */

// ---- Payment attempts --------------------------------------------------------------------------------

export const ATTEMPT_STATUSES = ["created", "pending", "authorized", "captured", "refunded", "failed"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/**
 * The one order of attempt states; an attempt only ever moves to a higher rank, jumps allowed.
 * `failed` sits after `authorized` and before `captured`: nothing that holds no money leaves it, but a
 * late capture does (the gateway timed out or said failed, then the money moved after all), and so does
 * a refund report, which proves a capture happened even when its own report has not arrived yet.
 */
export const ATTEMPT_RANK: Readonly<Record<AttemptStatus, number>> = {
  created: 0,
  pending: 1,
  authorized: 2,
  failed: 3,
  captured: 4,
  refunded: 5,
};

export type AttemptRefusal = "same" | "backwards" | "terminal";
export type AttemptDecision = { apply: true; to: AttemptStatus } | { apply: false; reason: AttemptRefusal };

/**
 * Whether an attempt at `current` moves when a trigger (webhook, client confirmation, 'Mark as paid',
 * expiry reconciliation) reports `requested`. Because it always keeps the higher rank, any order of any
 * set of reports ends in the same state, and a repeated report changes nothing.
 */
export function decideAttemptStatus(current: AttemptStatus, requested: AttemptStatus): AttemptDecision {
  const from = rankOf(current);
  const to = rankOf(requested);
  if (to > from) return { apply: true, to: requested };
  if (to === from) return { apply: false, reason: "same" };
  return { apply: false, reason: current === "refunded" || current === "failed" ? "terminal" : "backwards" };
}

/** Why a report of money does not move its attempt (docs/order-status.md, "Payments under review"). */
export const PAYMENT_REVIEW_REASONS = ["amount_below", "currency_differs"] as const;
export type PaymentReview = (typeof PAYMENT_REVIEW_REASONS)[number];

/** What a trigger says the gateway holds: the payment's amount (minor units) and, when it says, its currency. */
export interface ReportedMoney {
  amount: number;
  currency?: string | undefined;
}

/**
 * Whether a report of money held or taken (`authorized`, `captured`) adds up to what its attempt asked:
 * null when it does (more than asked is money in: it counts, and the surplus can be refunded), else why
 * not. A report in another currency, or for less than the attempt's amount, moves nothing: a shopper who
 * paid ₹1 of ₹4,999 (a partial payment, a tampered or misrouted event) must not see the order paid.
 * Reports of no money (pending, failed) and refunds are not checked: they never make an order paid.
 */
export function reviewOf(requested: AttemptStatus, expected: { amount: number; currency: string }, reported: ReportedMoney | undefined): PaymentReview | null {
  if (!reported || (requested !== "authorized" && requested !== "captured")) return null;
  if (reported.currency !== undefined && reported.currency !== expected.currency) return "currency_differs";
  if (!Number.isSafeInteger(reported.amount) || reported.amount < expected.amount) return "amount_below";
  return null;
}

// ---- Orders -----------------------------------------------------------------------------------------

export const ORDER_STATUSES = ["open", "completed", "cancelled", "expired"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const PAYMENT_STATUSES = [
  "unpaid",
  "pending",
  "authorized",
  "partially_paid",
  "paid",
  "partially_refunded",
  "refunded",
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const FULFILLMENT_STATUSES = [
  "unfulfilled",
  "partially_fulfilled",
  "fulfilled",
  "rto_initiated",
  "delivered",
  "rto_delivered",
] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

/** The payment and delivery statuses in the shopper's words (their order page and their emails). */
export const PAYMENT_WORDS = {
  unpaid: "not paid",
  pending: "waiting for payment",
  authorized: "authorised",
  partially_paid: "partly paid",
  paid: "paid",
  partially_refunded: "partly refunded",
  refunded: "refunded",
} satisfies Record<PaymentStatus, string>;

export const FULFILLMENT_WORDS = {
  unfulfilled: "not shipped yet",
  partially_fulfilled: "partly shipped",
  fulfilled: "shipped",
  rto_initiated: "coming back to us (not delivered)",
  delivered: "delivered",
  rto_delivered: "back with us (not delivered)",
} satisfies Record<FulfillmentStatus, string>;

export const SHIPMENT_STATUSES = [
  "pending",
  "in_transit",
  "delivered",
  "rto_initiated",
  "rto_delivered",
  "cancelled",
] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/**
 * Which reports may move a shipment (docs/order-status.md, "Shipments"). Couriers report out of order and
 * more than once, so a report only moves a shipment forward along its road: pending → in_transit →
 * delivered, or off it to rto_initiated → rto_delivered. `delivered`, `rto_delivered` and `cancelled` are
 * final: the first final report wins. A courier that turns a returning parcel round and delivers it after
 * all (rto_initiated → delivered) is believed: a delivery is the strongest fact there is. Only a parcel
 * not yet picked up (pending) can be cancelled.
 */
const SHIPMENT_NEXT: Readonly<Record<ShipmentStatus, readonly ShipmentStatus[]>> = {
  pending: ["in_transit", "delivered", "rto_initiated", "rto_delivered", "cancelled"],
  in_transit: ["delivered", "rto_initiated", "rto_delivered"],
  rto_initiated: ["rto_delivered", "delivered"],
  delivered: [],
  rto_delivered: [],
  cancelled: [],
};

export type ShipmentDecision = { apply: true; to: ShipmentStatus } | { apply: false; reason: "same" | "backwards" | "terminal" };

export function decideShipmentStatus(current: ShipmentStatus, requested: ShipmentStatus): ShipmentDecision {
  for (const status of [current, requested]) if (!SHIPMENT_STATUSES.includes(status)) throw unknownStatus("shipment", status);
  if (current === requested) return { apply: false, reason: "same" };
  if (SHIPMENT_NEXT[current].includes(requested)) return { apply: true, to: requested };
  return { apply: false, reason: SHIPMENT_NEXT[current].length === 0 ? "terminal" : "backwards" };
}

/** Where one parcel is, from all of its shipments. */
export type ParcelState = "unshipped" | "shipped" | "rto_initiated" | "delivered" | "rto_delivered";

/** The rows recompute reads. Money in minor units; refunds are completed refunds only. */
export interface OrderFacts {
  status: OrderStatus;
  total: number;
  attempts: readonly { status: AttemptStatus; amount: number }[];
  refunds: readonly { amount: number }[];
  parcels: readonly { id: string }[];
  shipments: readonly { parcelId: string; status: ShipmentStatus }[];
  /**
   * The fact that closes the order, written by its own action: cancel (`cancelled_at`) or the expiry of an
   * unpaid order (`expired_at`). Absent or null: the order was never closed.
   */
  closed?: ClosedBy | null | undefined;
}

/** The statuses an order enters only through its fact (cancel, expiry), and never leaves. */
export const CLOSED_STATUSES = ["cancelled", "expired"] as const;
export type ClosedBy = (typeof CLOSED_STATUSES)[number];

export interface OrderStatuses {
  paymentStatus: PaymentStatus;
  fulfillmentStatus: FulfillmentStatus;
  status: OrderStatus;
}

export type OrderStatusProblem =
  | "unknown_status"
  | "bad_amount"
  | "refunds_exceed_captures"
  | "no_parcels"
  | "duplicate_parcel"
  | "unknown_parcel";

/**
 * Rows that no valid sequence of writes produces. Thrown, never clamped: recompute runs in the writer's
 * transaction, so the write that broke the invariant (say, a refund past what was captured) rolls back.
 */
export class OrderStatusError extends Error {
  readonly problem: OrderStatusProblem;

  constructor(problem: OrderStatusProblem, message: string) {
    super(message);
    this.name = "OrderStatusError";
    this.problem = problem;
  }
}

/** Payment statuses that let an order complete: paid in full (maybe partly refunded since), or all given back. */
export const SETTLED_PAYMENT: readonly PaymentStatus[] = ["paid", "partially_refunded", "refunded"];
/** Fulfillment statuses under which every parcel has reached its end. */
export const ARRIVED_FULFILLMENT: readonly FulfillmentStatus[] = ["delivered", "rto_delivered"];

/** The only source of payment_status, fulfillment_status and status: open/completed from the rows, cancelled/expired from the closing fact. */
export function recomputeOrder(facts: OrderFacts): OrderStatuses {
  if (!ORDER_STATUSES.includes(facts.status)) throw unknownStatus("order", facts.status);
  if (facts.closed != null && !CLOSED_STATUSES.includes(facts.closed)) throw unknownStatus("order", facts.closed);
  const paymentStatus = paymentStatusOf(facts);
  const fulfillmentStatus = fulfillmentStatusOf(facts);
  // The closing fact makes the order cancelled or expired; a closed order stays closed whatever comes later
  // (a late payment is the late-payment handler's, not the recompute's).
  const closed = facts.closed ?? (facts.status === "cancelled" || facts.status === "expired" ? facts.status : null);
  if (closed) return { paymentStatus, fulfillmentStatus, status: closed };
  const done = SETTLED_PAYMENT.includes(paymentStatus) && ARRIVED_FULFILLMENT.includes(fulfillmentStatus);
  return { paymentStatus, fulfillmentStatus, status: done ? "completed" : "open" };
}

/** First match wins. Captured money is the attempts at `captured` or `refunded`; refunds are the refund rows. */
export function paymentStatusOf(facts: Pick<OrderFacts, "total" | "attempts" | "refunds">): PaymentStatus {
  const total = money(facts.total, "total");
  let captured = 0n;
  let authorized = false;
  let pending = false;
  for (const attempt of facts.attempts) {
    const amount = money(attempt.amount, "attempt amount");
    if (rankOf(attempt.status) >= ATTEMPT_RANK.captured) captured += amount;
    authorized ||= attempt.status === "authorized";
    pending ||= attempt.status === "pending";
  }
  const refunded = facts.refunds.reduce((sum, refund) => sum + money(refund.amount, "refund amount"), 0n);
  if (refunded > captured) {
    throw new OrderStatusError("refunds_exceed_captures", `Refunds (${refunded}) exceed captures (${captured})`);
  }
  if (captured > 0n && refunded === captured) return "refunded";
  if (captured >= total) return captured - refunded >= total ? "paid" : "partially_refunded";
  if (captured > 0n) return "partially_paid";
  if (authorized) return "authorized";
  return pending ? "pending" : "unpaid";
}

/** One parcel's state from its shipments, whatever their order: first match wins, cancelled ones ignored. */
export function parcelStateOf(statuses: readonly ShipmentStatus[]): ParcelState {
  for (const status of statuses) if (!SHIPMENT_STATUSES.includes(status)) throw unknownStatus("shipment", status);
  if (statuses.includes("delivered")) return "delivered";
  if (statuses.includes("pending") || statuses.includes("in_transit")) return "shipped";
  if (statuses.includes("rto_initiated")) return "rto_initiated";
  if (statuses.includes("rto_delivered")) return "rto_delivered";
  return "unshipped";
}

export function fulfillmentStatusOf(facts: Pick<OrderFacts, "parcels" | "shipments">): FulfillmentStatus {
  if (facts.parcels.length === 0) throw new OrderStatusError("no_parcels", "An order has at least one parcel");
  const byParcel = new Map<string, ShipmentStatus[]>();
  for (const parcel of facts.parcels) {
    if (byParcel.has(parcel.id)) throw new OrderStatusError("duplicate_parcel", `Parcel ${parcel.id} is listed twice`);
    byParcel.set(parcel.id, []);
  }
  for (const shipment of facts.shipments) {
    const list = byParcel.get(shipment.parcelId);
    if (!list) throw new OrderStatusError("unknown_parcel", `Shipment of parcel ${shipment.parcelId}, not this order's`);
    list.push(shipment.status);
  }
  const states = new Set([...byParcel.values()].map(parcelStateOf));
  if (states.has("unshipped")) return states.size === 1 ? "unfulfilled" : "partially_fulfilled";
  if (states.has("rto_initiated")) return "rto_initiated";
  if (states.has("shipped")) return "fulfilled";
  return states.has("rto_delivered") ? "rto_delivered" : "delivered";
}

// The types already say so; rows and reports read from outside are checked here once more.
function rankOf(status: AttemptStatus): number {
  if (!ATTEMPT_STATUSES.includes(status)) throw unknownStatus("attempt", status);
  return ATTEMPT_RANK[status];
}

function money(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new OrderStatusError("bad_amount", `The ${what} must be whole minor units, 0 or more; got ${value}`);
  }
  return BigInt(value);
}

function unknownStatus(kind: string, value: unknown): OrderStatusError {
  return new OrderStatusError("unknown_status", `Unknown ${kind} status: ${String(value)}`);
}
