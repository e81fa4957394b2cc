import type { SQL } from "drizzle-orm";
import { z } from "zod";
import { mapPlan, plan, type Plan } from "../db/plan";
import type { Q, ResultOf, Step } from "../db/steps";
import { orderViewStatement, type OrderView } from "../orders/order-view";
import { answered, recordRefunds } from "../orders/refund-record";
import { callGateway, orderRefundClaimPlan, rereadCalls, type RefundCalls, type RefundClaim } from "../orders/refunds";
import {
  moveSteps,
  requestReturnChange,
  requestReturnPlan,
  restockSteps,
  returnAsRead,
  returnFor,
  returnPlan,
  returnRefundChange,
  returnRefundClaimPlan,
  type ReturnRow,
  type ReturnStatus,
  type ReturnStep,
} from "../orders/returns";
import { shipmentChange, shipmentReadingPlan, type ShipmentReading } from "../orders/shipment-status";
import { bookParcel, fulfilChange, fulfilReadingPlan, type Booked, type FulfilReading } from "../orders/shipments";
import { decideShipmentStatus } from "../rules/status";
import { AppError } from "../core/errors";
import { storeProcedure, type Services, type WritePlan } from "./define";
import * as out from "./outputs";
import { orderOutput } from "./orders";
import { REFUND_STATUSES, RETURN_STATUSES } from "../db/schema";

/**
 * What happens to an order after it is paid (issue 11 part 8): shipping its parcels, RTO, refunds and
 * returns. Money and stock move through the routines in shared/orders; these are their doors.
 *
 * Every change is a write plan in two round trips: a reading, then the change checked against it. Shipping
 * books the courier between them (`decide`: a repeat books the same shipment). A refund's first unit
 * writes: it claims the refund rows whose ids are the gateway's keys, then the gateway is called once per
 * row, then the answers are recorded (`claim`, `decide`, `reread`: shared/orders/refund-claims.ts).
 */
const orderId = z.uuid().describe("The order's id");
const returnId = z.uuid().describe("The return's id");
const minor = z.number().int().positive().max(100_000_000_000).describe("Minor units (paise)");
const text = (max: number) => z.string().trim().min(1).max(max);

/** The refunds a refund made: each processed, pending at the gateway, or failed; `outsideGateway` when paid back by hand. */
const refundsOutput = z.array(z.object({ id: out.id, amount: out.minor, status: z.enum(REFUND_STATUSES), outsideGateway: z.boolean() }));

export const fulfillOrder = storeProcedure({
  router: "orders",
  name: "fulfill",
  description:
    "Ship one parcel of a paid order: without tracking, the store's courier is booked and its tracking number (AWB) kept; with tracking {awb, courierName, trackingUrl?}, the merchant's own courier is recorded. The parcel's units leave its location's stock. Answers the order and the new shipment's id.",
  access: "orders.write",
  mutates: true,
  output: z.object({ shipmentId: out.id, order: orderOutput }),
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
  write: {
    // Two units with the courier's booking between them: the parcel read, booked (its shipment id comes
    // from the parcel's shipment count, so a repeat books the same shipment), then recorded under guards.
    prepare: (q, { store }, input) => fulfilReadingPlan(q, store, input),
    async decide(reading: FulfilReading, services, input, storeId) {
      const courier = input.tracking ? undefined : await services.courier?.(storeId);
      return { reading, booked: await bookParcel(reading, input, courier) };
    },
    apply: (q, { store, memberId }, _input, decided: { reading: FulfilReading; booked: Booked }) => fulfilChange(q, store, decided.reading, decided.booked, memberId),
  },
});

const noSuchShipment = () =>
  new AppError("NOT_FOUND", "This order has no such shipment.", { issues: [{ path: "shipmentId", message: "not a shipment of this order" }] });

/** The change's statements, then the order as they left it (read by the same unit). */
function thenView(q: Q, store: SQL, orderId: string, change: readonly Step[]): Plan<OrderView> {
  const view = orderViewStatement(q, store, orderId);
  return plan([...change, view], (results) => (results.at(-1) as ResultOf<typeof view>)[0]!.order);
}

const rtoOf = (input: { delivered: boolean }) => (input.delivered ? "rto_delivered" : "rto_initiated");

export const markRto = storeProcedure({
  router: "orders",
  name: "markRto",
  description:
    "Record that a shipment is coming back to origin (RTO), or with delivered: true that it has arrived back: the same routine a courier's report goes through. Writes order.rto and an RTO task for the merchant, once per shipment.",
  access: "orders.write",
  mutates: true,
  output: orderOutput,
  input: z.strictObject({ orderId, shipmentId: z.uuid(), delivered: z.boolean().default(false).describe("The parcel is back at origin") }),
  write: {
    prepare: (q, { store }, input) =>
      mapPlan(shipmentReadingPlan(q, store, { id: input.shipmentId, orderId: input.orderId }), (reading) => {
        if (!reading) throw noSuchShipment();
        const { status } = reading.shipment;
        if (!decideShipmentStatus(status, rtoOf(input)).apply && status !== rtoOf(input)) {
          throw new AppError("CONFLICT", `This shipment is ${status.replace(/_/g, " ")}: it cannot be marked as returning.`, { reason: `shipment_${status}` });
        }
        return reading;
      }),
    apply: (q, { store }, input, reading: ShipmentReading) => thenView(q, store, input.orderId, shipmentChange(q, store, reading, rtoOf(input), "merchant").steps),
  },
});

/**
 * Between a refund's claim and its record: each claimed row sent to the store's gateway (once: a lost race
 * reads again and records the same answers).
 */
const refundCalls = {
  decide: (claim: RefundClaim, services: Services, _input: unknown, storeId: string) => callGateway(claim, async () => services.gateway?.(storeId)),
  reread: (q: Q, { store }: { store: SQL }, _input: unknown, calls: RefundCalls) => rereadCalls(q, store, calls),
} satisfies Pick<WritePlan<unknown, unknown>, "decide" | "reread">;

export const refundOrderProcedure = storeProcedure({
  router: "orders",
  name: "refund",
  description:
    "Give money back: amount in minor units (default everything still refundable), newest payment first, through the gateway it came by (a payment marked as paid by hand is refunded outside it, and recorded). Answers the refunds made (processed, or pending until the gateway confirms) and the order.",
  access: "orders.refund",
  mutates: true,
  output: z.object({ refunds: refundsOutput, order: orderOutput }),
  input: z.strictObject({ orderId, amount: minor.optional(), reason: text(500).optional() }),
  write: {
    claim: (q, { store, memberId }, input) => orderRefundClaimPlan(q, store, memberId, input),
    ...refundCalls,
    apply(q, { store, memberId }, _input, calls: RefundCalls) {
      const made = recordRefunds(q, store, memberId, calls);
      return mapPlan(thenView(q, store, calls.claim.orderId, made.steps), (order) => ({ refunds: answered(made), order }));
    },
  },
});

export const requestReturnProcedure = storeProcedure({
  router: "returns",
  name: "request",
  description:
    "Open a return of shipped units: lines [{orderLineId, quantity}] (at most what shipped less what is already returning) and the customer's reason. Writes return.requested with the returnId.",
  access: "orders.write",
  mutates: true,
  output: z.object({ returnId: out.id, number: z.number().int() }),
  input: z.strictObject({
    orderId,
    lines: z.array(z.strictObject({ orderLineId: z.uuid(), quantity: z.number().int().min(1).max(999) })).min(1).max(100),
    reason: text(500),
    note: text(2000).optional(),
  }),
  write: {
    prepare: (q, { store }, input) => requestReturnPlan(q, store, input),
    apply: (q, { store }, input) => requestReturnChange(q, store, input),
  },
});

/**
 * A step of a return as a write plan: the return read and checked for the step, then `change` (the order
 * and the return locked, the return still as read), answering the return's new status.
 */
const returnStep = <I extends z.ZodObject<{ returnId: typeof returnId }>>(
  name: ReturnStep,
  description: string,
  input: I,
  to: ReturnStatus,
  change: (q: Q, store: SQL, ret: ReturnRow, input: z.output<I>, memberId: SQL) => Step[],
) =>
  storeProcedure({
    router: "returns",
    name,
    description,
    access: "orders.write",
    mutates: true,
    output: z.object({ returnId: out.id, status: z.enum(RETURN_STATUSES) }),
    input,
    write: {
      prepare: (q, { store }, input) => mapPlan(returnPlan(q, store, input.returnId), (ret) => returnFor(ret, name)),
      apply: (q, { store, memberId }, input, ret: ReturnRow) =>
        plan([...returnAsRead(q, store, ret), ...change(q, store, ret, input, memberId)], () => ({ returnId: input.returnId, status: to })),
    },
  });

export const approveReturnProcedure = returnStep(
  "approve",
  "Approve a requested return: the customer may send the units back. Writes return.approved.",
  z.strictObject({ returnId }),
  "approved",
  (q, store, ret) => moveSteps(q, store, ret, "approved"),
);

export const rejectReturnProcedure = returnStep(
  "reject",
  "Reject a requested or approved return, with the reason the customer will be told. Writes return.rejected.",
  z.strictObject({ returnId, reason: text(500) }),
  "rejected",
  (q, store, ret, input) => moveSteps(q, store, ret, "rejected", { reason: input.reason }, `Rejected: ${input.reason}`),
);

export const receiveReturnProcedure = returnStep(
  "receive",
  "The approved return's units arrived: with restock (default true) they go back on hand where they shipped from, each with a 'returned' stock adjustment. Writes return.received.",
  z.strictObject({ returnId, restock: z.boolean().default(true) }),
  "received",
  (q, store, ret, input, memberId) => [...(input.restock ? restockSteps(q, store, ret, memberId) : []), ...moveSteps(q, store, ret, "received", { restocked: input.restock })],
);

export const refundReturnProcedure = storeProcedure({
  router: "returns",
  name: "refund",
  description:
    "Refund a received return: amount in minor units, default the returned units' value less their share of discounts, through the order's refund routine. Writes return.refunded.",
  access: "orders.refund",
  mutates: true,
  output: z.object({ returnId: out.id, status: z.literal("refunded"), refunds: refundsOutput }),
  input: z.strictObject({ returnId, amount: minor.optional() }),
  write: {
    claim: (q, { store, memberId }, input) => returnRefundClaimPlan(q, store, memberId, input),
    ...refundCalls,
    apply: (q, { store, memberId }, _input, calls: RefundCalls) => returnRefundChange(q, store, memberId, calls),
  },
});

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
