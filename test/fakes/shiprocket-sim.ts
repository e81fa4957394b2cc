/**
 * The memory behind the local Shiprocket server (shiprocket-server.ts): tokens, ad-hoc orders with their
 * shipment, AWBs, scans a test makes happen, and the tracking webhooks Shiprocket would send for them.
 */
import { SHIPROCKET_STATUS, SHIPROCKET_UNMAPPED } from "#shared/shipping/shiprocket-status";

export interface SimScan {
  date: string;
  status: string;
  activity: string;
  location: string;
  "sr-status": string;
  "sr-status-label": string;
}

export interface SimShipment {
  id: number;
  orderId: number;
  channelOrderId: string;
  pincode: string;
  awb: string | null;
  courier: string | null;
  /** Shiprocket's shipment status code; 0 before an AWB. */
  statusId: number;
  /** Newest first, as the tracking API lists them. */
  scans: SimScan[];
  lastScanAt?: number;
}

export interface SimOrder {
  id: number;
  channelOrderId: string;
  status: string;
  pickupLocation: string;
  /** The create request's body as received. */
  request: Record<string, unknown>;
  shipment: SimShipment;
}

/** What Shiprocket POSTs to the webhook URL set in its panel. */
export interface SimWebhook {
  body: string;
  headers: Record<string, string>;
}

const two = (n: number) => String(n).padStart(2, "0");

/** India time as Shiprocket writes it: `DD MM YYYY HH:mm:ss` (webhooks) or `YYYY-MM-DD HH:mm:ss` (tracking). */
export function istText(ms: number, style: "webhook" | "tracking"): string {
  const d = new Date(ms + 330 * 60_000);
  const [y, m, day, h, min, s] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  const time = `${two(h)}:${two(min)}:${two(s)}`;
  return style === "webhook" ? `${two(day)} ${two(m)} ${y} ${time}` : `${y}-${two(m)}-${two(day)} ${time}`;
}

export function statusName(statusId: number): string {
  return SHIPROCKET_STATUS[statusId]?.name ?? SHIPROCKET_UNMAPPED[statusId] ?? (statusId === 0 ? "NEW" : `STATUS ${statusId}`);
}

export class ShiprocketState {
  readonly orders = new Map<number, SimOrder>();
  /** Bearer token → when it stops working (ms). */
  readonly tokens = new Map<string, number>();
  private nextId = 100_000_000;

  constructor(
    private readonly webhookToken: string,
    readonly now: () => number,
  ) {}

  id(): number {
    return this.nextId++;
  }

  orderByChannelId(channelOrderId: string): SimOrder | undefined {
    return [...this.orders.values()].find((o) => o.channelOrderId === channelOrderId);
  }

  shipment(id: number): SimShipment | undefined {
    return [...this.orders.values()].find((o) => o.shipment.id === id)?.shipment;
  }

  byAwb(awb: string): SimOrder | undefined {
    return [...this.orders.values()].find((o) => o.shipment.awb === awb);
  }

  assign(shipment: SimShipment, courier: string): void {
    shipment.awb = String(Math.floor(1e11 + Math.random() * 9e11));
    shipment.courier = courier;
    shipment.statusId = 1;
  }

  /** The courier scans the parcel: its status moves to `statusId`. Answers the webhook Shiprocket sends. */
  scan(awb: string, statusId: number, location = "Bhiwandi Hub (Maharashtra)"): SimWebhook {
    const order = this.byAwb(awb);
    if (!order) throw new Error(`no shipment with AWB ${awb}`);
    const s = order.shipment;
    s.statusId = statusId;
    s.lastScanAt = this.now();
    if (statusId === 8 || statusId === 45) order.status = "CANCELED";
    s.scans.unshift({ date: istText(this.now(), "tracking"), status: statusName(statusId), activity: statusName(statusId), location, "sr-status": String(statusId), "sr-status-label": statusName(statusId) });
    return this.webhook(awb);
  }

  /** The webhook for a shipment's latest scan, as Shiprocket sends it (and re-sends it). */
  webhook(awb: string): SimWebhook {
    const order = this.byAwb(awb);
    if (!order) throw new Error(`no shipment with AWB ${awb}`);
    const s = order.shipment;
    const latest = s.scans[0];
    const body = JSON.stringify({
      awb,
      courier_name: s.courier,
      current_status: statusName(s.statusId),
      current_status_id: s.statusId,
      shipment_status: statusName(s.statusId),
      shipment_status_id: s.statusId,
      current_timestamp: istText(s.lastScanAt ?? this.now(), "webhook"),
      order_id: order.channelOrderId,
      sr_order_id: order.id,
      awb_assigned_date: latest?.date ?? null,
      etd: null,
      scans: [...s.scans].reverse(),
      is_return: 0,
      channel_id: 1,
      pod_status: "",
      pod: "Not Available",
    });
    return { body, headers: { "content-type": "application/json", "x-api-key": this.webhookToken } };
  }
}
