import type { SQL } from "drizzle-orm";
import { raw, sql, type Q, type Step } from "../db/steps";
import type { StoreTx } from "../db/with-store";
import { formatMoney } from "../storefront/catalog";

/**
 * Merchant tasks: work a person has to do, written with the change that caused it (an RTO parcel, money
 * that arrived on a closed order, a refund the gateway refused, a payment that did not add up). One per kind and subject: writing it
 * again changes nothing, so the caller knows whether this is the first time.
 */
export type TaskKind = "rto" | "paid_late" | "refund_failed" | "balance_expired" | "payment_review";

export async function addTask(tx: StoreTx, task: { kind: TaskKind; orderId: string | null; subjectId: string; title: string }): Promise<boolean> {
  const { rowCount } = await tx.$client.query(
    `insert into merchant_task (store_id, kind, order_id, subject_id, title) values ($1, $2, $3, $4, $5)
     on conflict (store_id, kind, subject_id) do nothing`,
    [tx.storeId, task.kind, task.orderId, task.subjectId, task.title.slice(0, 300)],
  );
  return rowCount === 1;
}

/** The same, as a statement of a change's unit. */
export function addTaskStep(q: Q, store: SQL, task: { kind: TaskKind; orderId: string | null; subjectId: string; title: string }): Step {
  return raw(
    q,
    sql`insert into merchant_task (store_id, kind, order_id, subject_id, title) values (${store}, ${task.kind}, ${task.orderId}, ${task.subjectId}, ${task.title.slice(0, 300)})
        on conflict (store_id, kind, subject_id) do nothing`,
  );
}

/** An amount as a task's title says it (₹400.00); a currency no formatter knows is written as it came. */
export function moneyWords(minor: number, currency: string): string {
  try {
    return formatMoney(minor, currency);
  } catch {
    return `${minor} (minor units of ${currency.slice(0, 10)})`;
  }
}
