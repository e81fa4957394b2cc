import { formatMoney } from "../storefront/catalog";

/**
 * The shopper's messages, one per template (shared/jobs/routing.ts NOTIFICATION_TEMPLATES), each with
 * the store's name. Plain words, a text and an HTML part; values are escaped in the HTML.
 */
export interface NotificationFacts {
  storeName: string;
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

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A message of the store: its paragraphs, an optional link (named in the text, a button's words in the HTML) and the store's signature. */
export function renderMessage(storeName: string, subject: string, body: readonly string[], link?: { url: string; text: string; label: string }): Rendered {
  const sign = `— ${storeName}`;
  return {
    subject: `${subject} · ${storeName}`,
    text: [...body, ...(link ? ["", `${link.text}: ${link.url}`] : []), "", sign].join("\n"),
    html: `${body.map((l) => `<p>${escape(l)}</p>`).join("")}${link ? `<p><a href="${escape(link.url)}">${escape(link.label)}</a></p>` : ""}<p>${escape(sign)}</p>`,
  };
}

export function renderNotification(template: string, facts: NotificationFacts): Rendered | null {
  const lines = TEMPLATES[template];
  if (!lines) return null;
  const { subject, body } = lines(facts, (minor) => formatMoney(minor, facts.currency));
  return renderMessage(facts.storeName, subject, body, facts.orderUrl ? { url: facts.orderUrl, text: "Your order", label: "View your order" } : undefined);
}
