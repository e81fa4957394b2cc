import { z } from "zod";
import type { OrderDetail } from "#shared/orders/order-detail";
import { fulfillOrder, markRto, refundOrderProcedure, approveReturnProcedure, receiveReturnProcedure, refundReturnProcedure, rejectReturnProcedure, requestReturnProcedure } from "#shared/procedures/fulfilment";
import { completeTask } from "#shared/procedures/tasks";
import { orderAction, PAYMENT_ACTIONS, type ActionField, type OrderAction } from "./order-actions";

/**
 * The order page's actions after payment: ship a parcel, mark an RTO, refund, the steps of a return, and
 * closing a task. Each offers only the rows its step applies to (a select from the order), so a member is
 * never shown a choice the procedure would refuse for its state.
 */
const LIVE = ["pending", "in_transit", "delivered", "rto_initiated"];
const HELD = ["paid", "partially_paid", "partially_refunded"];

const unshippedParcels = (o: OrderDetail) =>
  o.parcels
    .map((p, i) => ({ value: p.id, label: `Parcel ${i + 1} of ${o.parcels.length}` }))
    .filter((p) => !o.shipments.some((s) => s.parcelId === p.value && LIVE.includes(s.status)));
const returning = (o: OrderDetail) => o.shipments.filter((s) => ["pending", "in_transit", "rto_initiated"].includes(s.status));
const returnsIn = (o: OrderDetail, ...statuses: string[]) => o.returns.filter((r) => statuses.includes(r.status));
const returnOptions = (...statuses: string[]) => (o: OrderDetail) => returnsIn(o, ...statuses).map((r) => ({ value: r.id, label: `Return ${r.number} (${r.status})` }));

const select = (name: string, label: string, options: ActionField["options"]): ActionField => ({ name, label, kind: "select", required: true, maxlength: 100, options });
const text = (name: string, label: string, required: boolean, maxlength: number, placeholder?: string): ActionField => ({
  name,
  label,
  kind: "text",
  required,
  maxlength,
  ...(placeholder ? { placeholder } : {}),
});
const optional = (schema: z.ZodString) => z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema.optional());

/** Rupees as typed ("250", "250.5", "1,250.50") to paise; blank stays absent (the procedure's default). */
const rupees = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
  z
    .string()
    .trim()
    .transform((v) => v.replace(/,/g, ""))
    .refine((v) => /^\d{1,9}(\.\d{1,2})?$/.test(v), "Give an amount in rupees, e.g. 250 or 250.50.")
    .transform((v) => {
      const [whole, frac = ""] = v.split(".");
      return Number(whole) * 100 + Number(frac.padEnd(2, "0"));
    })
    .refine((n) => n > 0, "The amount must be more than 0.")
    .optional(),
);

export const FULFILMENT_ACTIONS: readonly OrderAction[] = [
  orderAction({
    name: "fulfill",
    label: "Ship parcel",
    intro: "Hand a parcel to the courier. Leave the tracking number blank to book the store's courier; give it if you booked your own.",
    permission: "orders.write",
    when: (o) => o.status === "open" && ["paid", "partially_refunded"].includes(o.paymentStatus) && unshippedParcels(o).length > 0,
    fields: [
      select("parcelId", "Parcel", unshippedParcels),
      text("awb", "Tracking number (your own courier)", false, 40, "e.g. DLV123456"),
      text("courierName", "Courier", false, 100, "e.g. Delhivery"),
      text("trackingUrl", "Tracking link (https)", false, 2000),
    ],
    input: z
      .object({ parcelId: z.string(), awb: optional(z.string().trim()), courierName: optional(z.string().trim()), trackingUrl: optional(z.string().trim()) })
      .refine((v) => !v.awb || v.courierName, { path: ["courierName"], message: "Name the courier of this tracking number." }),
    run: (call, orderId, v) =>
      call(fulfillOrder, {
        orderId,
        parcelId: v.parcelId,
        ...(v.awb ? { tracking: { awb: v.awb, courierName: v.courierName, ...(v.trackingUrl ? { trackingUrl: v.trackingUrl } : {}) } } : {}),
      }),
    done: (o) => `A parcel of order #${o.number} is shipped: its tracking number is under Shipments.`,
  }),
  orderAction({
    name: "rto",
    label: "Mark as returning (RTO)",
    intro: "The courier could not deliver and is bringing the parcel back. You get a task to check it in.",
    permission: "orders.write",
    when: (o) => returning(o).length > 0,
    fields: [
      select("shipmentId", "Shipment", (o) => returning(o).map((s) => ({ value: s.id, label: `${s.awb} (${s.status.replace(/_/g, " ")})` }))),
      select("arrived", "Where is it", () => [
        { value: "no", label: "On its way back" },
        { value: "yes", label: "Arrived back with us" },
      ]),
    ],
    input: z.object({ shipmentId: z.string(), arrived: z.enum(["no", "yes"]) }),
    run: (call, orderId, v) => call(markRto, { orderId, shipmentId: v.shipmentId, delivered: v.arrived === "yes" }),
    done: (o) => `Order #${o.number}: the parcel is marked as returning, and a task is open.`,
  }),
  orderAction({
    name: "refund",
    label: "Refund",
    intro: "Give money back the way it was paid. Leave the amount blank to refund everything still held.",
    permission: "orders.refund",
    when: (o) => HELD.includes(o.paymentStatus),
    fields: [text("amount", "Amount in rupees (blank: all)", false, 16, "e.g. 250.00"), text("reason", "Reason", false, 500)],
    danger: true,
    input: z.object({ amount: rupees, reason: optional(z.string().trim().max(500)) }),
    run: (call, orderId, v) => call(refundOrderProcedure, { orderId, ...(v.amount ? { amount: v.amount } : {}), ...(v.reason ? { reason: v.reason } : {}) }),
    done: (o) => `Refunded: order #${o.number} is now ${o.paymentStatus.replace(/_/g, " ")}.`,
  }),
  orderAction({
    name: "return_request",
    label: "Open a return",
    intro: "The customer is sending units back.",
    permission: "orders.write",
    when: (o) => o.shipments.some((s) => ["pending", "in_transit", "delivered"].includes(s.status)),
    fields: [
      select("orderLineId", "Item", (o) => o.lines.map((l) => ({ value: l.id, label: `${l.productTitle}${l.variantTitle === "Default" ? "" : ` — ${l.variantTitle}`} (×${l.quantity})` }))),
      text("quantity", "Units", true, 3, "1"),
      text("reason", "Customer's reason", true, 500),
    ],
    input: z.object({ orderLineId: z.string(), quantity: z.coerce.number({ error: "Give a whole number of units." }).int("Give a whole number of units.").min(1, "At least 1.").max(999), reason: z.string().trim().min(1, "Say why it comes back.").max(500) }),
    run: (call, orderId, v) => call(requestReturnProcedure, { orderId, lines: [{ orderLineId: v.orderLineId, quantity: v.quantity }], reason: v.reason }),
    done: (o) => `A return of order #${o.number} is open.`,
  }),
  orderAction({
    name: "return_approve",
    label: "Approve return",
    intro: "The customer may send the units back.",
    permission: "orders.write",
    when: (o) => returnsIn(o, "requested").length > 0,
    fields: [select("returnId", "Return", returnOptions("requested"))],
    input: z.object({ returnId: z.string() }),
    run: (call, _orderId, v) => call(approveReturnProcedure, v),
    done: () => "The return is approved.",
  }),
  orderAction({
    name: "return_reject",
    label: "Reject return",
    intro: "Refuse a return; the customer is told why.",
    permission: "orders.write",
    when: (o) => returnsIn(o, "requested", "approved").length > 0,
    fields: [select("returnId", "Return", returnOptions("requested", "approved")), text("reason", "Why", true, 500)],
    danger: true,
    input: z.object({ returnId: z.string(), reason: z.string().trim().min(1, "Say why the return is refused.").max(500) }),
    run: (call, _orderId, v) => call(rejectReturnProcedure, v),
    done: () => "The return is rejected.",
  }),
  orderAction({
    name: "return_receive",
    label: "Receive return",
    intro: "The units arrived back. Put them back in stock unless they are damaged.",
    permission: "orders.write",
    when: (o) => returnsIn(o, "approved").length > 0,
    fields: [
      select("returnId", "Return", returnOptions("approved")),
      select("restock", "Stock", () => [
        { value: "yes", label: "Put back in stock" },
        { value: "no", label: "Do not restock (damaged)" },
      ]),
    ],
    input: z.object({ returnId: z.string(), restock: z.enum(["yes", "no"]) }),
    run: (call, _orderId, v) => call(receiveReturnProcedure, { returnId: v.returnId, restock: v.restock === "yes" }),
    done: () => "The return is received.",
  }),
  orderAction({
    name: "return_refund",
    label: "Refund return",
    intro: "Refund the returned units. Leave the amount blank for their value less their share of discounts.",
    permission: "orders.refund",
    when: (o) => returnsIn(o, "received").length > 0,
    fields: [select("returnId", "Return", returnOptions("received")), text("amount", "Amount in rupees (blank: the units' value)", false, 16)],
    danger: true,
    input: z.object({ returnId: z.string(), amount: rupees }),
    run: (call, _orderId, v) => call(refundReturnProcedure, { returnId: v.returnId, ...(v.amount ? { amount: v.amount } : {}) }),
    done: (o) => `The return is refunded: order #${o.number} is now ${o.paymentStatus.replace(/_/g, " ")}.`,
  }),
  orderAction({
    name: "task_done",
    label: "Mark task done",
    intro: "Close a task once you have handled it.",
    permission: "orders.write",
    when: (o) => o.tasks.some((t) => t.status === "open"),
    fields: [select("id", "Task", (o) => o.tasks.filter((t) => t.status === "open").map((t) => ({ value: t.id, label: t.title })))],
    input: z.object({ id: z.string() }),
    run: (call, _orderId, v) => call(completeTask, v),
    done: () => "The task is done.",
  }),
];

export const ORDER_ACTIONS: readonly OrderAction[] = [...PAYMENT_ACTIONS, ...FULFILMENT_ACTIONS];

export const findAction = (name: string): OrderAction | undefined => ORDER_ACTIONS.find((a) => a.name === name);

/** The actions a member may take on this order now. */
export const actionsFor = (order: OrderDetail, permissions: readonly string[]): OrderAction[] =>
  ORDER_ACTIONS.filter((a) => permissions.includes(a.permission) && a.when(order));
