/**
 * The {apps}-events consumer: one RoutedEvent (shared/events/routes.ts) becomes one delivery row per active
 * app of the store subscribed to its kind (unique per app and event, so a duplicate message adds none),
 * and each new delivery's first try goes to the {apps}-jobs queue: one message per app, so a slow app
 * never holds the others. A redelivery request (apps.redeliver) queues that delivery's new round.
 */
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { appDelivery, storeApp } from "../db/schema";
import { withStore } from "../db/with-store";
import { APP_REDELIVERY_KIND, appSubscribes, EVENT_KIND, isAppEventKind } from "./events";
import { queueFirstTries, type AppConsumerDeps } from "./jobs";

const routedEventSchema = z.object({
  eventId: z.uuid(),
  storeId: z.uuid(),
  kind: z.string().regex(EVENT_KIND),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime({ offset: true }),
  route: z.string(),
});

const redeliverySchema = z.object({ deliveryId: z.uuid(), round: z.number().int().min(1) });

/** Deliveries not tried yet in their round: what a (repeated) message may queue. */
const untried = (storeId: string) =>
  and(eq(appDelivery.storeId, storeId), eq(appDelivery.status, "pending"), eq(appDelivery.attempts, 0), isNull(appDelivery.claimedAt));

/** Handles one message; throws (so the queue retries it, then dead-letters it) when it cannot. */
export async function consumeAppEvent(body: unknown, deps: AppConsumerDeps): Promise<{ queued: number }> {
  const event = routedEventSchema.parse(body);
  const log = deps.log.child({ storeId: event.storeId, eventId: event.eventId, kind: event.kind });
  if (event.kind === APP_REDELIVERY_KIND) {
    const { deliveryId, round } = redeliverySchema.parse(event.payload);
    const due = await withStore(deps.db, event.storeId, (tx) =>
      tx
        .select({ id: appDelivery.id, round: appDelivery.round })
        .from(appDelivery)
        .where(and(untried(tx.storeId), eq(appDelivery.id, deliveryId), eq(appDelivery.round, round))),
    );
    await queueFirstTries(deps.jobs, event.storeId, due);
    log.info("apps.redelivery_queued", { deliveryId, round, queued: due.length });
    return { queued: due.length };
  }
  if (!isAppEventKind(event.kind)) {
    // Not public: never for apps, whatever routed it here. Acknowledged so it is not retried.
    log.warn("apps.event_not_public");
    return { queued: 0 };
  }
  const { due, subscribed } = await withStore(deps.db, event.storeId, async (tx) => {
    const apps = await tx
      .select({ id: storeApp.id, events: storeApp.events })
      .from(storeApp)
      .where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.active, true)));
    const wanting = apps.filter((a) => appSubscribes(a.events, event.kind));
    if (wanting.length > 0) {
      await tx
        .insert(appDelivery)
        .values(
          wanting.map((a) => ({
            storeId: tx.storeId,
            appId: a.id,
            eventId: event.eventId,
            eventKind: event.kind,
            eventCreatedAt: new Date(event.createdAt),
            payload: event.payload,
          })),
        )
        .onConflictDoNothing({ target: [appDelivery.appId, appDelivery.eventId] });
    }
    // Also the deliveries of an earlier copy of this message that died before queueing them.
    const rows = await tx
      .select({ id: appDelivery.id, round: appDelivery.round })
      .from(appDelivery)
      .where(and(untried(tx.storeId), eq(appDelivery.eventId, event.eventId)));
    return { due: rows, subscribed: wanting.length };
  });
  await queueFirstTries(deps.jobs, event.storeId, due);
  log.info("apps.event_fanned_out", { subscribed, queued: due.length });
  return { queued: due.length };
}
