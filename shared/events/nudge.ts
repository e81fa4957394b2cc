import { errorFields, type Logger } from "../core/log";

interface NudgeQueue {
  send(body: unknown): Promise<unknown>;
}

/**
 * After a commit that wrote outbox rows: one message on the nudge queue, which carries no work and only
 * makes the relay run now rather than at its next 5 s tick. Runtimes without the binding (tests of a
 * single Worker, tools) rely on the tick. A failed send is logged and never fails the committed change.
 */
export function nudgeRelayFrom(env: object, log: Logger): ((storeId: string) => Promise<void>) | undefined {
  const queue = (env as { OUTBOX_NUDGE?: NudgeQueue }).OUTBOX_NUDGE;
  if (!queue) return undefined;
  return async (storeId) => {
    await queue.send({ storeId }).catch((e: unknown) => log.warn("outbox.nudge_failed", { storeId, ...errorFields(e) }));
  };
}
