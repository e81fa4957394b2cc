import { z } from "zod";
import { loadOrderView } from "../orders/order-view";
import { refundOrder } from "../orders/refunds";
import { approveReturn, receiveReturn, refundReturn, rejectReturn, requestReturn } from "../orders/returns";
import { applyShipmentStatus, fulfilParcel } from "../orders/shipments";
import { AppError } from "../http/errors";
import { storeProcedure, type StoreContext } from "./define";

/**
 * What happens to an order after it is paid (issue 11 part 8): shipping its parcels, RTO, refunds and
 * returns. Money and stock move through the routines in shared/orders; these are their doors.
 */
const orderId = z.uuid().describe("The order's id");
const returnId = z.uuid().describe("The return's id");
const minor = z.number().int().positive().max(100_000_000_000).describe("Minor units (paise)");
const text = (max: number) => z.string().trim().min(1).max(max);

const view = async (ctx: StoreContext, id: string) => (await loadOrderView(ctx.tx, id))!;
const gatewayOf = (ctx: StoreContext) => ctx.services?.gateway?.(ctx.tx.storeId);

export const fulfillOrder = storeProcedure({
  router: "orders",
  name: "fulfill",
  description:
    "Ship one parcel of a paid order: without tracking, the store's courier is booked and its tracking number (AWB) kept; with tracking {awb, courierName, trackingUrl?}, the merchant's own courier is recorded. The parcel's units leave its location's stock. Answers the order and the new shipment's id.",
  access: "orders.write",
  mutates: true,
  input: z.strictObject({
    orderId,
    parcelId: z.uuid().describe("The parcel (fulfillment order) to ship"),
    tracking: z
      .strictObject({
        awb: z.string().trim().regex(/^[A-Za-z0-9-]{4,40}$/, "must be 4-40 letters, digits or hyphens"),
        courierName: text(100),
        trackingUrl: z.url({ protocol: /^https$/, error: "must be an https URL" }).max(2000).optional(),
      })
      .optional(),
  }),
  async run(ctx, input) {
    const courier = input.tracking ? undefined : await ctx.services?.courier?.(ctx.tx.storeId);
    const { shipmentId } = await fulfilParcel(ctx.tx, input, courier, ctx.member.id);
    return { shipmentId, order: await view(ctx, input.orderId) };
  },
});

export const markRto = storeProcedure({
  router: "orders",
  name: "markRto",
  description:
    "Record that a shipment is coming back to origin (RTO), or with delivered: true that it has arrived back: the same routine a courier's report goes through. Writes order.rto and an RTO task for the merchant, once per shipment.",
  access: "orders.write",
  mutates: true,
  input: z.strictObject({ orderId, shipmentId: z.uuid(), delivered: z.boolean().default(false).describe("The parcel is back at origin") }),
  async run(ctx, input) {
    const { rows } = await ctx.tx.$client.query("select 1 from shipment where store_id = $1 and id = $2 and order_id = $3", [ctx.tx.storeId, input.shipmentId, input.orderId]);
    if (rows.length === 0) throw new AppError("NOT_FOUND", "This order has no such shipment.", { issues: [{ path: "shipmentId", message: "not a shipment of this order" }] });
    const applied = await applyShipmentStatus(ctx.tx, input.shipmentId, input.delivered ? "rto_delivered" : "rto_initiated", "merchant");
    if (!applied.applied && applied.status !== (input.delivered ? "rto_delivered" : "rto_initiated")) {
      throw new AppError("CONFLICT", `This shipment is ${applied.status.replace(/_/g, " ")}: it cannot be marked as returning.`, { reason: `shipment_${applied.status}` });
    }
    return view(ctx, input.orderId);
  },
});

export const refundOrderProcedure = storeProcedure({
  router: "orders",
  name: "refund",
  description:
    "Give money back: amount in minor units (default everything still refundable), newest payment first, through the gateway it came by (a payment marked as paid by hand is refunded outside it, and recorded). Answers the refunds made (processed, or pending until the gateway confirms) and the order.",
  access: "orders.refund",
  mutates: true,
  input: z.strictObject({ orderId, amount: minor.optional(), reason: text(500).optional() }),
  async run(ctx, input) {
    const { refunds } = await refundOrder(ctx.tx, input, await gatewayOf(ctx), ctx.member.id);
    return { refunds, order: await view(ctx, input.orderId) };
  },
});

export const requestReturnProcedure = storeProcedure({
  router: "returns",
  name: "request",
  description:
    "Open a return of shipped units: lines [{orderLineId, quantity}] (at most what shipped less what is already returning) and the customer's reason. Writes return.requested with the returnId.",
  access: "orders.write",
  mutates: true,
  input: z.strictObject({
    orderId,
    lines: z.array(z.strictObject({ orderLineId: z.uuid(), quantity: z.number().int().min(1).max(999) })).min(1).max(100),
    reason: text(500),
    note: text(2000).optional(),
  }),
  run: async (ctx, input) => requestReturn(ctx.tx, input),
});

const returnStep = <I extends z.ZodObject>(name: string, description: string, input: I, run: (ctx: StoreContext, input: z.output<I>) => Promise<unknown>, access: "orders.write" | "orders.refund" = "orders.write") =>
  storeProcedure({ router: "returns", name, description, access, mutates: true, input, run });

export const approveReturnProcedure = returnStep(
  "approve",
  "Approve a requested return: the customer may send the units back. Writes return.approved.",
  z.strictObject({ returnId }),
  async (ctx, input) => {
    await approveReturn(ctx.tx, input.returnId);
    return { returnId: input.returnId, status: "approved" };
  },
);

export const rejectReturnProcedure = returnStep(
  "reject",
  "Reject a requested or approved return, with the reason the customer will be told. Writes return.rejected.",
  z.strictObject({ returnId, reason: text(500) }),
  async (ctx, input) => {
    await rejectReturn(ctx.tx, input.returnId, input.reason);
    return { returnId: input.returnId, status: "rejected" };
  },
);

export const receiveReturnProcedure = returnStep(
  "receive",
  "The approved return's units arrived: with restock (default true) they go back on hand where they shipped from, each with a 'returned' stock adjustment. Writes return.received.",
  z.strictObject({ returnId, restock: z.boolean().default(true) }),
  async (ctx, input) => {
    await receiveReturn(ctx.tx, input.returnId, input.restock, ctx.member.id);
    return { returnId: input.returnId, status: "received" };
  },
);

export const refundReturnProcedure = returnStep(
  "refund",
  "Refund a received return: amount in minor units, default the returned units' value less their share of discounts, through the order's refund routine. Writes return.refunded.",
  z.strictObject({ returnId, amount: minor.optional() }),
  async (ctx, input) => {
    const { refunds } = await refundReturn(ctx.tx, input.returnId, input.amount, await gatewayOf(ctx), ctx.member.id);
    return { returnId: input.returnId, status: "refunded", refunds };
  },
  "orders.refund",
);

export const fulfilmentProcedures = [
  fulfillOrder,
  markRto,
  refundOrderProcedure,
  requestReturnProcedure,
  approveReturnProcedure,
  rejectReturnProcedure,
  receiveReturnProcedure,
  refundReturnProcedure,
];
