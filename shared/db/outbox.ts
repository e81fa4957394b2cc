import { outboxEvent } from "./schema";
import { wroteOutbox, type StoreTx } from "./with-store";

export type OutboxPayload = Record<string, unknown>;

/**
 * Writes an outbox event in the caller's transaction (SPEC rule 5): it commits or rolls back with the
 * state change it describes. Side effects are driven from these rows by the relay, never enqueued
 * after commit.
 */
export async function emit(
  tx: StoreTx,
  kind: string,
  payload: OutboxPayload = {},
  options: { availableAt?: Date } = {},
): Promise<string> {
  const [row] = await tx
    .insert(outboxEvent)
    .values({ storeId: tx.storeId, kind, payload, availableAt: options.availableAt ?? new Date() })
    .returning({ id: outboxEvent.id });
  if (!row) throw new Error("emit: insert returned no row");
  wroteOutbox.add(tx);
  return row.id;
}
