/** What the order and payment routines (./routines.ts) read and answer: triggers, changes, readings. */
import type { AttemptStatus, ClosedBy, OrderFacts, OrderStatuses, PaymentReview, ReportedMoney } from "../rules/status";

export type PaymentTrigger = "gateway" | "webhook" | "client_confirmation" | "mark_paid" | "expiry_reconciliation" | "refund";

export interface AttemptChange {
  providerRef?: string | undefined;
  providerPaymentId?: string | undefined;
  error?: string | undefined;
  /**
   * What the trigger says the gateway holds (a webhook's payment, the gateway's answer to the expiry job,
   * a confirmation that carries an amount): a report of money that does not add up to the attempt's
   * amount in the order's currency moves nothing and puts the attempt under review (status.ts reviewOf).
   */
  reported?: (ReportedMoney & { paymentId?: string | undefined }) | undefined;
}

export interface Applied {
  orderId: string;
  attempt: number;
  applied: boolean;
  status: AttemptStatus;
  order: OrderStatuses;
  /** Set when the report did not add up: the attempt did not move and is under review. */
  review?: PaymentReview;
}

export type Facts = Omit<OrderFacts, "attempts" | "closed"> & {
  attempts: readonly { attempt: number; status: AttemptStatus; amount: number }[];
  /** cancelled_at or expired_at, as the fact that closed the order (null: open or completed). */
  closed: ClosedBy | null;
  paymentStatus: string;
  fulfillmentStatus: string;
  /** The order's currency: what a report of money is checked against. */
  currency: string;
};

/** An order's facts as one reading saw them: what recompute decides from, and what its change checks again. */
export interface OrderReading {
  orderId: string;
  facts: Facts;
}

/** A payment attempt and its order's facts, as read. */
export interface PaymentReading {
  attempt: { id: string; orderId: string; attempt: number; status: AttemptStatus };
  order: OrderReading;
}
