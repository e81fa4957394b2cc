/**
 * The courier port (docs/shipping.md). Adapters do I/O with the courier only: no database. Every failure
 * of a call to the courier is a CourierError, never a raw error; a bad webhook signature or token is
 * `null`, never an error. The statuses are the shipment row's (shared/rules/status.ts SHIPMENT_STATUSES).
 */
import { z } from "zod";
import type { ShipmentStatus } from "../rules/status";

export type CourierProvider = "local" | "shiprocket";

export type CourierErrorKind = "unavailable" | "timeout" | "rate_limited" | "bad_request" | "auth" | "not_serviceable";

const RETRYABLE: Record<CourierErrorKind, boolean> = {
  unavailable: true,
  timeout: true,
  rate_limited: true,
  bad_request: false,
  auth: false,
  not_serviceable: false,
};

export class CourierError extends Error {
  readonly provider: CourierProvider;
  readonly kind: CourierErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    provider: CourierProvider,
    kind: CourierErrorKind,
    message: string,
    details: { status?: number; field?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "CourierError";
    this.provider = provider;
    this.kind = kind;
    this.retryable = RETRYABLE[kind];
    this.status = details.status;
    this.field = details.field;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

export function isCourierError(e: unknown): e is CourierError {
  return e instanceof CourierError;
}

export interface ShipmentAddress {
  name: string;
  line1: string;
  line2?: string;
  city: string;
  /** ISO 3166-2:IN, e.g. `IN-MH`. */
  state: string;
  postalCode: string;
  country: string;
  phone?: string;
  email?: string;
}

export interface CreateShipmentInput {
  /** Our shipment id: the idempotency key (Shiprocket's channel order id). Same id, same shipment. */
  shipmentId: string;
  orderId: string;
  /** The order's human number, e.g. "1002". */
  orderNumber: string;
  /** The pickup location: its name as registered with the courier, and its state. */
  pickup: { locationId: string; name: string; state?: string };
  shipTo: ShipmentAddress;
  items: { name: string; sku?: string; quantity: number; unitPrice: number }[];
  /** Minor units; what the parcel's goods are worth (its subtotal less discount). */
  value: number;
  currency: string;
  /** Whether the courier collects money on delivery; every order here is prepaid today. */
  paymentMode: "prepaid" | "cod";
  weightGrams: number;
  /** The box, in whole centimetres; couriers price by volume too. Absent: the adapter's default box. */
  dimensionsCm?: { length: number; breadth: number; height: number };
}

export interface CreatedShipment {
  /** The tracking number (AWB). */
  awb: string;
  /** The courier's own id for the shipment, when it has one. */
  providerRef?: string;
  courierName: string;
  trackingUrl?: string;
  status: ShipmentStatus;
}

/** What the courier says about one shipment now. */
export interface TrackingReport {
  awb: string;
  status: ShipmentStatus;
  /** The courier's own words, e.g. "OUT FOR DELIVERY". */
  providerStatus: string;
  /** ISO 8601, when the courier says it happened. */
  occurredAt?: string;
}

/** A verified shipment webhook. `eventId` is the dedupe key (derived when the courier sends none). */
export interface ShipmentUpdate extends TrackingReport {
  kind: "shipment";
  eventId: string;
}

/** A verified webhook with nothing to apply (a status we do not map, e.g. "PICKUP SCHEDULED"): 2xx, no write. */
export interface IgnoredShipmentEvent {
  kind: "ignored";
  eventId: string;
  reason: string;
}

export type ShipmentWebhookEvent = ShipmentUpdate | IgnoredShipmentEvent;

export interface Courier {
  readonly provider: CourierProvider;
  createShipment(input: CreateShipmentInput): Promise<CreatedShipment>;
  track(awb: string): Promise<TrackingReport>;
  /** Cancels a shipment that has not been picked up yet. */
  cancel(awb: string): Promise<void>;
  /** `null` when the signature or token is missing or wrong; nothing in the body is trusted before it checks. */
  verifyWebhook(rawBody: string, headers: Headers, secret: string): Promise<ShipmentWebhookEvent | null>;
}

const positiveInt = z.number().int().positive();
const money = z.number().int().min(0, "must be a non-negative integer of minor units");
const text = (max: number) => z.string().trim().min(1, "is required").max(max);

/** What every adapter checks before sending anything; the courier's own limits are checked by each adapter. */
export const createShipmentInputSchema = z.object({
  shipmentId: text(50),
  orderId: text(100),
  orderNumber: text(50),
  pickup: z.object({ locationId: text(100), name: text(100), state: z.string().optional() }),
  shipTo: z.object({
    name: text(200),
    line1: text(500),
    line2: z.string().max(500).optional(),
    city: text(100),
    state: z.string().regex(/^IN-[A-Z]{2}$/, "must be an ISO 3166-2:IN code such as IN-MH"),
    postalCode: z.string().regex(/^[1-9][0-9]{5}$/, "must be a 6-digit PIN code"),
    country: z.literal("IN", { error: "must be IN: only domestic shipments" }),
    phone: z.string().max(20).optional(),
    email: z.email().optional(),
  }),
  items: z.array(z.object({ name: text(200), sku: z.string().max(100).optional(), quantity: positiveInt, unitPrice: money })).min(1, "must hold at least one item"),
  value: money,
  currency: z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code"),
  paymentMode: z.enum(["prepaid", "cod"]),
  weightGrams: positiveInt.max(1_000_000),
  dimensionsCm: z.object({ length: positiveInt.max(1000), breadth: positiveInt.max(1000), height: positiveInt.max(1000) }).optional(),
});

/** A createShipment input's mistake as a bad_request naming the field (e.g. `shipTo.postalCode`), before anything is sent. */
export function checkShipmentInput(provider: CourierProvider, input: CreateShipmentInput): void {
  const parsed = createShipmentInputSchema.safeParse(input);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join(".");
  throw new CourierError(provider, "bad_request", `${field}: ${issue.message}`, { field });
}
