import { and, asc, desc, eq, ne, type SQL } from "drizzle-orm";
import { AppError } from "../core/errors";
import { plan, type Plan } from "../db/plan";
import { fulfillmentOrder, fulfillmentOrderLine, location, orderLine, shipment, shopOrder } from "../db/schema";
import type { Q } from "../db/steps";
import { PACKING_SLIP_COLUMNS, formatDocumentDate, type DocumentModel } from "../documents/model";
import { indianDate } from "../rules/gst-rates";
import { INDIAN_STATE_NAMES, isIndianStateCode } from "../rules/gst";

/**
 * A parcel's packing slip (issue 22 item 6): the paper that goes in the box, so what it prints is what the
 * packer needs and the shopper may see: the store and the location it ships from, the order's number and
 * date, the ship-to name, address and phone, each line of that parcel with its SKU, variant and quantity,
 * the units in all, the courier and AWB once shipped, and a box for a note. No prices. A parcel not yet
 * shipped has one too: merchants print it before packing.
 */

export const parcelNotFound = () => new AppError("NOT_FOUND", "Parcel not found on this order.");

type Text = string | null;

interface SlipLocation {
  name: string;
  city: Text;
  state: Text;
  legalName: Text;
  addressLine1: Text;
  addressLine2: Text;
  postalCode: Text;
}

export interface PackingSlipReading {
  orderNumber: number;
  placedAt: Date;
  phone: string | null;
  shippingAddress: Record<string, string>;
  /** The parcel's place among the order's parcels (1-based) and their count. */
  position: number;
  parcels: number;
  /** Its location (null for a backordered parcel), with the legal identity the location's invoices print. */
  location: SlipLocation | null;
  lines: { productTitle: string; variantTitle: string; sku: string | null; quantity: number }[];
  /** The parcel's shipment not cancelled, newest: its courier and tracking number (AWB). */
  shipment: { awb: string; courierName: string | null; provider: string } | null;
}

/** What a parcel's slip prints, read in one round trip; a parcel not of this order (or store) is not found. */
export function packingSlipPlan(q: Q, store: SQL, p: { orderId: string; parcelId: string }): Plan<PackingSlipReading> {
  const ofOrder = and(eq(fulfillmentOrder.storeId, store), eq(fulfillmentOrder.orderId, p.orderId));
  return plan(
    [
      q
        .select({
          orderNumber: shopOrder.number,
          placedAt: shopOrder.placedAt,
          phone: shopOrder.phone,
          shippingAddress: shopOrder.shippingAddress,
          locationName: location.name,
          city: location.city,
          state: location.state,
          legalName: location.legalName,
          addressLine1: location.addressLine1,
          addressLine2: location.addressLine2,
          postalCode: location.postalCode,
        })
        .from(fulfillmentOrder)
        .innerJoin(shopOrder, and(eq(shopOrder.storeId, fulfillmentOrder.storeId), eq(shopOrder.id, fulfillmentOrder.orderId)))
        .leftJoin(location, and(eq(location.storeId, fulfillmentOrder.storeId), eq(location.id, fulfillmentOrder.locationId)))
        .where(and(ofOrder, eq(fulfillmentOrder.id, p.parcelId))),
      q.select({ id: fulfillmentOrder.id }).from(fulfillmentOrder).where(ofOrder).orderBy(asc(fulfillmentOrder.position), asc(fulfillmentOrder.id)),
      q
        .select({ productTitle: orderLine.productTitle, variantTitle: orderLine.variantTitle, sku: orderLine.sku, quantity: fulfillmentOrderLine.quantity })
        .from(fulfillmentOrderLine)
        .innerJoin(orderLine, and(eq(orderLine.storeId, fulfillmentOrderLine.storeId), eq(orderLine.id, fulfillmentOrderLine.orderLineId)))
        .where(and(eq(fulfillmentOrderLine.storeId, store), eq(fulfillmentOrderLine.fulfillmentOrderId, p.parcelId), eq(orderLine.orderId, p.orderId)))
        .orderBy(asc(orderLine.position), asc(fulfillmentOrderLine.id)),
      q
        .select({ awb: shipment.awb, courierName: shipment.courierName, provider: shipment.provider })
        .from(shipment)
        .where(and(eq(shipment.storeId, store), eq(shipment.orderId, p.orderId), eq(shipment.fulfillmentOrderId, p.parcelId), ne(shipment.status, "cancelled")))
        .orderBy(desc(shipment.createdAt), desc(shipment.id))
        .limit(1),
    ] as const,
    ([[row], parcels, lines, [shipped]]) => {
      if (!row) throw parcelNotFound();
      const { locationName, orderNumber, placedAt, phone, shippingAddress, ...identity } = row;
      return {
        orderNumber,
        placedAt,
        phone,
        shippingAddress,
        position: parcels.findIndex((x) => x.id === p.parcelId) + 1,
        parcels: parcels.length,
        location: locationName === null ? null : { name: locationName, ...identity },
        lines,
        shipment: shipped ?? null,
      };
    },
  );
}

const stateName = (code: Text | undefined) => (code && isIndianStateCode(code) ? INDIAN_STATE_NAMES[code] : null);
const present = (parts: (Text | undefined)[]) => parts.filter((x): x is string => Boolean(x));
const joined = (parts: (Text | undefined)[], separator = " ") => present(parts).join(separator);

/** Where the parcel ships from: the location's registered legal name and address when it has them, else its name and place. */
function shipFromLines(l: SlipLocation | null, storeName: string): string[] {
  if (l === null) return ["Not yet allocated to a location"];
  if (!l.legalName || !l.addressLine1) return present([l.name, joined([l.city, stateName(l.state)])]);
  const legalName = l.legalName === storeName ? null : l.legalName;
  return present([legalName, l.addressLine1, l.addressLine2, joined([l.city, l.postalCode]), joined([stateName(l.state), "India"], ", ")]);
}

/** The slip as a document (shared/documents/): "Ship from" the store at its location, "Ship to" the order's address. */
export function packingSlipDocument(slip: PackingSlipReading, storeName: string): DocumentModel {
  const a = slip.shippingAddress;
  const country = a["country"] === "IN" ? "India" : a["country"];
  const shipTo = present([a["line1"], a["line2"], joined([a["city"], a["postalCode"]]), joined([stateName(a["state"]), country], ", ")]);
  const units = slip.lines.reduce((sum, line) => sum + line.quantity, 0);
  const date = indianDate(slip.placedAt);
  return {
    title: "Packing slip",
    number: `${slip.orderNumber}-${slip.position}`,
    date,
    partyHeadings: { supplier: "Ship from", recipient: "Ship to" },
    supplier: { name: storeName, address: shipFromLines(slip.location, storeName) },
    recipient: { name: a["name"] ?? "", address: [...shipTo, ...(slip.phone ? [`Phone: ${slip.phone}`] : [])] },
    references: [
      { label: "Order", value: `#${slip.orderNumber} of ${formatDocumentDate(date)}` },
      { label: "Parcel", value: `${slip.position} of ${slip.parcels}` },
      ...(slip.shipment ? [{ label: "Courier", value: slip.shipment.courierName ?? slip.shipment.provider }, { label: "AWB", value: slip.shipment.awb }] : []),
      { label: "Units", value: String(units) },
    ],
    columns: PACKING_SLIP_COLUMNS,
    lines: slip.lines.map((line) => ({
      description: line.variantTitle === "Default" ? line.productTitle : `${line.productTitle} — ${line.variantTitle}`,
      sku: line.sku,
      quantity: line.quantity,
    })),
    noteArea: "Notes",
  };
}
