import type { SQL } from "drizzle-orm";
import type { Q, Step } from "../db/steps";
import { addMerchantTask } from "./statements/tasks";
import { formatMoney } from "../storefront/catalog";

/**
 * Merchant tasks: work a person has to do, written with the change that caused it (an RTO parcel, money
 * that arrived on a closed order, a refund the gateway refused, a payment that did not add up). One per kind and subject: writing it
 * again changes nothing.
 */
export type TaskKind = "rto" | "paid_late" | "refund_failed" | "balance_expired" | "payment_review";

/** A task, as a statement of a change's unit. */
export function addTaskStep(q: Q, store: SQL, task: { kind: TaskKind; orderId: string | null; subjectId: string; title: string }): Step {
  return addMerchantTask(q, store, { ...task, title: task.title.slice(0, 300) });
}

/** An amount as a task's title says it (₹400.00); a currency no formatter knows is written as it came. */
export function moneyWords(minor: number, currency: string): string {
  try {
    return formatMoney(minor, currency);
  } catch {
    return `${minor} (minor units of ${currency.slice(0, 10)})`;
  }
}
