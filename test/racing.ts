import type { Database } from "#shared/db/database";
import { testDb } from "./harness";

/**
 * A database whose first writing unit waits until `meanwhile` has committed: another member's change that
 * lands between a change's two trips. `units` counts what was sent (a lost race reads again: four).
 */
export function racing(meanwhile: () => Promise<unknown>): { raced: Database; units: () => number } {
  const raced = testDb();
  const send = raced.sendHttp.bind(raced);
  let sent = 0;
  let pending = true;
  raced.sendHttp = async (statements, options) => {
    sent++;
    if (pending && !options.readOnly) {
      pending = false;
      await meanwhile();
    }
    return send(statements, options);
  };
  return { raced, units: () => sent };
}
