/**
 * The Shiprocket adapter, written to Shiprocket's public API (apiv2.shiprocket.in/v1/external): a token from
 * `/auth/login`, an ad-hoc order per shipment (`/orders/create/adhoc`, our shipment id as its order_id), its
 * AWB from `/courier/assign/awb`, tracking by AWB, cancelling by AWB, and its tracking webhook. See
 * docs/shipping.md.
 */
import { INDIAN_STATE_NAMES, isIndianStateCode } from "#shared/rules/gst";
import { checkShipmentInput, CourierError, type Courier, type CreatedShipment, type CreateShipmentInput } from "./courier";
import { assignAnswer, createdOrder, orderList, trackingReportOf, verifyShiprocketWebhook, type ListedOrder } from "./shiprocket-entities";
import {
  isolateTokens,
  parseAnswer,
  refusal,
  SHIPROCKET_API,
  shiprocketRequest,
  type FetchLike,
  type ShiprocketHttpConfig,
  type ShiprocketTokens,
} from "./shiprocket-http";

export interface ShiprocketConfig {
  /** The API user's (Settings → API → Add New API User), not the panel login's. */
  email: string;
  password: string;
  baseUrl?: string;
  fetch?: FetchLike;
  /** Per request; default 10 000. */
  timeoutMs?: number;
  /** The box when the input names none; default 10 × 10 × 10 cm. */
  defaultDimensionsCm?: { length: number; breadth: number; height: number };
  /** Where a shopper follows an AWB; default https://shiprocket.co/tracking/<awb>. */
  trackingUrlBase?: string;
  /** Default: the isolate's (one login per account per isolate). */
  tokens?: ShiprocketTokens;
  now?: () => number;
}

const AWB = /^[A-Za-z0-9-]{1,64}$/;
const DEFAULT_BOX = { length: 10, breadth: 10, height: 10 };

function badRequest(field: string, message: string): CourierError {
  return new CourierError("shiprocket", "bad_request", `${field}: ${message}`, { field });
}

const rupees = (minor: number) => Math.round(minor) / 100;

/** `YYYY-MM-DD HH:mm` in India time, as order_date wants it. */
function indiaDateTime(ms: number): string {
  return new Date(ms + 330 * 60_000).toISOString().slice(0, 16).replace("T", " ");
}

/** The 10-digit Indian mobile number Shiprocket takes, from +91…, 0… or the bare number. */
function tenDigits(phone: string | undefined): string | undefined {
  const digits = phone?.replace(/\D/g, "") ?? "";
  const national = digits.length === 12 && digits.startsWith("91") ? digits.slice(2) : digits.length === 11 && digits.startsWith("0") ? digits.slice(1) : digits;
  return /^[6-9]\d{9}$/.test(national) ? national : undefined;
}

/** The ad-hoc order for one shipment: billing = shipping (the shopper's address), amounts in rupees. */
export function adhocOrder(input: CreateShipmentInput, orderDate: string, box = DEFAULT_BOX) {
  const to = input.shipTo;
  const phone = tenDigits(to.phone);
  if (!phone) throw badRequest("shipTo.phone", "Shiprocket needs the recipient's 10-digit mobile number");
  if (!to.email) throw badRequest("shipTo.email", "Shiprocket needs the recipient's email");
  if (!isIndianStateCode(to.state)) throw badRequest("shipTo.state", "must be an Indian state or union territory");
  if (input.currency !== "INR") throw badRequest("currency", "Shiprocket ships domestic orders in INR only");
  const itemsTotal = input.items.reduce((sum, i) => sum + i.unitPrice * i.quantity, 0);
  const dims = input.dimensionsCm ?? box;
  return {
    order_id: input.shipmentId,
    order_date: orderDate,
    pickup_location: input.pickup.name,
    comment: `Order ${input.orderNumber}`,
    billing_customer_name: to.name,
    billing_address: to.line1,
    ...(to.line2 ? { billing_address_2: to.line2 } : {}),
    billing_city: to.city,
    billing_pincode: Number(to.postalCode),
    billing_state: INDIAN_STATE_NAMES[to.state],
    billing_country: "India",
    billing_email: to.email,
    billing_phone: Number(phone),
    shipping_is_billing: true,
    order_items: input.items.map((item, i) => ({
      name: item.name,
      sku: item.sku || `item-${i + 1}`,
      units: item.quantity,
      selling_price: rupees(item.unitPrice),
    })),
    payment_method: input.paymentMode === "cod" ? "COD" : "Prepaid",
    total_discount: rupees(Math.max(0, itemsTotal - input.value)),
    sub_total: rupees(input.value),
    length: dims.length,
    breadth: dims.breadth,
    height: dims.height,
    weight: Math.max(input.weightGrams, 1) / 1000,
  };
}

export function shiprocketCourier(config: ShiprocketConfig): Courier {
  const http: ShiprocketHttpConfig = {
    email: config.email,
    password: config.password,
    baseUrl: config.baseUrl ?? SHIPROCKET_API,
    fetch: config.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: config.timeoutMs ?? 10_000,
    now: config.now ?? Date.now,
    tokens: config.tokens ?? isolateTokens,
  };
  const trackingUrl = (awb: string) => new URL(encodeURIComponent(awb), config.trackingUrlBase ?? "https://shiprocket.co/tracking/").toString();

  // No idempotency key at Shiprocket: our shipment id is the order's order_id, looked up before creating.
  async function orderOf(shipmentId: string): Promise<ListedOrder | undefined> {
    const body = await shiprocketRequest(http, "GET", `/v1/external/orders?${new URLSearchParams({ search: shipmentId, per_page: "10" })}`);
    return parseAnswer(orderList, body, "order list").data.find((o) => o.channel_order_id === shipmentId);
  }

  function created(awb: string, shipmentRef: number, courierName: string | null | undefined): CreatedShipment {
    return { awb, providerRef: String(shipmentRef), courierName: courierName || "Shiprocket", trackingUrl: trackingUrl(awb), status: "pending" };
  }

  async function assignAwb(shipmentRef: number): Promise<CreatedShipment> {
    const body = await shiprocketRequest(http, "POST", "/v1/external/courier/assign/awb", { shipment_id: shipmentRef });
    const answer = parseAnswer(assignAnswer, body, "AWB assignment");
    const data = answer.response?.data;
    if (answer.awb_assign_status === 1 && data?.awb_code) return created(data.awb_code, shipmentRef, data.courier_name);
    throw refusal(data?.awb_assign_error ?? answer.message ?? "no AWB was assigned");
  }

  return {
    provider: "shiprocket",

    async createShipment(input) {
      checkShipmentInput("shiprocket", input);
      const order = adhocOrder(input, indiaDateTime(http.now()), config.defaultDimensionsCm);
      const existing = await orderOf(input.shipmentId);
      if (existing) {
        // Shiprocket refuses a cancelled order's order_id for a new order.
        if (/^cancel/i.test(existing.status)) throw badRequest("shipmentId", "Shiprocket's order for this shipment was cancelled; a new shipment needs a new id");
        const shipment = existing.shipments[0];
        if (!shipment) throw new CourierError("shiprocket", "unavailable", "Shiprocket answered an order without its shipment");
        if (shipment.awb) return created(shipment.awb, shipment.id, shipment.courier);
        return assignAwb(shipment.id);
      }
      const body = await shiprocketRequest(http, "POST", "/v1/external/orders/create/adhoc", order);
      const made = createdOrder.safeParse(body);
      if (!made.success) {
        const message = (body as { message?: unknown } | undefined)?.message;
        throw typeof message === "string" ? refusal(message) : new CourierError("shiprocket", "unavailable", "Shiprocket answered an unexpected order");
      }
      // Accounts with automatic courier assignment answer the AWB at once.
      if (made.data.awb_code) return created(made.data.awb_code, made.data.shipment_id, made.data.courier_name);
      return assignAwb(made.data.shipment_id);
    },

    async track(awb) {
      if (!AWB.test(awb)) throw badRequest("awb", "is not an AWB");
      const body = await shiprocketRequest(http, "GET", `/v1/external/courier/track/awb/${awb}`);
      const report = trackingReportOf(awb, body);
      if (!report) throw new CourierError("shiprocket", "unavailable", "Shiprocket answered unexpected tracking");
      return report;
    },

    async cancel(awb) {
      if (!AWB.test(awb)) throw badRequest("awb", "is not an AWB");
      await shiprocketRequest(http, "POST", "/v1/external/orders/cancel/shipment/awbs", { awbs: [awb] });
    },

    verifyWebhook: verifyShiprocketWebhook,
  };
}
