import { relayOutbox, relayQueuesFrom } from "./outbox";
import type { JobContext } from "./types";

/** `{outbox}-relay`: the outbox relay (shared/jobs/outbox.ts) over the Worker's work queues. */
export async function runRelay(ctx: JobContext): Promise<Record<string, unknown>> {
  const report = await relayOutbox(ctx.db, relayQueuesFrom(ctx.env), ctx.log, ctx.now);
  return { ...report };
}
