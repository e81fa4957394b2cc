/**
 * Which outbox events a merchant's apps may receive (issue 12; docs/apps.md), and the relay's rule for the
 * {apps}-events queue. Only the store's commerce events are public: staff, settings, domains, tokens and
 * the apps' own changes never leave the platform.
 */
import { z } from "zod";

/** The public event kinds: exact kinds, or groups written `<prefix>.*` (any kind that starts `<prefix>.`). */
export const APP_EVENT_KINDS = [
  "order.*",
  "payment.failed",
  "shipment.*",
  "return.*",
  "refund.*",
  "product.*",
  "inventory.*",
  "customer.*",
] as const;

/** Written by apps.redeliver: it asks the {apps}-events consumer to send one delivery again. Never public. */
export const APP_REDELIVERY_KIND = "app.redelivery_requested";

/** The route of every event the relay sends to the {apps}-events queue (RoutedEvent.route). */
export const APP_ROUTE = "app";

/** An outbox kind as migration 0001 allows it: `area.name`, lower case. */
export const EVENT_KIND = /^[a-z][a-z_]*(\.[a-z][a-z_]*)+$/;

function matches(pattern: string, kind: string): boolean {
  if (pattern === "*") return true;
  return pattern.endsWith(".*") ? kind.startsWith(pattern.slice(0, -1)) : pattern === kind;
}

/** True when apps may receive this kind. */
export function isAppEventKind(kind: string): boolean {
  return EVENT_KIND.test(kind) && APP_EVENT_KINDS.some((p) => matches(p, kind));
}

/**
 * The relay's rule (the contract with shared/events/routes.ts): an outbox event whose kind passes goes to
 * WORK_QUEUES.appEvents once, as a RoutedEvent with route APP_ROUTE.
 */
export function goesToAppsQueue(kind: string): boolean {
  return kind === APP_REDELIVERY_KIND || isAppEventKind(kind);
}

/** True when an app subscribed to `events` wants this kind. */
export function appSubscribes(events: readonly string[], kind: string): boolean {
  return isAppEventKind(kind) && events.some((e) => matches(e, kind));
}

/** One entry of an app's events: `*`, a public group (`order.*`) or a public kind (`order.paid`). */
export const appEventSchema = z
  .string()
  .trim()
  .refine((e) => e === "*" || (APP_EVENT_KINDS as readonly string[]).includes(e) || isAppEventKind(e), {
    message: `Not an event apps can receive: use *, one of ${APP_EVENT_KINDS.join(", ")}, or a kind within them such as order.paid`,
  });

export const appEventsSchema = z
  .array(appEventSchema)
  .min(1, "Choose at least one event")
  .max(50)
  .transform((events) => [...new Set(events)]);
