import { INDIAN_STATE_NAMES, isIndianStateCode, UTGST_TERRITORIES } from "../rules/gst";
import { FULFILLMENT_WORDS, PAYMENT_WORDS } from "../rules/status";
import { formatMoney } from "../storefront/catalog";
import type { LineToNotify, ParcelToNotify } from "./statements";

/**
 * The shopper's messages, one per template (shared/jobs/routing.ts NOTIFICATION_TEMPLATES), in one
 * template system: a template says what happened in a few plain sentences (its subject and body); the
 * layout (`renderEmail`) adds what every order message carries (the items with their variant, quantity
 * and price, each parcel with its GST split and tracking, the order's totals, the address, the payment
 * and delivery status in words, the order link) and answers a text part and an HTML part with the same
 * facts. The HTML is a 600 px table layout with inline styles and a hidden preheader (mail clients strip
 * `<style>` and run no script); every value reaches it through `h`, which escapes it. docs/events.md,
 * "The shopper's messages", says what each one says.
 */
export interface OrderDetail {
  status: string;
  paymentStatus: string;
  fulfillmentStatus: string;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  address: Readonly<Record<string, string>>;
  lines: readonly LineToNotify[];
  parcels: readonly ParcelToNotify[];
}

/** A logo as a message shows it: the image's absolute http(s) URL and its size in pixels (for its shape). */
export interface EmailLogo {
  url: string;
  width: number;
  height: number;
}

/** The box the logo fits in at the top of a message (CSS pixels); its image should be twice as wide for sharp screens. */
export const LOGO_BOX = { width: 160, height: 48 } as const;

/**
 * The logo's size fitted into LOGO_BOX, its shape kept (the attributes are what Outlook sizes by), or null
 * when it cannot be shown: no logo, or a URL that is not http(s).
 */
function logoBoxOf(logo: EmailLogo | undefined): { width: number; height: number } | null {
  if (!logo || !/^https?:\/\//i.test(logo.url) || !(logo.width > 0 && logo.height > 0)) return null;
  const scale = Math.min(LOGO_BOX.width / logo.width, LOGO_BOX.height / logo.height);
  return { width: Math.max(1, Math.round(logo.width * scale)), height: Math.max(1, Math.round(logo.height * scale)) };
}

export interface NotificationFacts {
  storeName: string;
  /** The store's published logo, when it has one: an absolute URL of its image and the image's size. */
  logo?: EmailLogo | undefined;
  orderNumber: number;
  email: string;
  total: number;
  currency: string;
  /** From the event: a refund's amount, a return's number, a reminder's deadline. */
  amount?: number | undefined;
  returnNumber?: number | undefined;
  expiresAt?: string | undefined;
  reason?: string | undefined;
  /** The order's page for this shopper (`/orders/<id>?k=`), when the store has a verified domain. */
  orderUrl?: string | undefined;
  /** A parcel's tax invoice page for this shopper (`/orders/<id>/invoices/<invoiceId>?k=`), when there is an order link. */
  invoiceUrl?: ((invoiceId: string) => string) | undefined;
  /** What the message shows of the order; without it, the message is its sentences alone. */
  order?: OrderDetail | undefined;
}

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

type Lines = (f: NotificationFacts, money: (minor: number) => string) => { subject: string; body: string[] };

const TEMPLATES: Readonly<Record<string, Lines>> = {
  order_confirmation: (f, m) => ({ subject: `Order #${f.orderNumber} received`, body: [`Thank you for your order #${f.orderNumber} of ${m(f.total)}.`, "We will write again when it is paid and when it ships."] }),
  payment_received: (f, m) => ({ subject: `Payment received for order #${f.orderNumber}`, body: [`We have received your payment of ${m(f.total)} for order #${f.orderNumber}.`, "We will let you know when it ships."] }),
  order_shipped: (f) => ({ subject: `Order #${f.orderNumber} has shipped`, body: [`Your order #${f.orderNumber} is on its way.`, "Its tracking numbers are on your order page."] }),
  order_delivered: (f) => ({ subject: `Order #${f.orderNumber} was delivered`, body: [`Your order #${f.orderNumber} was delivered. We hope you enjoy it.`] }),
  order_cancelled: (f) => ({ subject: `Order #${f.orderNumber} was cancelled`, body: [`Your order #${f.orderNumber} was cancelled.`, ...(f.reason ? [`Reason: ${f.reason}`] : [])] }),
  order_expired: (f) => ({ subject: `Order #${f.orderNumber} expired unpaid`, body: [`We did not receive payment for order #${f.orderNumber} in time, so it was cancelled and its items released.`] }),
  order_refunded: (f, m) => ({ subject: `Refund for order #${f.orderNumber}`, body: [`We have refunded ${m(f.amount ?? f.total)} for order #${f.orderNumber}.`, "Depending on your bank it can take a few days to show."] }),
  payment_reminder: (f, m) => ({ subject: `Order #${f.orderNumber} is waiting for your payment`, body: [`Order #${f.orderNumber} (${m(f.total)}) is reserved for you until ${f.expiresAt ?? "soon"}.`, "Pay by then to keep it."] }),
  balance_requested: (f, m) => ({ subject: `Your pre-order #${f.orderNumber} is ready`, body: [`Your pre-ordered items of order #${f.orderNumber} are in stock. Please pay the balance of ${m(f.amount ?? 0)} to have them shipped.`] }),
  balance_reminder: (f, m) => ({ subject: `Reminder: the balance of order #${f.orderNumber}`, body: [`The balance of ${m(f.amount ?? 0)} for order #${f.orderNumber} is still due.`] }),
  return_requested: (f) => ({ subject: `Return ${f.returnNumber} of order #${f.orderNumber} received`, body: [`We have your return request ${f.returnNumber} for order #${f.orderNumber} and will reply soon.`] }),
  return_approved: (f) => ({ subject: `Return ${f.returnNumber} of order #${f.orderNumber} approved`, body: [`Your return ${f.returnNumber} for order #${f.orderNumber} is approved. Please send the items back.`] }),
  return_rejected: (f) => ({ subject: `Return ${f.returnNumber} of order #${f.orderNumber}`, body: [`We cannot accept return ${f.returnNumber} for order #${f.orderNumber}.`, ...(f.reason ? [`Reason: ${f.reason}`] : [])] }),
  return_received: (f) => ({ subject: `Return ${f.returnNumber} of order #${f.orderNumber} arrived`, body: [`The items of return ${f.returnNumber} for order #${f.orderNumber} arrived back with us.`] }),
  return_refunded: (f, m) => ({ subject: `Return ${f.returnNumber} of order #${f.orderNumber} refunded`, body: [`We have refunded ${m(f.amount ?? 0)} for return ${f.returnNumber} of order #${f.orderNumber}.`] }),
};

export const TEMPLATE_NAMES = Object.keys(TEMPLATES);

// ---- Escaping: the only way a value reaches the HTML ---------------------------------------------------

/** HTML already escaped (made by `h` alone). */
class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

type Part = Html | string | number | null | undefined | false | readonly Part[];

function piece(p: Part): string {
  if (p === null || p === undefined || p === false) return "";
  if (p instanceof Html) return p.value;
  if (Array.isArray(p)) return p.map(piece).join("");
  return escape(String(p));
}

/** A piece of HTML: the template's own text as written, every interpolated value escaped (arrays joined, empty values dropped). */
function h(strings: TemplateStringsArray, ...values: Part[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? piece(values[i]!) : ""), ""));
}

/** A URL for an attribute: only http(s) (no `javascript:`), escaped by `h`. */
const safeUrl = (url: string) => (/^https?:\/\//i.test(url) ? url : "#");

// ---- Words ---------------------------------------------------------------------------------------------

const SHIPMENT_WORDS: Readonly<Record<string, string>> = {
  pending: "handed to the courier",
  in_transit: "in transit",
  delivered: "delivered",
  rto_initiated: "coming back to us",
  rto_delivered: "back with us",
};

const inWords = (words: Readonly<Record<string, string>>, value: string) => words[value] ?? value.replaceAll("_", " ");
const stateName = (code: string | null | undefined) => (code && isIndianStateCode(code) ? INDIAN_STATE_NAMES[code] : (code ?? ""));

// ---- The model every message is rendered from -----------------------------------------------------------

/** One message: who sends it, what it says, and (for an order's message) the order it is about. */
export interface EmailModel {
  storeName: string;
  logo?: EmailLogo | undefined;
  subject: string;
  /** The line a mail client shows after the subject (hidden in the body). */
  preheader: string;
  paragraphs: readonly string[];
  /** The message's link: `text` names it in the text part, `label` is the button's words. */
  link?: { url: string; text: string; label: string } | undefined;
  order?: { number: number; currency: string; total: number; detail: OrderDetail; invoiceUrl?: ((invoiceId: string) => string) | undefined } | undefined;
}

/** A row of amounts: its label, its amount in words of money, and whether it is the total. */
interface Amount {
  label: string;
  value: string;
  strong?: boolean;
}

/** The facts of an order a message shows, once, for both parts. */
function orderFacts(order: NonNullable<EmailModel["order"]>) {
  const m = (minor: number) => formatMoney(minor, order.currency);
  const d = order.detail;
  const items = d.lines.map((l) => ({
    title: l.productTitle,
    variant: l.variantTitle,
    quantity: l.quantity,
    unit: m(l.unitPrice),
    total: m(l.lineTotal),
  }));
  const parcels = d.parcels.map((p, i) => {
    const half = p.originState && isIndianStateCode(p.originState) && UTGST_TERRITORIES.has(p.originState) ? "UTGST" : "SGST";
    const gst: Amount[] = p.igst > 0 ? [{ label: "IGST", value: m(p.igst) }] : [{ label: "CGST", value: m(p.cgst) }, { label: half, value: m(p.sgst) }];
    return {
      title: d.parcels.length > 1 ? `Parcel ${i + 1} of ${d.parcels.length}` : "Parcel",
      from: stateName(p.originState),
      lines: p.lines.map((l) => `${l.quantity} × ${l.productTitle}${l.variantTitle ? ` (${l.variantTitle})` : ""}`),
      amounts: [
        { label: "Items", value: m(p.subtotal) },
        ...(p.discount > 0 ? [{ label: "Discount", value: `−${m(p.discount)}` }] : []),
        { label: "Shipping", value: m(p.shipping) },
        { label: "Parcel total", value: m(p.subtotal - p.discount + p.shipping), strong: true },
        ...gst.map((g) => ({ label: `${g.label} (included)`, value: g.value })),
      ] as Amount[],
      shipments: p.shipments.map((s) => ({ said: `${s.courier ?? "Courier"}, tracking number ${s.awb}: ${inWords(SHIPMENT_WORDS, s.status)}`, url: s.trackingUrl })),
      invoice: p.invoice && order.invoiceUrl ? { said: `Tax invoice ${p.invoice.number}`, url: order.invoiceUrl(p.invoice.id) } : null,
    };
  });
  const totals: Amount[] = [
    { label: "Items", value: m(d.subtotal) },
    ...(d.discount > 0 ? [{ label: "Discount", value: `−${m(d.discount)}` }] : []),
    { label: "Shipping", value: m(d.shipping) },
    { label: "GST (included)", value: m(d.tax) },
    { label: "Total", value: m(order.total), strong: true },
  ];
  const a = d.address;
  const address = [a["name"], a["line1"], a["line2"], [a["city"], stateName(a["state"]), a["postalCode"]].filter(Boolean).join(", "), a["country"] === "IN" ? "India" : a["country"]].filter(
    (x): x is string => typeof x === "string" && x.trim() !== "",
  );
  return { items, parcels, totals, address, payment: inWords(PAYMENT_WORDS, d.paymentStatus), delivery: inWords(FULFILLMENT_WORDS, d.fulfillmentStatus) };
}

type Facts = ReturnType<typeof orderFacts>;

function orderText(number: number, f: Facts): string[] {
  const amounts = (rows: readonly Amount[], indent: string) => rows.map((r) => `${indent}${r.label}: ${r.value}`);
  return [
    "",
    `Order #${number}`,
    ...f.items.map((i) => `- ${i.quantity} × ${i.title}${i.variant ? ` (${i.variant})` : ""} at ${i.unit}: ${i.total}`),
    ...f.parcels.flatMap((p) => [
      "",
      `${p.title}${p.from ? ` (from ${p.from})` : ""}`,
      ...p.lines.map((l) => `  ${l}`),
      ...amounts(p.amounts, "  "),
      ...p.shipments.map((s) => `  ${s.said}${s.url ? ` (${s.url})` : ""}`),
      ...(p.invoice ? [`  ${p.invoice.said}: ${p.invoice.url}`] : []),
    ]),
    "",
    ...amounts(f.totals, ""),
    "",
    "Shipping to:",
    ...f.address.map((l) => `  ${l}`),
    "",
    `Payment: ${f.payment}`,
    `Delivery: ${f.delivery}`,
  ];
}

// ---- HTML pieces (inline styles only) -------------------------------------------------------------------

// The layout's own styles and attributes: constants, put in as written.
const FONT_STACK = "font-family:-apple-system,BlinkMacSystemFont,Segoe UI,Roboto,Helvetica,Arial,sans-serif";
const FONT = new Html(FONT_STACK);
const CELL = new Html(`${FONT_STACK};font-size:14px;line-height:20px;color:#1f2328`);
const MUTED = new Html(`${FONT_STACK};font-size:13px;line-height:18px;color:#59636e`);
const HEAD = new Html(`${FONT_STACK};font-size:16px;line-height:22px;font-weight:600;color:#1f2328;padding:16px 0 8px`);
const TABLE = new Html('role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"');

function amountRows(rows: readonly Amount[]): Html {
  return h`${rows.map(
    (r) => h`<tr><td style="${CELL};padding:2px 0${r.strong ? ";font-weight:700" : ""}">${r.label}</td><td align="right" style="${CELL};padding:2px 0${r.strong ? ";font-weight:700" : ""}">${r.value}</td></tr>`,
  )}`;
}

function orderHtml(number: number, f: Facts): Html {
  const table = TABLE;
  return h`<tr><td style="${HEAD}">Order #${number}</td></tr>
<tr><td><table ${table} data-part="items">
<tr><th align="left" style="${MUTED};padding:4px 0;border-bottom:1px solid #d1d9e0">Item</th><th align="right" style="${MUTED};padding:4px 8px;border-bottom:1px solid #d1d9e0">Qty</th><th align="right" style="${MUTED};padding:4px 8px;border-bottom:1px solid #d1d9e0">Price</th><th align="right" style="${MUTED};padding:4px 0;border-bottom:1px solid #d1d9e0">Total</th></tr>
${f.items.map(
  (i) => h`<tr><td style="${CELL};padding:6px 0;border-bottom:1px solid #eef1f4">${i.title}${i.variant ? h`<br><span style="${MUTED}">${i.variant}</span>` : ""}</td><td align="right" style="${CELL};padding:6px 8px;border-bottom:1px solid #eef1f4">${i.quantity}</td><td align="right" style="${CELL};padding:6px 8px;border-bottom:1px solid #eef1f4">${i.unit}</td><td align="right" style="${CELL};padding:6px 0;border-bottom:1px solid #eef1f4">${i.total}</td></tr>`,
)}
</table></td></tr>
${f.parcels.map(
  (p) => h`<tr><td style="${HEAD}">${p.title}${p.from ? h` <span style="${MUTED};font-weight:400">from ${p.from}</span>` : ""}</td></tr>
<tr><td><table ${table} data-part="parcel">
${p.lines.map((l) => h`<tr><td colspan="2" style="${MUTED};padding:2px 0">${l}</td></tr>`)}
${amountRows(p.amounts)}
${p.shipments.map((s) => h`<tr><td colspan="2" style="${CELL};padding:4px 0">${s.url ? h`<a href="${safeUrl(s.url)}" style="color:#0969da">${s.said}</a>` : s.said}</td></tr>`)}
${p.invoice ? h`<tr><td colspan="2" style="${CELL};padding:4px 0" data-part="invoice"><a href="${safeUrl(p.invoice.url)}" style="color:#0969da">${p.invoice.said}</a></td></tr>` : ""}
</table></td></tr>`,
)}
<tr><td style="padding-top:12px"><table ${table} data-part="totals" style="border-top:1px solid #d1d9e0">${amountRows(f.totals)}</table></td></tr>
<tr><td style="${HEAD}">Shipping to</td></tr>
<tr><td style="${CELL}" data-part="address">${f.address.map((l, i) => h`${i > 0 ? new Html("<br>") : ""}${l}`)}</td></tr>
<tr><td style="${CELL};padding-top:12px" data-part="status">Payment: <strong>${f.payment}</strong><br>Delivery: <strong>${f.delivery}</strong></td></tr>`;
}

/** A message as a text part and an HTML part with the same facts; the subject ends with the store's name. */
export function renderEmail(model: EmailModel): Rendered {
  const sign = `— ${model.storeName}`;
  const order = model.order ? orderFacts(model.order) : null;
  const logoBox = logoBoxOf(model.logo);
  const text = [
    ...model.paragraphs,
    ...(order ? orderText(model.order!.number, order) : []),
    ...(model.link ? ["", `${model.link.text}: ${model.link.url}`] : []),
    "",
    sign,
  ].join("\n");
  const table = TABLE;
  const html = h`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${model.subject}</title></head>
<body style="margin:0;padding:0;background:#f6f8fa">
<div style="display:none;max-height:0;overflow:hidden;opacity:0;color:transparent">${model.preheader}</div>
<table ${table} style="background:#f6f8fa"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="width:600px;max-width:100%;background:#ffffff;border:1px solid #d1d9e0;border-radius:6px">
<tr><td style="padding:20px 24px;border-bottom:1px solid #d1d9e0">${
    logoBox
      ? h`<img src="${model.logo!.url}" alt="${model.storeName}" width="${logoBox.width}" height="${logoBox.height}" style="display:block;border:0;max-width:${logoBox.width}px;height:auto">`
      : h`<span style="${FONT};font-size:20px;font-weight:700;color:#1f2328">${model.storeName}</span>`
  }</td></tr>
<tr><td style="padding:20px 24px"><table ${table}>
${model.paragraphs.map((p) => h`<tr><td style="${CELL};padding:0 0 10px">${p}</td></tr>`)}
${model.order && order ? orderHtml(model.order.number, order) : ""}
${
  model.link
    ? h`<tr><td style="padding:18px 0 4px"><a href="${safeUrl(model.link.url)}" style="${FONT};display:inline-block;background:#1f6feb;color:#ffffff;font-size:14px;font-weight:600;text-decoration:none;padding:10px 18px;border-radius:6px">${model.link.label}</a></td></tr>`
    : ""
}
</table></td></tr>
<tr><td style="${MUTED};padding:14px 24px;border-top:1px solid #d1d9e0">${sign}</td></tr>
</table>
</td></tr></table>
</body></html>`;
  return { subject: `${model.subject} · ${model.storeName}`, text, html: html.value };
}

/** A message of the store that is about no order: its paragraphs, an optional link and the store's signature. */
export function renderMessage(storeName: string, subject: string, body: readonly string[], link?: { url: string; text: string; label: string }): Rendered {
  return renderEmail({ storeName, subject, preheader: body[0] ?? subject, paragraphs: body, link });
}

export function renderNotification(template: string, facts: NotificationFacts): Rendered | null {
  const lines = TEMPLATES[template];
  if (!lines) return null;
  const { subject, body } = lines(facts, (minor) => formatMoney(minor, facts.currency));
  return renderEmail({
    storeName: facts.storeName,
    logo: facts.logo,
    subject,
    preheader: body[0] ?? subject,
    paragraphs: body,
    link: facts.orderUrl ? { url: facts.orderUrl, text: "Your order", label: "View your order" } : undefined,
    order: facts.order ? { number: facts.orderNumber, currency: facts.currency, total: facts.total, detail: facts.order, invoiceUrl: facts.invoiceUrl } : undefined,
  });
}
