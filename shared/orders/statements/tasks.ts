import type { SQL } from "drizzle-orm";
import { EXAMPLE, statement } from "../../db/statement";
import { sql } from "../../db/steps";

const { id: ID, store: STORE } = EXAMPLE;

/** A merchant task (../tasks.ts); writing one of a kind and subject again changes nothing. */
export const addMerchantTask = statement("orders.addMerchantTask", {
  row: {},
  examples: [[STORE, { kind: "rto", orderId: ID, subjectId: ID, title: "Check it in" }]],
  sql: (store: SQL, task: { kind: string; orderId: string | null; subjectId: string; title: string }) =>
    sql`insert into merchant_task (store_id, kind, order_id, subject_id, title) values (${store}, ${task.kind}, ${task.orderId}, ${task.subjectId}, ${task.title})
        on conflict (store_id, kind, subject_id) do nothing`,
});
