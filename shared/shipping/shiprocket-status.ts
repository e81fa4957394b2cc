/**
 * Shiprocket's shipment status codes (the `shipment_status_id` of its webhooks and the `shipment_status` of
 * its tracking API) and what each means for our shipment row. docs/shipping.md has the table.
 */
import type { ShipmentStatus } from "#shared/rules/status";

/** The codes we act on. Anything else (pickup scheduled, undelivered, lost, …) moves nothing. */
export const SHIPROCKET_STATUS: Readonly<Record<number, { name: string; status: ShipmentStatus }>> = {
  6: { name: "SHIPPED", status: "in_transit" },
  7: { name: "DELIVERED", status: "delivered" },
  8: { name: "CANCELED", status: "cancelled" },
  9: { name: "RTO INITIATED", status: "rto_initiated" },
  10: { name: "RTO DELIVERED", status: "rto_delivered" },
  14: { name: "RTO ACKNOWLEDGED", status: "rto_delivered" },
  17: { name: "OUT FOR DELIVERY", status: "in_transit" },
  18: { name: "IN TRANSIT", status: "in_transit" },
  22: { name: "DELAYED", status: "in_transit" },
  38: { name: "REACHED AT DESTINATION HUB", status: "in_transit" },
  39: { name: "MISROUTED", status: "in_transit" },
  40: { name: "RTO NDR", status: "rto_initiated" },
  41: { name: "RTO OFD", status: "rto_initiated" },
  42: { name: "PICKED UP", status: "in_transit" },
  45: { name: "CANCELLED BEFORE DISPATCHED", status: "cancelled" },
  46: { name: "RTO IN TRANSIT", status: "rto_initiated" },
  48: { name: "REACHED WAREHOUSE", status: "in_transit" },
  50: { name: "IN FLIGHT", status: "in_transit" },
  51: { name: "HANDOVER TO COURIER", status: "in_transit" },
  75: { name: "RTO LOCK", status: "rto_initiated" },
  78: { name: "REACHED BACK AT SELLER CITY", status: "rto_initiated" },
};

/** Codes Shiprocket sends that we deliberately leave alone (for the docs and the tests; not exhaustive). */
export const SHIPROCKET_UNMAPPED: Readonly<Record<number, string>> = {
  1: "AWB ASSIGNED",
  2: "LABEL GENERATED",
  3: "PICKUP SCHEDULED",
  4: "PICKUP QUEUED",
  5: "MANIFEST GENERATED",
  12: "LOST",
  13: "PICKUP ERROR",
  15: "PICKUP RESCHEDULED",
  16: "CANCELLATION REQUESTED",
  19: "OUT FOR PICKUP",
  20: "PICKUP EXCEPTION",
  21: "UNDELIVERED",
  23: "PARTIAL DELIVERED",
  24: "DESTROYED",
  25: "DAMAGED",
};

export const normalName = (name: string) => name.trim().toUpperCase().replace(/[_\s]+/g, " ");

const BY_NAME: ReadonlyMap<string, ShipmentStatus> = new Map([
  ...Object.values(SHIPROCKET_STATUS).map(({ name, status }) => [name, status] as const),
  ["CANCELLED", "cancelled"],
  ["RTO IN INTRANSIT", "rto_initiated"],
  ["REACHED AT DESTINATION", "in_transit"],
]);

/** Our status for a Shiprocket code (or, when it sent none, its name); undefined for one we do not act on. */
export function shipmentStatusOf(code: number | undefined, name: string | undefined): ShipmentStatus | undefined {
  if (code !== undefined && Number.isInteger(code)) return SHIPROCKET_STATUS[code]?.status;
  return name ? BY_NAME.get(normalName(name)) : undefined;
}

/** Shiprocket's words for a code, as our shipment row keeps them (at most 200 characters). */
export function providerStatusOf(code: number | undefined, name: string | undefined): string {
  const words = name?.trim() ? normalName(name) : code !== undefined ? (SHIPROCKET_STATUS[code]?.name ?? SHIPROCKET_UNMAPPED[code] ?? `STATUS ${code}`) : "UNKNOWN";
  return words.slice(0, 200);
}

/**
 * Shiprocket's timestamps are India time without a zone: `23 05 2023 11:43:52` in webhooks,
 * `2023-05-23 11:43:52` in tracking. ISO 8601 with +05:30, or undefined when it is neither.
 */
export function istToIso(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const m = /^(\d{2}) (\d{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text.trim()) ?? /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return undefined;
  const [, a = "", b = "", c = "", hh = "", mm = "", ss = ""] = m;
  const [year, month, day] = a.length === 4 ? [a, b, c] : [c, b, a];
  const iso = `${year}-${month}-${day}T${hh}:${mm}:${ss}+05:30`;
  return Number.isNaN(Date.parse(iso)) ? undefined : iso;
}
