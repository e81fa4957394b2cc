/**
 * Shiprocket's answers as its API documents them (only the fields we read are required; others pass
 * unread), its tracking webhook, and how they map onto the port.
 */
import { z } from "zod";
import { constantTimeEqual } from "#shared/core/crypto";
import { digestId } from "#shared/core/crypto";
import type { ShipmentWebhookEvent, TrackingReport } from "./courier";
import { istToIso, providerStatusOf, shipmentStatusOf } from "./shiprocket-status";

// Shiprocket sends some ids and codes as numbers in one answer and as strings in another.
const numeric = z.union([z.number(), z.string().regex(/^-?\d+$/).transform(Number)]);
const text = z.union([z.string(), z.number()]).transform(String);

export const createdOrder = z.object({
  order_id: numeric,
  shipment_id: numeric,
  status: z.string().optional(),
  status_code: numeric.optional(),
  awb_code: text.nullish(),
  courier_name: z.string().nullish(),
});

const listedShipment = z.object({ id: numeric, awb: text.nullish(), courier: z.string().nullish() });
export const listedOrder = z.object({
  id: numeric,
  channel_order_id: text,
  status: z.string(),
  shipments: z.union([z.array(listedShipment), listedShipment.transform((s) => [s])]).default([]),
});
export type ListedOrder = z.infer<typeof listedOrder>;
export const orderList = z.object({ data: z.array(listedOrder) });

export const assignAnswer = z.object({
  awb_assign_status: numeric,
  message: z.string().optional(),
  response: z
    .object({
      data: z.object({
        awb_code: text.nullish(),
        courier_name: z.string().nullish(),
        awb_assign_error: z.string().nullish(),
      }),
    })
    .optional(),
});

const activity = z.object({ date: z.string().optional(), "sr-status": text.optional(), "sr-status-label": z.string().optional() });
const trackingData = z.object({
  track_status: numeric,
  shipment_status: numeric.optional(),
  shipment_track: z.array(z.object({ current_status: z.string().nullish() })).nullish(),
  shipment_track_activities: z.array(activity).nullish(),
  error: z.string().optional(),
});
const trackingAnswer = z.object({ tracking_data: trackingData });

/**
 * `GET /courier/track/awb/<awb>` as a report. Shiprocket says `track_status: 0` until the courier's first
 * scan; that, and any status we do not act on, is `pending`: the shipment stays where it is.
 */
export function trackingReportOf(awb: string, body: unknown): TrackingReport | undefined {
  // The single-AWB answer is `{tracking_data}`; some accounts get it keyed by the AWB as the bulk call is.
  const direct = trackingAnswer.safeParse(body);
  const keyed = direct.success ? direct : trackingAnswer.safeParse(z.record(z.string(), z.unknown()).safeParse(body).data?.[awb]);
  if (!keyed.success) return undefined;
  const t = keyed.data.tracking_data;
  if (t.track_status === 0 || t.shipment_status === undefined) {
    return { awb, status: "pending", providerStatus: t.error ? "NO SCANS YET" : "AWB ASSIGNED" };
  }
  const latest = t.shipment_track_activities?.[0];
  const occurredAt = istToIso(latest?.date);
  return {
    awb,
    status: shipmentStatusOf(t.shipment_status, undefined) ?? "pending",
    providerStatus: providerStatusOf(t.shipment_status, t.shipment_track?.[0]?.current_status ?? undefined),
    ...(occurredAt ? { occurredAt } : {}),
  };
}

const webhookBody = z.object({
  awb: text.pipe(z.string().min(1).max(64)),
  current_status: z.string().optional(),
  current_status_id: numeric.optional(),
  shipment_status: z.string().optional(),
  shipment_status_id: numeric.optional(),
  current_timestamp: z.string().optional(),
  is_return: z.union([numeric, z.boolean()]).optional(),
});

const enc = new TextEncoder();

/**
 * Shiprocket signs nothing: its panel sends the token entered with the webhook URL in `x-api-key`, compared
 * here in constant time. It sends no event id either, so the dedupe key is derived from what one scan
 * always carries: the AWB, the status code and the scan's timestamp. A redelivery of that scan has the same
 * three; the next scan (even with the same status, at another hub) has another timestamp. A digest of the
 * whole body would not do: Shiprocket re-sends a status with its scan list and ETA updated.
 */
export async function verifyShiprocketWebhook(rawBody: string, headers: Headers, secret: string): Promise<ShipmentWebhookEvent | null> {
  const token = headers.get("x-api-key");
  if (!secret || !token || !constantTimeEqual(enc.encode(token), enc.encode(secret))) return null;
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    json = undefined;
  }
  const parsed = webhookBody.safeParse(json);
  if (!parsed.success) return { kind: "ignored", eventId: `body:${await digestId(rawBody, 40)}`, reason: "the body is not a Shiprocket tracking update" };
  const w = parsed.data;
  const code = w.shipment_status_id ?? w.current_status_id;
  const name = w.shipment_status ?? w.current_status;
  const eventId = `sr:${await digestId(`${w.awb}|${code ?? name ?? ""}|${w.current_timestamp ?? ""}`, 40)}`;
  if (w.is_return === 1 || w.is_return === true) return { kind: "ignored", eventId, reason: "a return shipment's update" };
  const status = w.shipment_status_id !== undefined ? shipmentStatusOf(w.shipment_status_id, undefined) : shipmentStatusOf(undefined, name);
  const providerStatus = providerStatusOf(w.shipment_status_id, name);
  if (!status) return { kind: "ignored", eventId, reason: `Shiprocket status ${providerStatus} moves nothing` };
  const occurredAt = istToIso(w.current_timestamp);
  return { kind: "shipment", eventId, awb: w.awb, status, providerStatus, ...(occurredAt ? { occurredAt } : {}) };
}
