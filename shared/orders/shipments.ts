import type { SQL } from "drizzle-orm";
import { emitStep, ensureChanged, unchanged } from "../db/changes";
import { uuidFrom } from "../db/ids";
import { plan, together, type Plan } from "../db/plan";
import { shipmentEvent } from "../db/schema";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q, type ResultOf } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { isCourierError, type Courier, type CreatedShipment } from "../shipping/courier";
import { conflict, lockAttemptsStep, lockOrderStep, refuseClosed } from "./actions";
import { orderNotFound } from "./order-detail";
import { orderViewStatement, type OrderView } from "./order-view";
import { orderReadingPlan, recomputeSteps, type OrderReading } from "./routines";
import { shipmentChange, shipmentReadingPlan, type ShipmentApplied, type ShipmentReport, type ShipmentSource } from "./shipment-status";
import type { ShipmentStatus } from "../rules/status";
import { lockParcelLines, lockStockRows } from "./statements/locks";
import { lockParcelStock, orderToShip, parcelLinesToShip, parcelToShip, shipParcelUnits } from "./statements/shipments";
import { draftInvoice, invoiceReadingPlan, issueInvoiceStep, type InvoiceReading } from "./invoices";

/**
 * Shipments (docs/order-status.md, "Shipments"): a parcel handed to a courier, and the one routine that
 * moves a shipment's status whatever reports it (./shipment-status.ts; here on an open transaction).
 *
 * Shipping a parcel is a reading, the courier's booking, and a change checked against the reading: on an
 * open transaction the reading takes the locks (payment attempts, then the order, then its parcel, lines
 * and stock rows: the lock order every order writer keeps), so the change finds it as read.
 */
export type { ShipmentApplied, ShipmentSource } from "./shipment-status";

export interface FulfilInput {
  orderId: string;
  parcelId: string;
  /** The merchant's own courier: the tracking number they were given. Absent: book the store's courier. */
  tracking?: { awb: string; courierName: string; trackingUrl?: string | undefined } | undefined;
}

type ParcelLine = RowOfStatement<typeof parcelLinesToShip>;

/** What shipping a parcel decides from: the order (its facts for the recompute), the parcel, its lines and their stock. */
export interface FulfilReading {
  order: RowOfStatement<typeof orderToShip>;
  facts: OrderReading;
  parcel: { id: string; locationId: string; locationName: string | null; originState: string | null; value: number; shipments: number };
  lines: ParcelLine[];
  /** What its tax invoice is made of (./invoices.ts), issued by the change. */
  invoice?: InvoiceReading | undefined;
}

const SHIPPABLE: ReadonlySet<string> = new Set(["paid", "partially_refunded"]);
/** A parcel with a shipment in one of these is on its way or there: it is not shipped again. */
const LIVE_SHIPMENT = ["pending", "in_transit", "delivered", "rto_initiated"];

/**
 * Reads a parcel of a paid order to ship, refusing (in its answer) an order that is closed or not paid, a
 * parcel of another order, already on its way, with no location, or whose units are not in stock there.
 * With `lock` (an open transaction), everything it reads stays as read until the change.
 */
export function fulfilReadingPlan(q: Q, store: SQL, input: FulfilInput, lock = false): Plan<FulfilReading> {
  const read = together({
    // Locked first, each by a statement of its own: a statement that waited for a lock reads other rows as they were when it began.
    locks: lock
      ? plan(
          [
            lockAttemptsStep(q, store, input.orderId),
            lockOrderStep(q, store, input.orderId),
          ] as const,
          () => undefined,
        )
      : plan([], () => undefined),
    facts: orderReadingPlan(q, store, input.orderId, lock),
    rows: plan(
      [
        orderToShip(q, store, input.orderId),
        parcelToShip(q, store, input, LIVE_SHIPMENT, lock),
        parcelLinesToShip(q, store, input, lock),
        // The stock rows locked in id order (as checkout locks them), read as locked.
        ...(lock ? [lockParcelStock(q, store, input)] : []),
      ] as const,
      ([[order], [parcel], lines, locked]) => {
        const fresh = new Map((locked ?? []).map((l) => [l.id, l]));
        return { order, parcel, lines: lines.map((l) => (l.levelId && fresh.has(l.levelId) ? { ...l, onHand: fresh.get(l.levelId)!.on_hand, levelReserved: fresh.get(l.levelId)!.reserved } : l)) };
      },
    ),
    invoice: invoiceReadingPlan(q, store, input),
  });
  return {
    steps: read.steps,
    finish(results) {
      const { facts, rows, invoice } = read.finish(results);
      const { order, parcel, lines } = rows;
      if (!facts || !order) throw orderNotFound();
      refuseClosed({ status: facts.facts.status, number: order.number }, "fulfilled");
      const paid = facts.facts.paymentStatus;
      if (!SHIPPABLE.has(paid)) {
        throw conflict("not_paid", `Order #${order.number} is ${paid.replace(/_/g, " ")}: it ships once it is paid (mark it as paid first if the money came another way).`);
      }
      if (!parcel) throw new AppError("NOT_FOUND", "This order has no such parcel.", { issues: [{ path: "parcelId", message: "not a parcel of this order" }] });
      const [live] = parcel.live;
      if (live) throw conflict("already_shipped", `This parcel already has shipment ${live.awb} (${live.status.replace(/_/g, " ")}).`);
      if (!parcel.locationId) throw conflict("no_location", "This parcel's location was deleted: there is nowhere to ship it from.");
      const short = lines.filter((l) => l.levelId === null || l.onHand < l.quantity || l.onHand - l.levelReserved < l.quantity - l.reserved);
      if (short.length > 0) {
        throw new AppError("CONFLICT", "Some units of this parcel are not in stock at its location yet.", {
          reason: "not_in_stock",
          issues: short.map((l) => ({ path: `lines.${l.flId}`, message: `${l.title}: ${l.quantity} to ship, ${Math.max(0, l.onHand - l.levelReserved + l.reserved)} in stock for it` })),
        });
      }
      return { order, facts, parcel: { ...parcel, locationId: parcel.locationId }, lines, invoice };
    },
  };
}

export interface Booked {
  shipmentId: string;
  provider: string;
  created: CreatedShipment;
}

/**
 * The shipment's id, and its booking: the merchant's own tracking number, or the store's courier booked
 * with an id derived from the parcel and the shipment's number, so a retry after a lost commit (or a
 * racing request for the same parcel) books the same shipment, not a second one.
 */
export async function bookParcel(reading: FulfilReading, input: FulfilInput, courier: Courier | undefined): Promise<Booked> {
  const { order, parcel, lines } = reading;
  const shipmentId = await uuidFrom(`${parcel.id}:shipment:${parcel.shipments + 1}`);
  if (input.tracking) {
    const { awb, courierName, trackingUrl } = input.tracking;
    return { shipmentId, provider: "manual", created: { awb, courierName, ...(trackingUrl ? { trackingUrl } : {}), status: "pending" } };
  }
  if (!courier) {
    throw new AppError("BAD_REQUEST", "No courier can be booked from here: give the tracking number of the courier you used.", {
      issues: [{ path: "tracking", message: "required when the store's courier cannot be booked" }],
    });
  }
  const a = order.shippingAddress;
  try {
    const created = await courier.createShipment({
      shipmentId,
      orderId: order.id,
      orderNumber: String(order.number),
      pickup: { locationId: parcel.locationId, name: parcel.locationName ?? "Primary", ...(parcel.originState ? { state: parcel.originState } : {}) },
      shipTo: {
        name: a.name ?? "",
        line1: a.line1 ?? "",
        ...(a.line2 ? { line2: a.line2 } : {}),
        city: a.city ?? "",
        state: a.state ?? "",
        postalCode: a.postalCode ?? "",
        country: a.country ?? "IN",
        ...(order.phone ? { phone: order.phone } : {}),
        email: order.email,
      },
      items: lines.map((l) => ({ name: l.title, ...(l.sku ? { sku: l.sku } : {}), quantity: l.quantity, unitPrice: l.unitPrice })),
      value: parcel.value,
      currency: order.currency,
      paymentMode: "prepaid",
      weightGrams: 500 * lines.reduce((n, l) => n + l.quantity, 0),
    });
    return { shipmentId, provider: courier.provider, created };
  } catch (e) {
    if (!isCourierError(e)) throw e;
    const message = `The courier (${e.provider}) refused the booking: ${e.message}`;
    if (e.retryable) throw new AppError("SERVICE_UNAVAILABLE", `${message}. Nothing was shipped; try again in a minute.`, { reason: `courier_${e.kind}` });
    throw new AppError("CONFLICT", `${message}. Nothing was shipped.`, { reason: `courier_${e.kind}`, issues: [{ path: e.field ?? "parcelId", message: e.message }] });
  }
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/**
 * Ships the parcel read as `reading` with its booking: the order still as read (no other shipment since),
 * its lines and stock rows locked and still holding the units; the shipment and its first event; its
 * units out of the location's stock (reserved units first, then what is on hand for pre-ordered units
 * that were backordered) with an adjustment row each; `shipment.created`; the order recomputed. Answers
 * the shipment's id and the order as the change left it. The parcel's tax invoice is issued at `now` by the
 * same unit (./invoices.ts: its number taken from its series in the same transaction), unless its location
 * has no GSTIN.
 */
export function fulfilChange(q: Q, store: SQL, reading: FulfilReading, booked: Booked, memberId: SQL, now = new Date()): Plan<{ shipmentId: string; order: OrderView }> {
  const { order, parcel, lines } = reading;
  const { shipmentId, created } = booked;
  const invoice = reading.invoice ? draftInvoice(reading.invoice, { orderId: order.id, parcelId: parcel.id }, now) : undefined;
  const recompute = recomputeSteps(q, store, reading.facts, (facts) => ({ ...facts, shipments: [...facts.shipments, { parcelId: parcel.id, status: created.status }] }));
  const items = lines.map((l) => ({ fl: l.flId, level: l.levelId, quantity: l.quantity, reserved: l.reserved }));
  const view = orderViewStatement(q, store, order.id);
  const steps = [
    ...recompute.guard,
    lockParcelLines(q, store, lines.map((l) => l.flId)),
    lockStockRows(q, store, items.flatMap((i) => (i.level ? [i.level] : []))),
    unchanged(
      q,
      sql`not exists (select 1 from jsonb_to_recordset(${json(items)}) as x(fl uuid, level uuid, quantity int, reserved int)
            left join fulfillment_order_line fl on fl.store_id = ${store} and fl.id = x.fl
            left join inventory_level il on il.store_id = ${store} and il.id = x.level
            where fl.reserved is distinct from x.reserved or il.id is null or il.on_hand < x.quantity or il.on_hand - il.reserved < x.quantity - x.reserved)`,
    ),
    ensureChanged(
      q,
      sql`insert into shipment (id, store_id, order_id, fulfillment_order_id, provider, awb, provider_ref, courier_name, tracking_url, status)
          values (${shipmentId}, ${store}, ${order.id}, ${parcel.id}, ${booked.provider}, ${created.awb}, ${created.providerRef ?? null}, ${created.courierName}, ${created.trackingUrl ?? null}, ${created.status})
          on conflict (store_id, provider, awb) do nothing returning 1`,
      conflict("awb_taken", `Tracking number ${created.awb} is already on another shipment of this store.`),
    ),
    q.insert(shipmentEvent).values({ storeId: store, shipmentId, status: created.status, source: "merchant" }),
    ...(invoice && "draft" in invoice ? [issueInvoiceStep(q, store, invoice.draft)] : []),
    // The shipped units leave the location: on hand down by the quantity, reserved down by what the parcel held.
    shipParcelUnits(q, store, items, parcel.locationId, `Order #${order.number}`, memberId),
    emitStep(q, "shipment.created", { orderId: order.id, shipmentId, parcelId: parcel.id, awb: created.awb, courierName: created.courierName }),
    ...recompute.steps,
    view,
  ];
  return plan(steps, (results) => ({ shipmentId, order: (results.at(-1) as ResultOf<typeof view>)[0]!.order }));
}


/** The shipment routine on an open transaction: read with the order, then the shipment, locked; decide; change. */
export async function applyShipmentStatus(
  tx: StoreTx,
  shipmentId: string,
  requested: ShipmentStatus,
  source: ShipmentSource,
  report: ShipmentReport = {},
): Promise<ShipmentApplied> {
  const store = sql`${tx.storeId}::uuid`;
  const reading = await readOn(tx, (q) => shipmentReadingPlan(q, store, { id: shipmentId }, true));
  if (!reading) throw new AppError("NOT_FOUND", "No such shipment in this store.", { reason: "unknown_shipment" });
  return changeOn(tx, (q) => {
    const made = shipmentChange(q, store, reading, requested, source, report);
    return plan(made.steps, () => made.applied);
  });
}
