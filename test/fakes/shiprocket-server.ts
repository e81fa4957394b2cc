/**
 * A local server that speaks the part of Shiprocket's documented API the adapter uses, for tests: login and
 * bearer tokens (expiring on demand), ad-hoc orders validated as Shiprocket validates them, AWB assignment
 * (refused for pincodes no courier serves), tracking, cancelling, Shiprocket's error bodies, failures on
 * demand (5xx, 429 with Retry-After, slowness), and the tracking webhooks its panel would send. Give the
 * adapter its `fetch`.
 */
import { Hono, type Context } from "hono";
import { faultInjection, jsonObject, type Fault as BaseFault } from "./provider";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ShiprocketState, istText, statusName, type SimOrder } from "./shiprocket-sim";

export interface ShiprocketServerOptions {
  email?: string;
  password?: string;
  webhookToken?: string;
  /** The pickup locations registered in the account (their names). */
  pickupLocations?: string[];
  /** Pincodes no courier serves: AWB assignment fails for them. */
  unserviceablePincodes?: string[];
  /** Assign the AWB in the create answer, as accounts with automatic assignment do. */
  autoAssign?: boolean;
  now?: () => number;
}

/** A failure on demand, with Shiprocket's `{message, status_code}` body. */
export interface Fault extends BaseFault {
  message?: string;
}

const TOKEN_LIFETIME_MS = 10 * 24 * 60 * 60 * 1000;
const REQUIRED = ["order_id", "order_date", "pickup_location", "billing_customer_name", "billing_address", "billing_city", "billing_pincode", "billing_state", "billing_country", "billing_email", "billing_phone", "shipping_is_billing", "order_items", "payment_method", "sub_total", "length", "breadth", "height", "weight"];
const OPTIONAL = ["comment", "reseller_name", "company_name", "billing_last_name", "billing_address_2", "billing_isd_code", "billing_alternate_phone", "shipping_customer_name", "shipping_last_name", "shipping_address", "shipping_address_2", "shipping_city", "shipping_pincode", "shipping_country", "shipping_state", "shipping_email", "shipping_phone", "shipping_charges", "giftwrap_charges", "transaction_charges", "total_discount", "ewaybill_no", "customer_gstin", "invoice_number", "order_type", "channel_id"];
const DOCUMENTED = new Set([...REQUIRED, ...OPTIONAL]);
// Statuses from which a shipment can no longer be cancelled (the courier has it).
const PICKED_UP = new Set([6, 7, 9, 10, 17, 18, 22, 38, 39, 40, 41, 42, 46, 48, 50, 51]);

const answer = (c: Context, status: ContentfulStatusCode, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  c.json({ message, ...extra, status_code: status }, status, headers);
const invalid = (c: Context, field: string, message: string) => answer(c, 422, "Oops! Invalid Data.", { errors: { [field]: [message] } });

const isNumber = (v: unknown, min: number) => typeof v === "number" && Number.isFinite(v) && v > min;

/** The first thing Shiprocket would refuse in an ad-hoc order: [field, message]. */
function orderProblem(body: Record<string, unknown>, pickupLocations: string[]): [string, string] | undefined {
  for (const field of REQUIRED) if (body[field] === undefined || body[field] === "") return [field, `The ${field.replaceAll("_", " ")} field is required.`];
  const extra = Object.keys(body).find((k) => !DOCUMENTED.has(k));
  if (extra) return [extra, `The ${extra} field is not a field of this API.`];
  if (typeof body.order_id !== "string" || body.order_id.length > 50) return ["order_id", "The order id may not be greater than 50 characters."];
  if (!/^\d{6}$/.test(String(body.billing_pincode))) return ["billing_pincode", "The billing pincode must be 6 digits."];
  if (!/^\d{10}$/.test(String(body.billing_phone))) return ["billing_phone", "The billing phone must be 10 digits."];
  if (typeof body.billing_city !== "string" || body.billing_city.length > 30) return ["billing_city", "The billing city may not be greater than 30 characters."];
  if (body.payment_method !== "Prepaid" && body.payment_method !== "COD") return ["payment_method", "The selected payment method is invalid."];
  if (!isNumber(body.sub_total, 0)) return ["sub_total", "The sub total must be greater than 0."];
  if (!isNumber(body.weight, 0)) return ["weight", "The weight must be greater than 0."];
  for (const d of ["length", "breadth", "height"]) if (!isNumber(body[d], 0.5)) return [d, `The ${d} must be greater than 0.5.`];
  const items = body.order_items;
  if (!Array.isArray(items) || items.length === 0) return ["order_items", "The order items field is required."];
  for (const [i, item] of items.entries()) {
    const it = (item ?? {}) as Record<string, unknown>;
    for (const f of ["name", "sku", "units", "selling_price"]) if (it[f] === undefined || it[f] === "") return [`order_items.${i}.${f}`, `The order_items.${i}.${f} field is required.`];
  }
  if (!pickupLocations.includes(String(body.pickup_location))) {
    return ["pickup_location", `Wrong Pickup location entered. Following pickup locations are available: ${pickupLocations.join(", ")}`];
  }
  return undefined;
}

function listed(o: SimOrder) {
  const s = o.shipment;
  return {
    id: o.id,
    channel_order_id: o.channelOrderId,
    pickup_location: o.pickupLocation,
    status: o.status,
    status_code: o.status === "CANCELED" ? 5 : 1,
    shipments: [{ id: s.id, awb: s.awb ?? "", courier: s.courier ?? "", pickup_scheduled_date: null, etd: "NA" }],
  };
}

export function shiprocketServer(options: ShiprocketServerOptions = {}) {
  const email = options.email ?? "api-user@demo.test";
  const password = options.password ?? "local-shiprocket-password";
  const webhookToken = options.webhookToken ?? "local-shiprocket-webhook-token";
  const pickupLocations = options.pickupLocations ?? ["Mumbai Warehouse"];
  const unserviceable = new Set(options.unserviceablePincodes ?? []);
  const state = new ShiprocketState(webhookToken, options.now ?? Date.now);
  const faults: Fault[] = [];
  const requests: string[] = [];
  const app = new Hono();

  app.use(faultInjection(faults, requests, (c, fault, headers) => answer(c, fault.status, fault.message ?? "Something went wrong", {}, headers)));
  app.use(async (c, next) => {
    if (c.req.method === "POST" && c.req.path === "/v1/external/auth/login") return next();
    const token = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1];
    const until = token ? state.tokens.get(token) : undefined;
    if (until === undefined || state.now() >= until) return answer(c, 401, "Unauthenticated.");
    return next();
  });

  app.post("/v1/external/auth/login", async (c) => {
    const body = await jsonObject(c);
    if (body?.email !== email || body?.password !== password) return answer(c, 400, "Invalid email and password combination");
    const token = `sim.${crypto.randomUUID()}`;
    state.tokens.set(token, state.now() + TOKEN_LIFETIME_MS);
    return c.json({ id: 1, first_name: "API", last_name: "User", email, company_id: 1, created_at: istText(state.now(), "tracking"), token });
  });

  app.post("/v1/external/orders/create/adhoc", async (c) => {
    const body = await jsonObject(c);
    if (!body) return answer(c, 400, "The request body is not valid JSON");
    const problem = orderProblem(body, pickupLocations);
    if (problem) return invalid(c, ...problem);
    const existing = state.orderByChannelId(String(body.order_id));
    // "order_id cannot be equal to an already existing id. Doing so does not change or affect the existing order."
    if (existing?.status === "CANCELED") return invalid(c, "order_id", "Order id already exists for a cancelled order.");
    const order: SimOrder = existing ?? {
      id: state.id(),
      channelOrderId: String(body.order_id),
      status: "NEW",
      pickupLocation: String(body.pickup_location),
      request: body,
      shipment: { id: 0, orderId: 0, channelOrderId: String(body.order_id), pincode: String(body.billing_pincode), awb: null, courier: null, statusId: 0, scans: [] },
    };
    if (!existing) {
      order.shipment.id = state.id();
      order.shipment.orderId = order.id;
      state.orders.set(order.id, order);
      if (options.autoAssign && !unserviceable.has(order.shipment.pincode)) state.assign(order.shipment, "Delhivery Surface");
    }
    const s = order.shipment;
    return c.json({ order_id: order.id, shipment_id: s.id, status: order.status, status_code: 1, onboarding_completed_now: 0, awb_code: s.awb, courier_company_id: s.awb ? 12 : null, courier_name: s.courier });
  });

  app.get("/v1/external/orders", (c) => {
    const search = c.req.query("search") ?? "";
    const all = [...state.orders.values()].filter((o) => !search || o.channelOrderId.includes(search) || o.shipment.awb === search).reverse();
    return c.json({ data: all.map(listed), meta: { pagination: { total: all.length, count: all.length, per_page: 15, current_page: 1, total_pages: 1, links: {} } } });
  });

  app.post("/v1/external/courier/assign/awb", async (c) => {
    const body = await jsonObject(c);
    if (body?.shipment_id === undefined) return answer(c, 422, "Required field missing", { errors: { shipment_id: ["The shipment id field is required."] } });
    const shipment = state.shipment(Number(body.shipment_id));
    if (!shipment) return answer(c, 400, "Invalid shipment id");
    if (shipment.statusId === 8) return answer(c, 400, "Cannot assign AWB to a cancelled shipment.");
    if (shipment.awb) return c.json({ awb_assign_status: 0, response: { data: { awb_assign_error: "AWB is already assigned" } } });
    if (unserviceable.has(shipment.pincode)) {
      return c.json({ awb_assign_status: 0, response: { data: { awb_assign_error: `Selected pincode ${shipment.pincode} is not serviceable by any courier.` } } });
    }
    state.assign(shipment, "Delhivery Surface");
    return c.json({
      awb_assign_status: 1,
      response: { data: { courier_company_id: 12, awb_code: shipment.awb, cod: 0, order_id: shipment.orderId, shipment_id: shipment.id, awb_code_status: 1, courier_name: shipment.courier, applied_weight: 0.5 } },
    });
  });

  app.get("/v1/external/courier/track/awb/:awb", (c) => {
    const order = state.byAwb(c.req.param("awb"));
    if (!order || order.shipment.scans.length === 0) {
      return c.json({ tracking_data: { track_status: 0, error: "Aahh! There is no activities found in our DB. Please have some patience it will be updated soon." } });
    }
    const s = order.shipment;
    return c.json({
      tracking_data: {
        track_status: 1,
        shipment_status: s.statusId,
        shipment_track: [{ id: s.id, awb_code: s.awb, shipment_id: s.id, order_id: order.id, current_status: statusName(s.statusId), courier_name: s.courier }],
        shipment_track_activities: s.scans,
        track_url: `https://shiprocket.co//tracking/${s.awb}`,
        etd: null,
      },
    });
  });

  app.post("/v1/external/orders/cancel/shipment/awbs", async (c) => {
    const body = await jsonObject(c);
    const awbs = body?.awbs;
    if (!Array.isArray(awbs) || awbs.length === 0) return answer(c, 422, "Required field missing", { errors: { awbs: ["The awbs field is required."] } });
    const orders = awbs.map((awb) => state.byAwb(String(awb)));
    if (orders.some((o) => !o)) return answer(c, 400, "Invalid AWB provided.");
    if (orders.some((o) => PICKED_UP.has(o!.shipment.statusId))) return answer(c, 400, "Shipment cannot be cancelled after it has been picked up.");
    for (const o of orders) if (o!.shipment.statusId !== 8) state.scan(o!.shipment.awb!, 8, "Seller");
    return c.json({ message: "Bulk Shipment cancellation is in progress. Please wait for some time." });
  });

  app.notFound((c) => answer(c, 404, "404 Not Found"));

  return {
    app,
    email,
    password,
    webhookToken,
    state,
    /** "METHOD /path" of every request received, in order. */
    requests,
    fetch: (input: string, init?: RequestInit): Promise<Response> => Promise.resolve(app.fetch(new Request(input, init))),
    /** The next matching requests fail (or only answer late) as described. */
    fail(fault: Fault): void {
      faults.push({ ...fault });
    },
    /** Every token stops working (Shiprocket revoked or expired them): the next call answers 401. */
    expireTokens(): void {
      state.tokens.clear();
    },
    /** The courier scans a parcel; answers the webhook Shiprocket sends for it. */
    scan: (awb: string, statusId: number) => state.scan(awb, statusId),
  };
}

export type ShiprocketServer = ReturnType<typeof shiprocketServer>;
