import { approveInUnits } from "../assistant/approval-units";
import { approvalProcedures, approveApproval } from "../assistant/approvals";
import { conversationProcedures } from "../assistant/conversations";
import { assistantUsageToday } from "../assistant/usage";
import { sendsOwnUnits } from "../pipeline/run";
import { procedureKey, type Procedure } from "../procedures/define";
import { BASE_PROCEDURES } from "../procedures/registry";

/**
 * The one procedure registry the doors serve (ARCHITECTURE §5): the store's procedures and the
 * assistant's. /api/rpc, /api/v1 and the MCP tools look procedures up here; the permission-matrix and
 * cross-store suites walk this list, so a procedure added here is covered without further work.
 * Dependencies point one way: the assistant builds on the procedures, this module joins them.
 */
export const PROCEDURES: readonly Procedure[] = [...BASE_PROCEDURES, ...(approvalProcedures as readonly Procedure[]), assistantUsageToday as Procedure, ...(conversationProcedures as readonly Procedure[])];

// An approval runs the proposed change: it sends its own units (the doors reach it through runProcedure).
sendsOwnUnits(approveApproval, approveInUnits);

const BY_KEY = new Map<string, Procedure>();
for (const p of PROCEDURES) {
  const key = procedureKey(p);
  if (BY_KEY.has(key)) throw new Error(`Procedure ${key} is declared twice`);
  BY_KEY.set(key, p);
}

/** The procedure at `<router>/<name>`, or undefined. */
export function findProcedure(router: string, name: string): Procedure | undefined {
  return BY_KEY.get(`${router}.${name}`);
}
