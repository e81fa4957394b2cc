/**
 * The local courier's wire protocol, stateless like the local gateway's (a Worker keeps nothing between
 * requests):
 *
 * - secret: each store's, HMAC-SHA256(LOCAL_COURIER_SECRET, `local-courier|<storeId>`), derived where needed.
 * - AWB: `LC` + 12 hex digits of HMAC(store secret, `awb|<shipmentId>`): the same shipment always gets the
 *   same AWB, another store never the same one.
 * - ref (the tracking page's address): `lc1.<payload>.<sig>`, payload = base64url JSON of the store, shipment,
 *   order number, AWB and destination; sig = hex HMAC-SHA256 of `lc1.<payload>` with the store's secret.
 * - webhook: `POST /webhooks/shipments/local/<storeId>`, header `X-Local-Courier-Signature` (hex HMAC-SHA256
 *   of the raw body with the store's secret), body `{"id","event":"shipment.status","awb","status",
 *   "occurred_at"}`. The event id is a digest of AWB and status, so a second delivery or a second click
 *   on the same button carries the same id.
 */
import { z } from "zod";
import { SHIPMENT_STATUSES, type ShipmentStatus } from "#shared/rules/status";
import { decodeJson, digestId, hmacSha256Hex, openSignedWebhook, openToken, signToken } from "#shared/core/crypto";
import type { ShipmentWebhookEvent } from "./courier";

const REF_VERSION = "lc1";
export const LOCAL_SIGNATURE_HEADER = "x-local-courier-signature";
/** The worker path of the tracking page: `/-courier/track/<ref>`. */
export const LOCAL_TRACKING_PATH = "/-courier/track/";

/** The store's own secret, derived from one root secret so that none is stored anywhere. */
export function deriveLocalCourierSecret(rootSecret: string, storeId: string): Promise<string> {
  return hmacSha256Hex(rootSecret, `local-courier|${storeId}`);
}

export async function localAwb(shipmentId: string, secret: string): Promise<string> {
  return `LC${(await hmacSha256Hex(secret, `awb|${shipmentId}`)).slice(0, 12).toUpperCase()}`;
}

export interface LocalShipmentRef {
  storeId: string;
  shipmentId: string;
  orderNumber: string;
  awb: string;
  /** Where it goes, for the page: "Pune 411001". */
  destination: string;
}

const refPayload = z.object({ s: z.string().min(1), h: z.string().min(1), n: z.string(), w: z.string().min(1), d: z.string() });

export function signLocalShipmentRef(ref: LocalShipmentRef, secret: string): Promise<string> {
  return signToken(REF_VERSION, { s: ref.storeId, h: ref.shipmentId, n: ref.orderNumber, w: ref.awb, d: ref.destination }, secret);
}

/** The store a ref claims, unverified: only to know whose secret to check it with. */
export function localRefStoreId(ref: string): string | null {
  const parts = ref.split(".");
  if (parts.length !== 3 || parts[0] !== REF_VERSION) return null;
  const parsed = refPayload.safeParse(decodeJson(parts[1]!));
  return parsed.success ? parsed.data.s : null;
}

/** What a ref carries, or null when it is not one of this secret's refs (the page answers 404 then). */
export async function readLocalShipmentRef(ref: string, secret: string): Promise<LocalShipmentRef | null> {
  const parsed = refPayload.safeParse(await openToken(ref, REF_VERSION, secret));
  if (!parsed.success) return null;
  const p = parsed.data;
  return { storeId: p.s, shipmentId: p.h, orderNumber: p.n, awb: p.w, destination: p.d };
}

export interface LocalCourierWebhook {
  url: string;
  eventId: string;
  body: string;
  headers: Record<string, string>;
}

/** The signed webhook the local courier sends when a shipment moves (the tracking page's buttons, tests). */
export async function buildLocalCourierWebhook(input: {
  storeId: string;
  awb: string;
  status: ShipmentStatus;
  secret: string;
  /** The worker's origin, e.g. http://localhost:8789. */
  workerOrigin: string;
  /** ISO 8601; default now. */
  occurredAt?: string;
}): Promise<LocalCourierWebhook> {
  const eventId = `evt_${await digestId(`${input.awb}|${input.status}`)}`;
  const body = JSON.stringify({
    id: eventId,
    event: "shipment.status",
    awb: input.awb,
    status: input.status,
    occurred_at: input.occurredAt ?? new Date().toISOString(),
  });
  return {
    url: new URL(`/webhooks/shipments/local/${encodeURIComponent(input.storeId)}`, input.workerOrigin).toString(),
    eventId,
    body,
    headers: { "content-type": "application/json", [LOCAL_SIGNATURE_HEADER]: await hmacSha256Hex(input.secret, body) },
  };
}

const webhookBody = z.object({
  id: z.string().min(1).max(100),
  event: z.string(),
  awb: z.string().min(1).max(64),
  status: z.string(),
  occurred_at: z.iso.datetime({ offset: true }).optional(),
});

function isShipmentStatus(status: string): status is ShipmentStatus {
  return (SHIPMENT_STATUSES as readonly string[]).includes(status);
}

/** Checks the signature over the raw body before reading anything; the event id is the body's `id`. */
export async function verifyLocalCourierWebhook(rawBody: string, headers: Headers, secret: string): Promise<ShipmentWebhookEvent | null> {
  const opened = await openSignedWebhook(rawBody, headers.get(LOCAL_SIGNATURE_HEADER), null, secret);
  if (!opened) return null;
  const parsed = webhookBody.safeParse(opened.json);
  if (!parsed.success) return { kind: "ignored", eventId: opened.eventId, reason: "the body is not a local courier event" };
  const { id: eventId, event, awb, status, occurred_at: occurredAt } = parsed.data;
  if (event !== "shipment.status" || !isShipmentStatus(status)) return { kind: "ignored", eventId, reason: `not an event we act on (${event} ${status})` };
  return { kind: "shipment", eventId, awb, status, providerStatus: status.toUpperCase(), ...(occurredAt ? { occurredAt } : {}) };
}
