/**
 * The {apps}-events consumer: one RoutedEvent (shared/events/routes.ts) becomes one delivery row per active
 * app of the store subscribed to its kind (unique per app and event, so a duplicate message adds none),
 * and each new delivery's first try goes to the {apps}-jobs queue: one message per app, so a slow app
 * never holds the others. A redelivery request (apps.redeliver) queues that delivery's new round.
 */
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { CURRENT_STORE } from "../db/openings";
import { plan } from "../db/plan";
import { appDelivery } from "../db/schema";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { APP_REDELIVERY_KIND, appSubscribes, EVENT_KIND, isAppEventKind } from "./events";
import { queueFirstTries, type AppConsumerDeps } from "./jobs";
import { addDeliveries, countSubscribedApps } from "./statements";

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
const untried = and(eq(appDelivery.storeId, CURRENT_STORE), eq(appDelivery.status, "pending"), eq(appDelivery.attempts, 0), isNull(appDelivery.claimedAt));

/**
 * The entries of an app's events that take this kind: `*`, the kind itself and each group it falls in
 * (`order.*` for `order.paid`), each checked by the one rule apps are matched by.
 */
function entriesFor(kind: string): string[] {
  const groups = kind.split(".").slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join(".")}.*`);
  return ["*", kind, ...groups].filter((entry) => appSubscribes([entry], kind));
}

/**
 * One round trip: a delivery per active app subscribed to the kind (none twice), then the event's
 * deliveries not tried yet (also those of an earlier copy of this message that died before queueing them).
 */
function fanOutPlan(q: Q, event: z.infer<typeof routedEventSchema>) {
  const entries = entriesFor(event.kind);
  return plan(
    [
      countSubscribedApps(q, entries),
      addDeliveries(q, entries, { eventId: event.eventId, kind: event.kind, createdAt: new Date(event.createdAt), payload: JSON.stringify(event.payload) }),
      q
        .select({ id: appDelivery.id, round: appDelivery.round })
        .from(appDelivery)
        .where(and(untried, eq(appDelivery.eventId, event.eventId))),
    ] as const,
    ([[subscribed], , due]) => ({ subscribed: subscribed?.n ?? 0, due }),
  );
}

/** Handles one message; throws (so the queue retries it, then dead-letters it) when it cannot. */
export async function consumeAppEvent(body: unknown, deps: AppConsumerDeps): Promise<{ queued: number }> {
  const event = routedEventSchema.parse(body);
  const log = deps.log.child({ storeId: event.storeId, eventId: event.eventId, kind: event.kind });
  if (event.kind === APP_REDELIVERY_KIND) {
    const { deliveryId, round } = redeliverySchema.parse(event.payload);
    const due = await sendStoreUnit(deps.db, event.storeId, (q) =>
      plan(
        [
          q
            .select({ id: appDelivery.id, round: appDelivery.round })
            .from(appDelivery)
            .where(and(untried, eq(appDelivery.id, deliveryId), eq(appDelivery.round, round))),
        ] as const,
        ([rows]) => rows,
      ),
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
  const { due, subscribed } = await sendStoreUnit(deps.db, event.storeId, (q) => fanOutPlan(q, event), { readOnly: false });
  await queueFirstTries(deps.jobs, event.storeId, due);
  log.info("apps.event_fanned_out", { subscribed, queued: due.length });
  return { queued: due.length };
}
