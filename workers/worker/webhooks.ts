import { Hono, type Context, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { AppError } from "#shared/core/errors";
import { enforce } from "#shared/limits/limit";
import type { LimitPolicy } from "#shared/limits/window";
import { receivePaymentEvent, receiveShipmentEvent } from "#shared/orders/reports";
import { isWebhookSegmentOf } from "#shared/shipping/select";
import type { WorkerHonoEnv } from "./env";

/**
 * POST /webhooks/payments/<provider>/<storeId> (issue 11 part 7; ARCHITECTURE §14). In this order, so a
 * hostile flood costs as little as possible: the per-IP limit (120 a minute, before anything is read), the
 * provider and store id's shape, a body of at most 64 KiB, the signature with the store's secret (401,
 * nothing written, before the body is parsed as anything); then the orders area receives the verified
 * event (shared/orders/reports.ts): the store a record of ours names (an event
 * whose Razorpay order or refund names another store is acknowledged and ignored with nothing read: one
 * provider account may send every store's events to every store's address), then two round trips: one
 * reads whether the event id was seen (a second delivery changes nothing and answers 200), the attempt the
 * provider's reference names and its reading; one records the event id with the status applied through
 * the one routine. 2xx only after that unit commits. An event that names no store (Razorpay's payment.*
 * events: the payment's notes are the shopper's to change, so they are not read) is applied only if an
 * attempt of this store holds its reference, and otherwise acknowledged and ignored after that one read.
 */
export const WEBHOOK_POLICY: LimitPolicy = { limit: 120, windowMs: 60_000 };
const WEBHOOK_MAX_BYTES = 64 * 1024;

export const webhooks = new Hono<WorkerHonoEnv>();

const notHere = () => new AppError("NOT_FOUND", "No such webhook endpoint.");

/** Every webhook's door, in this order: the per-IP limit before anything is read, then the body's size. */
const guards = [
  async (c: Context<WorkerHonoEnv>, next: Next) => {
    const ip = c.req.header("cf-connecting-ip") ?? "unknown";
    const headers = await enforce(c.env.RATE_LIMITER, `webhook:${ip}`, WEBHOOK_POLICY, `webhook calls per ${WEBHOOK_POLICY.windowMs / 1000} s from one address`);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    await next();
  },
  bodyLimit({
    maxSize: WEBHOOK_MAX_BYTES,
    onError: () => {
      throw new AppError("PAYLOAD_TOO_LARGE", `A webhook body is limited to ${WEBHOOK_MAX_BYTES} bytes.`);
    },
  }),
] as const;

webhooks.post(
  "/webhooks/payments/:provider/:storeId",
  ...guards,
  async (c) => {
    const storeId = z.uuid().safeParse(c.req.param("storeId"));
    const { provider } = c.var.providers.gatewayConfig();
    if (!storeId.success || c.req.param("provider") !== provider) throw notHere();
    const sg = await c.var.providers.storeGateway(storeId.data);
    const body = await c.req.text();
    const event = await sg.gateway.verifyWebhook(body, c.req.raw.headers, sg.webhookSecret);
    if (!event) throw new AppError("UNAUTHORIZED", "The webhook signature does not match this store's secret.", { reason: "bad_signature" });
    return c.json({ ok: true, ...(await receivePaymentEvent(c.var.db, storeId.data, sg.provider, event)) });
  },
);

/**
 * POST /webhooks/shipments/<provider>/<storeId>: the same door as payments' (limit, size, the store's
 * secret or token before the body is read, dedupe by event id, 2xx after commit). The shipment is found
 * by the courier's tracking number and moved through the one shipment routine; an unknown tracking
 * number keeps nothing, so the courier's retry can still apply it once the shipment exists.
 */
webhooks.post("/webhooks/shipments/:provider/:storeId", ...guards, async (c) => {
  const storeId = z.uuid().safeParse(c.req.param("storeId"));
  const { provider } = c.var.providers.courierConfig();
  if (!storeId.success || !isWebhookSegmentOf(c.req.param("provider"), provider)) throw notHere();
  const sc = await c.var.providers.storeCourier(storeId.data);
  const body = await c.req.text();
  const event = await sc.courier.verifyWebhook(body, c.req.raw.headers, sc.webhookSecret);
  if (!event) throw new AppError("UNAUTHORIZED", "The webhook signature or token does not match this store's.", { reason: "bad_signature" });
  return c.json({ ok: true, ...(await receiveShipmentEvent(c.var.db, storeId.data, sc.provider, event)) });
});
