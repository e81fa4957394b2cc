import type { SQL } from "drizzle-orm";
import type { Database } from "../db/database";
import { plan, together, type Plan } from "../db/plan";
import { sql, type Q, type Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { AppError } from "../core/errors";
import type { PaymentEvent, RefundEvent, WebhookEvent } from "../payments/gateway";
import type { ShipmentUpdate, ShipmentWebhookEvent } from "../shipping/courier";
import { gatewayRefundChange, gatewayRefundFailedChange, gatewayRefundReadingPlan, type GatewayRefundReading } from "./gateway-refunds";
import { attemptIdByRef } from "./payments";
import { retryLostRaces } from "./readings";
import { gatewayRefundId } from "./refunds";
import { paymentChange, paymentReadingPlan, type PaymentReading } from "./routines";
import { shipmentChange, shipmentReadingPlan } from "./shipment-status";
import { keepReceipt, receiptSeen as receiptSeenStatement } from "./statements/reports";

/**
 * What a provider's verified report changes (workers/worker/webhooks.ts is their door): a payment's status
 * through the payment routine, a refund into the refund rows, a shipment's status through the shipment
 * routine. Each delivery is two round trips: one reads whether its event id was seen (a second delivery
 * changes nothing), the row its reference names and that row's reading; one records the event id with the
 * change decided from the reading. An unknown reference keeps nothing, so the provider's retry can still
 * apply it once the row exists. The rows are always this store's (RLS): a payment event is applied only
 * where an attempt holds its reference, whatever it says of its store.
 */

/** Whether a delivery with the provider's event id was applied already (a second one changes nothing). */
const receiptSeen = (q: Q, store: SQL, provider: string, eventId: string) =>
  plan(
    [receiptSeenStatement(q, store, provider, eventId)] as const,
    ([[row]]) => row!.seen,
  );

/**
 * The delivery recorded by its change's own unit, first: when a racing delivery recorded it first, this
 * unit lost the race (CR409), and reading again answers it as a duplicate.
 */
const receiptStep = (q: Q, store: SQL, provider: string, eventId: string): Step => keepReceipt(q, store, provider, eventId);

export type Outcome = { duplicate: true } | { duplicate: false; applied: boolean; status: string; review?: string } | { ignored: string };

/** What a delivery reads (after whether it was seen), and the change it decides from that reading (or an answer that changes nothing). */
interface Delivery<R> {
  read(q: Q, store: SQL): Plan<R>;
  decide(reading: R): Promise<((q: Q, store: SQL) => { steps: Step[]; outcome: Outcome }) | { ignored: string }>;
}

/**
 * A verified delivery in two round trips: one reads whether it was seen and what it changes, one writes
 * its receipt and the change decided from that reading (read again when a racing writer got there first).
 */
function deliver<R>(db: Database, storeId: string, provider: string, eventId: string, delivery: Delivery<R>): Promise<Outcome> {
  const store = sql`${storeId}::uuid`;
  return retryLostRaces(async () => {
    const { seen, reading } = await sendStoreUnit(db, storeId, (q) => together({ seen: receiptSeen(q, store, provider, eventId), reading: delivery.read(q, store) }));
    if (seen) return { duplicate: true };
    const change = await delivery.decide(reading);
    if (typeof change !== "function") return change;
    return sendStoreUnit(
      db,
      storeId,
      (q) => {
        const made = change(q, store);
        return plan([receiptStep(q, store, provider, eventId), ...made.steps], () => made.outcome);
      },
      { readOnly: false },
    );
  });
}

const unknownPayment = () => new AppError("NOT_FOUND", "No payment with this reference in this store.", { reason: "unknown_payment" });

/**
 * A reference no attempt of this store holds. When the provider's own record named this store (the
 * event's `storeId`), the attempt may not be recorded yet: 404, so the provider retries. When no record of
 * ours came with the event (a Razorpay payment event carries only the payment, whose notes the shopper's
 * browser sent), the attempt lookup is what decides the store: the event is another store's (one account
 * sends every event to every store's address), acknowledged with nothing kept.
 */
function notHere(event: PaymentEvent | RefundEvent): { ignored: string } {
  if (event.storeId !== null) throw unknownPayment();
  return { ignored: "no attempt of this store has this reference: the event is another store's, or none" };
}

/**
 * A payment's new status, through the payment routine, with the amount and currency the provider reported:
 * money that does not add up to the attempt moves nothing and puts the attempt under review.
 */
function paymentReport(provider: string, event: PaymentEvent): Delivery<PaymentReading | null> {
  return {
    read: (q, store) => paymentReadingPlan(q, store, attemptIdByRef(store, provider, event.providerRef)),
    async decide(reading) {
      if (!reading) return notHere(event);
      const reported = { amount: event.amount, currency: event.currency, paymentId: event.providerPaymentId };
      return (q, store) => {
        const made = paymentChange(q, store, reading, event.status, "webhook", { providerPaymentId: event.providerPaymentId, reported });
        const { applied, status, review } = made.applied;
        return { steps: made.steps, outcome: { duplicate: false, applied, status, ...(review ? { review } : {}) } };
      };
    },
  };
}

/**
 * A refund report names the refund (its amount, not the payment's): it goes to the refund rows, processed
 * or failed. The refunded payment's own amount is checked as a capture report's is.
 */
function refundReport(provider: string, event: RefundEvent): Delivery<GatewayRefundReading | null> {
  const report = { refundId: event.refundId, amount: event.amount, payment: event.payment };
  const change = event.status === "failed" ? gatewayRefundFailedChange : gatewayRefundChange;
  const status = event.status === "failed" ? "refund_failed" : "refunded";
  return {
    read: (q, store) => gatewayRefundReadingPlan(q, store, attemptIdByRef(store, provider, event.providerRef), report.refundId),
    async decide(reading) {
      if (!reading) return notHere(event);
      const newId = await gatewayRefundId(reading.payment.attempt.id, report.refundId);
      return (q, store) => {
        const made = change(q, store, reading, report, newId);
        return { steps: made.steps, outcome: { duplicate: false, applied: made.changed, status } };
      };
    },
  };
}

/** A payment provider's report: a refund goes to the refund rows, a payment's status through the payment routine. */
export function applyPaymentReport(db: Database, storeId: string, provider: string, event: PaymentEvent | RefundEvent): Promise<Outcome> {
  if (event.kind === "refund") return deliver(db, storeId, provider, event.eventId, refundReport(provider, event));
  return deliver(db, storeId, provider, event.eventId, paymentReport(provider, event));
}

/**
 * A payment webhook's verified event at one store's address (`/webhooks/payments/<provider>/<storeId>`): an
 * event we do not act on is acknowledged with its reason; one whose own record of ours names another store
 * is acknowledged and ignored with nothing read (one provider account may send every store's events to
 * every store's address: it is applied only at its own store's); otherwise it is applied here, where the
 * attempt its reference names decides when it names no store.
 */
export async function receivePaymentEvent(db: Database, storeId: string, provider: string, event: WebhookEvent): Promise<Outcome> {
  if (event.kind === "ignored") return { ignored: event.reason };
  if (event.storeId !== null && event.storeId !== storeId) return { ignored: "the event names another store: it is applied only at its own store's address" };
  return applyPaymentReport(db, storeId, provider, event);
}

/** A shipment webhook's verified event at one store's address: acknowledged with its reason when we do not act on it, else applied. */
export async function receiveShipmentEvent(db: Database, storeId: string, provider: string, event: ShipmentWebhookEvent): Promise<Outcome> {
  if (event.kind === "ignored") return { ignored: event.reason };
  return applyShipmentReport(db, storeId, provider, event);
}

/** A courier's report: the shipment its tracking number names moves through the shipment routine. */
export function applyShipmentReport(db: Database, storeId: string, provider: string, event: ShipmentUpdate): Promise<Outcome> {
  return deliver(db, storeId, `courier:${provider}`, event.eventId, {
    read: (q, store) => shipmentReadingPlan(q, store, { provider, awb: event.awb }),
    async decide(reading) {
      if (!reading) throw new AppError("NOT_FOUND", "No shipment with this tracking number in this store.", { reason: "unknown_shipment" });
      return (q, store) => {
        const made = shipmentChange(q, store, reading, event.status, "webhook", { providerStatus: event.providerStatus, occurredAt: event.occurredAt });
        return { steps: made.steps, outcome: { duplicate: false, applied: made.applied.applied, status: made.applied.status } };
      };
    },
  });
}
