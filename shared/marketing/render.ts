import { z } from "zod";
import type { AutomationKind } from "../db/schema-marketing";

/**
 * Marketing messages are the merchant's own words (a subject and a plain-text body, paragraphs split by a
 * blank line) with a few placeholders, and a footer the merchant cannot leave out: why the customer gets
 * it and the link to unsubscribe. Values are escaped in the HTML part.
 */
export const PLACEHOLDERS = ["first_name", "store_name", "store_url", "order_number"] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

/** A subject or body whose placeholders are all known (the message names the unknown one). */
export const templateText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, "is required")
    .max(max)
    .superRefine((text, ctx) => {
      for (const [, name] of text.matchAll(PLACEHOLDER)) {
        if (!(PLACEHOLDERS as readonly string[]).includes(name!)) {
          ctx.addIssue({ code: "custom", message: `{{${name}}} is not a placeholder; use ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(", ")}` });
          return;
        }
      }
    });

export interface MessageFacts {
  storeName: string;
  firstName: string | null;
  /** The store's address, or null while it has no verified domain. */
  storeUrl: string | null;
  orderNumber?: number | undefined;
  unsubscribeUrl: string | null;
}

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function fill(text: string, facts: MessageFacts): string {
  const values: Record<Placeholder, string> = {
    first_name: facts.firstName ?? "there",
    store_name: facts.storeName,
    store_url: facts.storeUrl ?? facts.storeName,
    order_number: facts.orderNumber === undefined ? "" : `#${facts.orderNumber}`,
  };
  return text.replace(PLACEHOLDER, (whole, name: string) => values[name as Placeholder] ?? whole);
}

export function renderMarketing(subject: string, body: string, facts: MessageFacts): RenderedMessage {
  const paragraphs = fill(body, facts)
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  const footer = [
    `You get this email because you agreed to hear from ${facts.storeName}.`,
    facts.unsubscribeUrl ? `Unsubscribe: ${facts.unsubscribeUrl}` : `Reply to unsubscribe.`,
  ];
  const htmlFooter = facts.unsubscribeUrl
    ? `<p style="color:#666;font-size:12px">${escape(footer[0]!)} <a href="${escape(facts.unsubscribeUrl)}">Unsubscribe</a></p>`
    : `<p style="color:#666;font-size:12px">${footer.map(escape).join(" ")}</p>`;
  return {
    subject: fill(subject, facts).replace(/\s+/g, " ").slice(0, 300),
    text: [...paragraphs, "", "—", ...footer].join("\n\n"),
    html: `${paragraphs.map((p) => `<p>${escape(p).replace(/\n/g, "<br>")}</p>`).join("")}${htmlFooter}`,
  };
}

/** What an automation says until the merchant changes it, and how long it waits. */
export const AUTOMATION_DEFAULTS: Record<AutomationKind, { delayMinutes: number; subject: string; body: string; about: string }> = {
  abandoned_checkout: {
    about: "An order placed for online payment that is still unpaid after the delay: one reminder to come back (never after it was paid).",
    delayMinutes: 120,
    subject: "Still thinking it over? Your order {{order_number}} at {{store_name}}",
    body: "Hi {{first_name}},\n\nYour order {{order_number}} was not paid, so its items are not reserved for you any more. They may still be in stock: {{store_url}}\n\nThank you for looking at {{store_name}}.",
  },
  first_order_thanks: {
    about: "A customer's first paid order: a thank-you after the delay.",
    delayMinutes: 0,
    subject: "Thank you for your first order at {{store_name}}",
    body: "Hi {{first_name}},\n\nThank you for your first order {{order_number}}. We are glad to have you with us.\n\nSee what is new: {{store_url}}",
  },
};
