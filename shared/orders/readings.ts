import type { Plan } from "../db/plan";
import { pgErrorOf } from "../db/pg-errors";
import { AppError } from "../core/errors";
import type { OrderReading } from "./routines";
import type { AttemptStatus, OrderStatuses, ShipmentStatus } from "../rules/status";

/**
 * Helpers for units that read with ./routines.ts's readings and change with its changes, with no caller
 * (webhooks, jobs): their first trip reads, TypeScript decides, their second trip changes under guards.
 */

type Facts = OrderReading["facts"];

/**
 * The order as a change of the same unit leaves it: its facts adjusted and its statuses as the change
 * decided them, so a later change of that unit guards against (and decides from) the order as it then is.
 */
export function readingAfter(reading: OrderReading, next: OrderStatuses, adjust: (facts: Facts) => Facts = (f) => f): OrderReading {
  const facts = adjust(reading.facts);
  return { orderId: reading.orderId, facts: { ...facts, paymentStatus: next.paymentStatus, fulfillmentStatus: next.fulfillmentStatus, status: next.status } };
}

/** The order's facts with one attempt (by its number) at a new status. */
export const withAttemptStatus = (attempt: number, status: AttemptStatus) => (facts: Facts): Facts => ({
  ...facts,
  attempts: facts.attempts.map((a) => (a.attempt === attempt ? { ...a, status } : a)),
});

/** The order's facts with one shipment (by its place among them) at a new status. */
export const withShipmentStatus = (index: number, status: ShipmentStatus) => (facts: Facts): Facts => ({
  ...facts,
  shipments: facts.shipments.map((s, i) => (i === index ? { ...s, status } : s)),
});

/** Several plans of one kind as one: their statements side by side in one unit, their answers in order. */
export function all<T>(plans: readonly Plan<T>[]): Plan<T[]> {
  return {
    steps: plans.flatMap((p) => p.steps),
    finish(results) {
      let at = 0;
      return plans.map((p) => p.finish(results.slice(at, (at += p.steps.length))));
    },
  };
}

/** How many times a unit that lost a race (CR409) is read, decided and sent again. */
export const UNIT_RETRIES = 3;

/**
 * Runs `attempt` (a reading, a decision, a guarded change) again while its change loses a race to a
 * concurrent writer, up to UNIT_RETRIES times; then answers `gaveUp`.
 */
export async function retryLostRaces<T>(attempt: () => Promise<T>, gaveUp: () => AppError = concurrentChange): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (pgErrorOf(e)?.code !== "CR409") throw e;
      if (n >= UNIT_RETRIES) throw gaveUp();
    }
  }
}

/**
 * Sends the change decided from `reading`; when it loses a race, reads again (`reread`) and decides and
 * sends again, up to UNIT_RETRIES times in all.
 */
export async function changeFrom<R, T>(reading: R, reread: () => Promise<R>, change: (reading: R) => Promise<T>, gaveUp: () => AppError = concurrentChange): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await change(reading);
    } catch (e) {
      if (pgErrorOf(e)?.code !== "CR409") throw e;
      if (n >= UNIT_RETRIES) throw gaveUp();
      reading = await reread();
    }
  }
}

const concurrentChange = () => new AppError("CONFLICT", "This changed while it was being saved; try again.", { reason: "concurrent_change" });
