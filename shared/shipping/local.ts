/**
 * The local courier `npm run dev` and the tests use: it behaves like a real one (AWBs, a tracking page,
 * signed webhooks, failures, delays and duplicate deliveries on demand) and keeps no state: the AWB is
 * derived from the shipment id and the tracking page's ref carries the rest (local-protocol.ts). See
 * docs/shipping.md.
 */
import { z } from "zod";
import { parseJsonVariable } from "#shared/core/env";
import { SHIPMENT_STATUSES } from "#shared/rules/status";
import { checkShipmentInput, CourierError, type Courier, type CourierErrorKind, type TrackingReport } from "./courier";
import { LOCAL_TRACKING_PATH, localAwb, signLocalShipmentRef, verifyLocalCourierWebhook } from "./local-protocol";

export const LOCAL_COURIER_NAME = "Local Courier";

const errorKind = z.enum(["unavailable", "timeout", "rate_limited", "bad_request", "auth", "not_serviceable"]);

/** Failures and delays on demand (the LOCAL_COURIER_BEHAVIOUR variable, as JSON). */
export const localCourierBehaviour = z.strictObject({
  /** createShipment fails with this kind… */
  failCreate: errorKind.optional(),
  /** …for the first this-many calls for one shipment id (counted in this isolate), so that a retry works. */
  failCreateUpTo: z.number().int().positive().optional(),
  /** createShipment answers this late; at or past timeoutMs it fails with `timeout`. */
  createDelayMs: z.number().int().min(0).max(60_000).optional(),
  /** What track reports (the courier's own record): default `pending`, nothing scanned yet. */
  reportStatus: z.enum(SHIPMENT_STATUSES).optional(),
  /** track fails with this kind. */
  failTrack: errorKind.optional(),
  /** cancel fails with this kind. */
  failCancel: errorKind.optional(),
  /** How many times the tracking page delivers each webhook (2: a duplicate delivery); default 1. */
  webhookDeliveries: z.number().int().min(1).max(5).optional(),
  /** How long the tracking page waits before each delivery; default 0. */
  webhookDelayMs: z.number().int().min(0).max(60_000).optional(),
});
export type LocalCourierBehaviour = z.infer<typeof localCourierBehaviour>;

/** LOCAL_COURIER_BEHAVIOUR's JSON, checked; an empty or absent value is no behaviour. */
export function parseLocalCourierBehaviour(json: string | undefined): LocalCourierBehaviour {
  return parseJsonVariable("LOCAL_COURIER_BEHAVIOUR", json, localCourierBehaviour);
}

export interface LocalCourierConfig {
  storeId: string;
  /** The store's secret (deriveLocalCourierSecret of the root secret): derives AWBs, signs refs and webhooks. */
  secret: string;
  /** The worker's origin, where the tracking page is (e.g. http://localhost:8789). */
  pageOrigin: string;
  behaviour?: LocalCourierBehaviour;
  /** Default 10 000, as for Shiprocket. */
  timeoutMs?: number;
}

const LOCAL_AWB = /^LC[0-9A-F]{12}$/;

// failCreateUpTo's count of calls per shipment; bounded, since it is only a convenience of development.
const createCalls = new Map<string, number>();

function fail(kind: CourierErrorKind, message: string, field?: string): CourierError {
  return new CourierError("local", kind, message, field ? { field } : {});
}

function checkAwb(awb: string): void {
  if (!LOCAL_AWB.test(awb)) throw fail("bad_request", "awb: not an AWB of the local courier", "awb");
}

export function localCourier(config: LocalCourierConfig): Courier {
  const behaviour = config.behaviour ?? {};
  const timeoutMs = config.timeoutMs ?? 10_000;

  function failsThisCall(shipmentId: string): boolean {
    if (!behaviour.failCreate) return false;
    if (behaviour.failCreateUpTo === undefined) return true;
    const key = `${config.storeId}|${shipmentId}`;
    const calls = (createCalls.get(key) ?? 0) + 1;
    if (createCalls.size > 1_000) createCalls.clear();
    createCalls.set(key, calls);
    return calls <= behaviour.failCreateUpTo;
  }

  return {
    provider: "local",

    async createShipment(input) {
      checkShipmentInput("local", input);
      if (behaviour.createDelayMs) {
        await new Promise((r) => setTimeout(r, Math.min(behaviour.createDelayMs ?? 0, timeoutMs)));
        if (behaviour.createDelayMs >= timeoutMs) throw fail("timeout", `the local courier did not answer within ${timeoutMs} ms`);
      }
      if (behaviour.failCreate && failsThisCall(input.shipmentId)) {
        throw fail(behaviour.failCreate, `the local courier was told to fail (${behaviour.failCreate})`);
      }
      const awb = await localAwb(input.shipmentId, config.secret);
      const ref = await signLocalShipmentRef(
        { storeId: config.storeId, shipmentId: input.shipmentId, orderNumber: input.orderNumber, awb, destination: `${input.shipTo.city} ${input.shipTo.postalCode}` },
        config.secret,
      );
      const trackingUrl = new URL(`${LOCAL_TRACKING_PATH}${ref}`, config.pageOrigin).toString();
      return { awb, courierName: LOCAL_COURIER_NAME, trackingUrl, status: "pending" };
    },

    async track(awb): Promise<TrackingReport> {
      checkAwb(awb);
      if (behaviour.failTrack) throw fail(behaviour.failTrack, `the local courier was told to fail tracking (${behaviour.failTrack})`);
      const status = behaviour.reportStatus ?? "pending";
      return { awb, status, providerStatus: status.toUpperCase() };
    },

    async cancel(awb) {
      checkAwb(awb);
      if (behaviour.failCancel) throw fail(behaviour.failCancel, `the local courier was told to fail cancels (${behaviour.failCancel})`);
    },

    verifyWebhook: verifyLocalCourierWebhook,
  };
}
