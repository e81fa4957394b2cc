import type { Database } from "../db/database";
import { storeOpeningStatement } from "../db/openings";
import { foldReadActivity } from "../db/statements";
import { rowsOn, type StoreTx } from "../db/with-store";
import { logWrite } from "./statements";

/** The door an API call came through, as the activity log records it. */
export type ApiVia = "token" | "mcp";

/** One row per successful change call, in the change's own transaction; marks the grant used. */
export async function recordWrite(tx: StoreTx, grantId: string, procedure: string, via: ApiVia): Promise<void> {
  await rowsOn(tx, (q) => logWrite(q, tx.storeId, grantId, procedure, via));
}

/**
 * Folds a successful read call into its grant's 10-minute bucket (an upsert, not a read-then-write) and
 * marks the grant used. Runs after the answer is sent: one round trip off the response path.
 */
export async function recordRead(db: Database, entry: { storeId: string; grantId: string; procedure: string; via: ApiVia; at?: Date }): Promise<void> {
  const fold = foldReadActivity({ grantId: entry.grantId, procedure: entry.procedure, via: entry.via, at: entry.at ?? new Date() });
  await db.sendHttp([storeOpeningStatement(entry.storeId), { sql: fold.text, params: [...fold.params], method: "execute" }], { readOnly: false });
}
