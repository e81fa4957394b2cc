import { pingDatabase } from "../db/ping";
import type { JobContext } from "./types";

/** {system}-heartbeat: one structured log line a minute with the time and whether Postgres answers. */
export async function heartbeat(ctx: JobContext): Promise<Record<string, unknown>> {
  const ping = await pingDatabase(ctx.db);
  const fields = {
    time: ctx.now.toISOString(),
    db: ping.up ? "up" : "down",
    dbLatencyMs: ping.latencyMs,
    ...(ping.error ? { dbError: ping.error } : {}),
  };
  if (ping.up) ctx.log.info("heartbeat", fields);
  else ctx.log.error("heartbeat", fields);
  return fields;
}
