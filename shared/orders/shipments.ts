import { uuidFrom } from "../db/ids";
import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { isCourierError, type Courier, type CreatedShipment } from "../shipping/courier";
import { conflict, lockOrder, refuseClosed } from "./actions";
import { recomputeOrderStatuses } from "./routines";
import { decideShipmentStatus, type OrderStatuses, type ShipmentStatus } from "./status";
import { addTask } from "./tasks";

/**
 * Shipments (docs/order-status.md, "Shipments"): a parcel handed to a courier, and the one routine that
 * moves a shipment's status whatever reports it (the merchant, a courier webhook, the tracking job).
 *
 * Lock order, shared with every order writer: payment attempts, then the order, then its parcels and
 * shipments. `applyShipmentStatus` therefore takes the order before the shipment, so a merchant's RTO mark
 * and a courier's webhook for the same parcel queue instead of deadlocking.
 */

export type ShipmentSource = "merchant" | "webhook" | "tracking";

export interface FulfilInput {
  orderId: string;
  parcelId: string;
  /** The merchant's own courier: the tracking number they were given. Absent: book the store's courier. */
  tracking?: { awb: string; courierName: string; trackingUrl?: string | undefined } | undefined;
}

interface ParcelLine {
  flId: string;
  variantId: string | null;
  levelId: string | null;
  title: string;
  sku: string | null;
  quantity: number;
  reserved: number;
  unitPrice: number;
  onHand: number;
  levelReserved: number;
}

const SHIPPABLE: ReadonlySet<string> = new Set(["paid", "partially_refunded"]);
/** A parcel with a shipment in one of these is on its way or there: it is not shipped again. */
const LIVE_SHIPMENT = ["pending", "in_transit", "delivered", "rto_initiated"];

/**
 * Ships one parcel of a paid order: books the store's courier (or records the merchant's own tracking
 * number), writes the shipment, takes its units out of the location's stock (reserved units first, then
 * what is on hand for pre-ordered units that were backordered) with an adjustment row each, and
 * recomputes the order. The courier is called inside the transaction with an id derived from the parcel
 * and the shipment's number, so a retry after a lost commit books the same shipment, not a second one.
 */
export async function fulfilParcel(
  tx: StoreTx,
  input: FulfilInput,
  courier: Courier | undefined,
  memberId: string | null,
): Promise<{ shipmentId: string; order: OrderStatuses }> {
  const order = await lockOrder(tx, input.orderId);
  refuseClosed(order, "fulfilled");
  if (!SHIPPABLE.has(order.paymentStatus)) {
    throw conflict("not_paid", `Order #${order.number} is ${order.paymentStatus.replace(/_/g, " ")}: it ships once it is paid (mark it as paid first if the money came another way).`);
  }
  const { rows: parcels } = await tx.$client.query<{ id: string; location_id: string | null; location_name: string | null; origin_state: string | null; subtotal: string; discount: string; shipped: { awb: string; status: string }[]; count: number }>(
    `select f.id, f.location_id, l.name as location_name, f.origin_state, f.subtotal::text, f.discount::text,
       coalesce((select json_agg(json_build_object('awb', s.awb, 'status', s.status)) from shipment s
                 where s.store_id = f.store_id and s.fulfillment_order_id = f.id and s.status = any($3)), '[]'::json) as shipped,
       (select count(*)::int from shipment s where s.store_id = f.store_id and s.fulfillment_order_id = f.id) as count
     from fulfillment_order f left join location l on l.store_id = f.store_id and l.id = f.location_id
     where f.store_id = $1 and f.order_id = $2 and f.id = $4 for update of f`,
    [tx.storeId, order.id, LIVE_SHIPMENT, input.parcelId],
  );
  const parcel = parcels[0];
  if (!parcel) throw new AppError("NOT_FOUND", "This order has no such parcel.", { issues: [{ path: "parcelId", message: "not a parcel of this order" }] });
  if (parcel.shipped.length > 0) {
    throw conflict("already_shipped", `This parcel already has shipment ${parcel.shipped[0]!.awb} (${parcel.shipped[0]!.status.replace(/_/g, " ")}).`);
  }
  if (!parcel.location_id) throw conflict("no_location", "This parcel's location was deleted: there is nowhere to ship it from.");
  const lines = await lockParcelStock(tx, parcel.id, parcel.location_id);
  const short = lines.filter((l) => l.levelId === null || l.onHand < l.quantity || l.onHand - l.levelReserved < l.quantity - l.reserved);
  if (short.length > 0) {
    throw new AppError("CONFLICT", "Some units of this parcel are not in stock at its location yet.", {
      reason: "not_in_stock",
      issues: short.map((l) => ({ path: `lines.${l.flId}`, message: `${l.title}: ${l.quantity} to ship, ${Math.max(0, l.onHand - l.levelReserved + l.reserved)} in stock for it` })),
    });
  }
  const shipmentId = await uuidFrom(`${parcel.id}:shipment:${parcel.count + 1}`);
  const booked = input.tracking
    ? { provider: "manual", created: { awb: input.tracking.awb, courierName: input.tracking.courierName, trackingUrl: input.tracking.trackingUrl, status: "pending" as const } }
    : await book(courier, tx, shipmentId, order, parcel, lines);
  const { rowCount } = await tx.$client.query(
    `insert into shipment (id, store_id, order_id, fulfillment_order_id, provider, awb, provider_ref, courier_name, tracking_url, status)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) on conflict (store_id, provider, awb) do nothing`,
    [shipmentId, tx.storeId, order.id, parcel.id, booked.provider, booked.created.awb, booked.created.providerRef ?? null, booked.created.courierName, booked.created.trackingUrl ?? null, booked.created.status],
  );
  if (rowCount === 0) throw conflict("awb_taken", `Tracking number ${booked.created.awb} is already on another shipment of this store.`);
  await tx.$client.query("insert into shipment_event (store_id, shipment_id, status, source) values ($1, $2, $3, 'merchant')", [tx.storeId, shipmentId, booked.created.status]);
  await takeStock(tx, lines, parcel.location_id, order.number, memberId);
  await emit(tx, "shipment.created", { orderId: order.id, shipmentId, parcelId: parcel.id, awb: booked.created.awb, courierName: booked.created.courierName });
  return { shipmentId, order: await recomputeOrderStatuses(tx, order.id) };
}

async function book(
  courier: Courier | undefined,
  tx: StoreTx,
  shipmentId: string,
  order: { id: string; number: number },
  parcel: { location_id: string | null; location_name: string | null; origin_state: string | null; subtotal: string; discount: string },
  lines: ParcelLine[],
): Promise<{ provider: string; created: CreatedShipment }> {
  if (!courier) {
    throw new AppError("BAD_REQUEST", "No courier can be booked from here: give the tracking number of the courier you used.", {
      issues: [{ path: "tracking", message: "required when the store's courier cannot be booked" }],
    });
  }
  const { rows } = await tx.$client.query<{ email: string; phone: string | null; shipping_address: Record<string, string>; currency: string }>(
    "select email, phone, shipping_address, currency from shop_order where store_id = $1 and id = $2",
    [tx.storeId, order.id],
  );
  const o = rows[0]!;
  const a = o.shipping_address;
  try {
    const created = await courier.createShipment({
      shipmentId,
      orderId: order.id,
      orderNumber: String(order.number),
      pickup: { locationId: parcel.location_id!, name: parcel.location_name ?? "Primary", ...(parcel.origin_state ? { state: parcel.origin_state } : {}) },
      shipTo: {
        name: a.name ?? "",
        line1: a.line1 ?? "",
        ...(a.line2 ? { line2: a.line2 } : {}),
        city: a.city ?? "",
        state: a.state ?? "",
        postalCode: a.postalCode ?? "",
        country: a.country ?? "IN",
        ...(o.phone ? { phone: o.phone } : {}),
        email: o.email,
      },
      items: lines.map((l) => ({ name: l.title, ...(l.sku ? { sku: l.sku } : {}), quantity: l.quantity, unitPrice: l.unitPrice })),
      value: Number(parcel.subtotal) - Number(parcel.discount),
      currency: o.currency,
      paymentMode: "prepaid",
      weightGrams: 500 * lines.reduce((n, l) => n + l.quantity, 0),
    });
    return { provider: courier.provider, created };
  } catch (e) {
    if (!isCourierError(e)) throw e;
    const message = `The courier (${e.provider}) refused the booking: ${e.message}`;
    if (e.retryable) throw new AppError("SERVICE_UNAVAILABLE", `${message}. Nothing was shipped; try again in a minute.`, { reason: `courier_${e.kind}` });
    throw new AppError("CONFLICT", `${message}. Nothing was shipped.`, { reason: `courier_${e.kind}`, issues: [{ path: e.field ?? "parcelId", message: e.message }] });
  }
}

/** The parcel's lines with their stock row at its location, the stock rows locked in id order (as checkout locks them). */
async function lockParcelStock(tx: StoreTx, parcelId: string, locationId: string): Promise<ParcelLine[]> {
  const { rows } = await tx.$client.query<ParcelLine>(
    `select fl.id as "flId", ol.variant_id as "variantId", il.id as "levelId",
       ol.product_title || case when ol.variant_title = 'Default' then '' else ' — ' || ol.variant_title end as title,
       ol.sku, fl.quantity, fl.reserved, ol.unit_price::float8 as "unitPrice",
       coalesce(il.on_hand, 0) as "onHand", coalesce(il.reserved, 0) as "levelReserved"
     from fulfillment_order_line fl
     join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
     left join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = $3
     where fl.store_id = $1 and fl.fulfillment_order_id = $2
     order by il.id nulls last, fl.id for update of fl`,
    [tx.storeId, parcelId, locationId],
  );
  const levelIds = [...new Set(rows.map((r) => r.levelId).filter((id): id is string => id !== null))].sort();
  if (levelIds.length === 0) return rows;
  const { rows: locked } = await tx.$client.query<{ id: string; on_hand: number; reserved: number }>(
    "select id, on_hand, reserved from inventory_level where store_id = $1 and id = any($2::uuid[]) order by id for update",
    [tx.storeId, levelIds],
  );
  const fresh = new Map(locked.map((l) => [l.id, l]));
  return rows.map((r) => (r.levelId ? { ...r, onHand: fresh.get(r.levelId)!.on_hand, levelReserved: fresh.get(r.levelId)!.reserved } : r));
}

/** The shipped units leave the location: on hand down by the quantity, reserved down by what the parcel held. */
async function takeStock(tx: StoreTx, lines: ParcelLine[], locationId: string, orderNumber: number, memberId: string | null): Promise<void> {
  const items = lines.map((l) => ({ fl: l.flId, level: l.levelId, variant: l.variantId, quantity: l.quantity, reserved: l.reserved }));
  await tx.$client.query(
    `with x as (select * from jsonb_to_recordset($2::jsonb) as x(fl uuid, level uuid, variant uuid, quantity int, reserved int)),
     levels as (
       update inventory_level il set on_hand = il.on_hand - x.quantity, reserved = greatest(il.reserved - x.reserved, 0), updated_at = now()
       from x where il.store_id = $1 and il.id = x.level
       returning il.variant_id, il.on_hand, x.quantity),
     adjusted as (
       insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note, member_id)
       select $1, variant_id, $3, -quantity, on_hand, 'shipped', 'Order #' || $4::text, $5 from levels)
     update fulfillment_order_line fl set reserved = 0 from x where fl.store_id = $1 and fl.id = x.fl`,
    [tx.storeId, JSON.stringify(items), locationId, orderNumber, memberId],
  );
}

/** The parcel's units go back on the shelf, held for the order again: a shipment cancelled before pickup. */
async function putBackStock(tx: StoreTx, shipmentId: string): Promise<void> {
  const { rows: items } = await tx.$client.query<{ fl: string; level: string; quantity: number; location_id: string; number: number }>(
    `select fl.id as fl, il.id as level, fl.quantity, f.location_id, o.number
     from shipment s
     join fulfillment_order f on f.store_id = s.store_id and f.id = s.fulfillment_order_id
     join shop_order o on o.store_id = s.store_id and o.id = s.order_id
     join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id
     join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
     join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
     where s.store_id = $1 and s.id = $2
     order by il.id for update of il`,
    [tx.storeId, shipmentId],
  );
  if (items.length === 0) return;
  await tx.$client.query(
    `with x as (select * from jsonb_to_recordset($2::jsonb) as x(fl uuid, level uuid, quantity int)),
     levels as (
       update inventory_level il set on_hand = il.on_hand + x.quantity, reserved = il.reserved + x.quantity, updated_at = now()
       from x where il.store_id = $1 and il.id = x.level returning il.variant_id, il.on_hand, x.quantity),
     adjusted as (
       insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note)
       select $1, variant_id, $3, quantity, on_hand, 'shipment_cancelled', 'Order #' || $4::text from levels)
     update fulfillment_order_line fl set reserved = x.quantity from x where fl.store_id = $1 and fl.id = x.fl`,
    [tx.storeId, JSON.stringify(items.map(({ fl, level, quantity }) => ({ fl, level, quantity }))), items[0]!.location_id, items[0]!.number],
  );
}

export interface ShipmentApplied {
  orderId: string;
  shipmentId: string;
  applied: boolean;
  status: ShipmentStatus;
  order: OrderStatuses;
}

/**
 * The only writer of a shipment's status: forward only (decideShipmentStatus), each move kept as a
 * shipment_event, then the order recomputed. A parcel turning back (RTO) writes `order.rto` and an open
 * RTO task for the merchant, once per shipment; a shipment cancelled before pickup puts its units back,
 * held for the order.
 */
export async function applyShipmentStatus(
  tx: StoreTx,
  shipmentId: string,
  requested: ShipmentStatus,
  source: ShipmentSource,
  report: { providerStatus?: string | undefined; occurredAt?: string | undefined } = {},
): Promise<ShipmentApplied> {
  const { rows: found } = await tx.$client.query<{ order_id: string }>("select order_id from shipment where store_id = $1 and id = $2", [tx.storeId, shipmentId]);
  if (!found[0]) throw new AppError("NOT_FOUND", "No such shipment in this store.", { reason: "unknown_shipment" });
  await tx.$client.query("select id from shop_order where store_id = $1 and id = $2 for update", [tx.storeId, found[0].order_id]);
  const { rows } = await tx.$client.query<{ order_id: string; status: ShipmentStatus; awb: string; number: number }>(
    `select s.order_id, s.status, s.awb, o.number from shipment s join shop_order o on o.store_id = s.store_id and o.id = s.order_id
     where s.store_id = $1 and s.id = $2 for update of s`,
    [tx.storeId, shipmentId],
  );
  const row = rows[0]!;
  const decision = decideShipmentStatus(row.status, requested);
  if (!decision.apply) {
    return { orderId: row.order_id, shipmentId, applied: false, status: row.status, order: await recomputeOrderStatuses(tx, row.order_id) };
  }
  const occurredAt = report.occurredAt && !Number.isNaN(Date.parse(report.occurredAt)) ? new Date(report.occurredAt) : new Date();
  const providerStatus = report.providerStatus?.slice(0, 200) ?? null;
  await tx.$client.query(
    "update shipment set status = $3, provider_status = coalesce($4, provider_status), status_at = $5, updated_at = now() where store_id = $1 and id = $2",
    [tx.storeId, shipmentId, decision.to, providerStatus, occurredAt],
  );
  await tx.$client.query(
    "insert into shipment_event (store_id, shipment_id, status, provider_status, source, occurred_at) values ($1, $2, $3, $4, $5, $6)",
    [tx.storeId, shipmentId, decision.to, providerStatus, source, occurredAt],
  );
  if (decision.to === "rto_initiated" || decision.to === "rto_delivered") {
    const title = `Order #${row.number}: parcel ${row.awb} is coming back to you (RTO). Check it in when it arrives, then refund or reship.`;
    if (await addTask(tx, { kind: "rto", orderId: row.order_id, subjectId: shipmentId, title })) {
      await emit(tx, "order.rto", { orderId: row.order_id, shipmentId, awb: row.awb, status: decision.to, source });
    }
  }
  if (decision.to === "cancelled") await putBackStock(tx, shipmentId);
  await emit(tx, `shipment.${decision.to}`, { orderId: row.order_id, shipmentId, awb: row.awb, source });
  return { orderId: row.order_id, shipmentId, applied: true, status: decision.to, order: await recomputeOrderStatuses(tx, row.order_id) };
}

/** The shipment a courier's tracking number names, in this store. */
export async function shipmentByAwb(tx: StoreTx, provider: string, awb: string): Promise<{ id: string; orderId: string } | null> {
  const { rows } = await tx.$client.query<{ id: string; order_id: string }>(
    "select id, order_id from shipment where store_id = $1 and provider = $2 and awb = $3",
    [tx.storeId, provider, awb],
  );
  return rows[0] ? { id: rows[0].id, orderId: rows[0].order_id } : null;
}
