import type { Database } from "../db/database";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../core/log";
import { issueCreditNotes, type CreditOutcome } from "../orders/credit-notes";
import { isUuid } from "../db/ids";

/** The documents queue's route for a processed refund: its credit notes. */
export const CREDIT_NOTE_ROUTE = "credit-note";

/**
 * The documents queue's consumer (shared/events/routes.ts WORK_QUEUES.documents): `order.refunded` issues
 * the refund's credit notes (shared/orders/credit-notes.ts), dated when the refund committed. Idempotent
 * by the refund (a second delivery finds it credited); a failure throws and the queue retries it.
 */
export async function issueDocumentsFromEvent(message: RoutedEvent, deps: { db: Database; log: Logger }): Promise<CreditOutcome | "ignored"> {
  const refundId = message.payload["refundId"];
  if (message.route !== CREDIT_NOTE_ROUTE || !isUuid(refundId) || !isUuid(message.storeId)) return "ignored";
  const at = new Date(message.createdAt);
  const outcome = await issueCreditNotes(deps.db, message.storeId, refundId, Number.isNaN(at.getTime()) ? new Date() : at);
  if ("issued" in outcome && outcome.issued.length > 0) deps.log.info("documents.credit_notes", { storeId: message.storeId, refundId, numbers: outcome.issued.map((n) => n.number) });
  return outcome;
}
