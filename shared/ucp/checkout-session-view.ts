import { isIndianStateCode, orderMoney, type GstRates, type IndianStateCode, type TaxLine } from "../rules/gst";
import { CART_LINE_QUANTITY_MAX, type TaxClass, type UcpSessionStatus } from "../db/schema";
import { shippingFor } from "../orders/checkout";
import { checkoutInput } from "../orders/checkout-input";
import { cartTotals, lineTotal } from "../storefront/cart-totals";
import type { DiscountState } from "../storefront/discount-state";
import type { Address, AddressField, SessionAsked } from "./checkout-input";
import { UCP_VERSION } from "./profile";

/**
 * A UCP checkout session as the agent reads it (./checkout-sessions.ts reads and writes it): the session's
 * lines priced with the cart's own arithmetic, the totals and the GST inside them, and a message with its
 * JSONPath for everything missing or wrong, from what one unit read of the store and its catalogue.
 */

export const TERMINAL: readonly UcpSessionStatus[] = ["completed", "canceled"];

type Severity = "recoverable" | "requires_buyer_input" | "requires_buyer_review" | "unrecoverable";
export type UcpMessage =
  | { type: "error"; code: string; content: string; severity: Severity; path?: string }
  | { type: "warning"; code: string; content: string; path?: string }
  | { type: "info"; content: string; code?: string; path?: string };

interface Total {
  type: string;
  amount: number;
  display_text?: string;
  lines?: { display_text: string; amount: number }[];
}

export interface UcpCheckout {
  ucp: { version: string; capabilities: Record<string, { version: string }[]>; payment_handlers: Record<string, never> };
  id: string;
  status: UcpSessionStatus;
  currency: string;
  line_items: { id: string; item: { id: string; title: string; price: number }; quantity: number; totals: Total[] }[];
  buyer?: Record<string, string>;
  fulfillment: { methods: Record<string, unknown>[] };
  discounts: { codes: string[]; applied: { code: string; title: string; amount: number; method: "across" }[] };
  totals: Total[];
  messages: UcpMessage[];
  links: { type: string; url: string; title?: string }[];
  expires_at: string;
  /** The order, once the session is completed (./checkout-order-view.ts); the door adds its `permalink_url`. */
  order?: { id: string; label: string; permalink_url?: string };
}

/** The protocol's error answer for a session that does not exist for this caller (`common/types/error_response.json`). */
export const sessionNotFound = () => ({
  ucp: { version: UCP_VERSION, status: "error" as const },
  messages: [{ type: "error" as const, code: "not_found", content: "No checkout session with this id exists for this agent at this store (or it expired).", severity: "unrecoverable" as const }],
});


/** A code as the cart looks it up (shared/storefront/cart-changes.ts). */
export const normalCode = (code: string) => code.trim().toUpperCase();

// What a session is priced from ------------------------------------------------------------------------

export interface StoreRead {
  enabled: boolean;
  currency: string;
  fee: number;
  freeOver: number | null;
  /** The store's published policy pages, as the checkout's `links` (paths on the store's domain). */
  links: { type: string; url: string; title: string }[];
}


export interface VariantRead {
  id: string;
  productTitle: string;
  variantTitle: string;
  price: number;
  active: boolean;
  preorder: boolean;
  available: number;
  taxClass: TaxClass;
}

export interface CodeRead {
  code: string;
  kind: "percentage" | "fixed_amount";
  value: number;
  state: DiscountState;
}

export interface CatalogueRead {
  variants: VariantRead[];
  codes: CodeRead[];
  /** The GST rates of the day (shared/rules/gst-rates.ts), as checkout reads them. */
  rates: GstRates;
}

export interface SessionRow extends SessionAsked {
  id: string;
  status: UcpSessionStatus;
  expiresAt: Date;
  /** The order completing the session placed (./checkout-complete.ts); null before. */
  orderId?: string | null;
}


// Pricing -------------------------------------------------------------------------------------------------

const ADDRESS_OF: Record<string, AddressField | AddressField[]> = {
  name: ["first_name", "last_name"],
  line1: "street_address",
  line2: "extended_address",
  city: "address_locality",
  state: "address_region",
  postalCode: "postal_code",
  country: "address_country",
};
const REQUIRED_ADDRESS: AddressField[] = ["first_name", "street_address", "address_locality", "address_region", "postal_code", "address_country"];
const DESTINATION = "$.fulfillment.methods[0].destinations[0]";

/** The address's problems, by checkout's own rules for a shipping address (a missing field first). */
function addressMessages(address: Address | null): UcpMessage[] {
  if (!address) return [{ type: "error", code: "missing", severity: "recoverable", path: "$.fulfillment.methods[0].destinations", content: "A shipping address is required." }];
  const missing = REQUIRED_ADDRESS.filter((f) => !address[f]?.trim());
  if (missing.length) return missing.map((f) => ({ type: "error", code: "missing", severity: "recoverable", path: `${DESTINATION}.${f}`, content: `The shipping address needs ${f.replace(/_/g, " ")}.` }));
  const parsed = checkoutInput.shape.shippingAddress.safeParse({
    name: [address.first_name, address.last_name].filter(Boolean).join(" "),
    line1: address.street_address,
    line2: address.extended_address,
    city: address.address_locality,
    state: address.address_region,
    postalCode: address.postal_code,
    country: address.address_country,
  });
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => {
    const mapped = ADDRESS_OF[String(issue.path[0])] ?? "street_address";
    const field = Array.isArray(mapped) ? mapped[0]! : mapped;
    const undeliverable = field === "address_country";
    return {
      type: "error",
      code: undeliverable ? "address_undeliverable" : "invalid",
      severity: "recoverable",
      path: `${DESTINATION}.${field}`,
      content: `The shipping address's ${field.replace(/_/g, " ")} ${issue.message}.`,
    };
  });
}

function buyerMessages(buyer: Record<string, string> | null): UcpMessage[] {
  const email = buyer?.["email"]?.trim();
  const messages: UcpMessage[] = [];
  if (!email) messages.push({ type: "error", code: "missing", severity: "recoverable", path: "$.buyer.email", content: "The buyer's email is required (the receipt and order updates go there)." });
  else if (!checkoutInput.shape.email.safeParse(email).success) messages.push({ type: "error", code: "invalid", severity: "recoverable", path: "$.buyer.email", content: "The buyer's email must be an email address." });
  const phone = buyer?.["phone_number"];
  if (phone !== undefined && !checkoutInput.shape.phone.safeParse(phone).success) {
    messages.push({ type: "error", code: "invalid", severity: "recoverable", path: "$.buyer.phone_number", content: "The buyer's phone number must be in E.164 form, such as +919876543210." });
  }
  return messages;
}

const discountWarning: Record<DiscountState | "unknown" | "again" | "second", { code: string; content: string }> = {
  unknown: { code: "discount_code_invalid", content: "There is no such discount code at this store." },
  expired: { code: "discount_code_expired", content: "This discount code has expired." },
  disabled: { code: "discount_code_invalid", content: "This discount code cannot be used now." },
  scheduled: { code: "discount_code_invalid", content: "This discount code cannot be used yet." },
  used_up: { code: "discount_code_invalid", content: "This discount code has been used up." },
  live: { code: "discount_code_invalid", content: "" },
  again: { code: "discount_code_already_applied", content: "This discount code is applied already." },
  second: { code: "discount_code_combination_disallowed", content: "One discount code applies per order; this one was not combined with the first." },
};

/**
 * The GST inside the total, as lines under it (`Excl. GST`, `GST`) that add up to it: UCP's `tax` total is
 * added to the others, and our prices include GST. Computed by checkout's own arithmetic (`orderMoney`, the
 * day's rates, the discount and shipping shared over the lines); the amount does not depend on where the
 * parcel ships from or to (only its split into CGST and SGST or IGST does), so one parcel stands for all.
 */
function gstLines(lines: TaxLine[], discount: number, shipping: number, address: Address | null, rates: GstRates): { lines?: { display_text: string; amount: number }[] } {
  if (lines.length === 0 || !Number.isSafeInteger(lines.reduce((sum, l) => sum + l.amount, 0) + shipping)) return {};
  const region = address?.address_region ?? "";
  const destination: IndianStateCode = isIndianStateCode(region) ? region : "IN-DL";
  const money = orderMoney({ parcels: [{ lines, originState: destination }], discount, shipping, destinationState: destination, rates });
  return { lines: [{ display_text: "Excl. GST", amount: money.total - money.tax }, { display_text: "GST", amount: money.tax }] };
}

/**
 * The fulfillment extension's one method: shipping every line as one parcel group to the one address, its
 * standard option chosen once there is an address (one address per checkout: the store ships an order to one place).
 */
export function shippingMethod(lineIds: string[], destination: Address | null, shipping: number): UcpCheckout["fulfillment"] {
  const chosen = destination !== null;
  return {
    methods: [
      {
        id: "shipping",
        type: "shipping",
        line_item_ids: lineIds,
        destinations: chosen ? [{ id: "destination_1", type: "shipping_address", ...destination }] : [],
        selected_destination_id: chosen ? "destination_1" : null,
        groups: [
          {
            id: "parcel_1",
            line_item_ids: lineIds,
            options: chosen ? [{ id: "standard", title: "Standard shipping", totals: [{ type: "total", amount: shipping }] }] : [],
            selected_option_id: chosen ? "standard" : null,
          },
        ],
      },
    ],
  };
}

export const CAPABILITIES = {
  "dev.ucp.shopping.checkout": [{ version: UCP_VERSION }],
  "dev.ucp.shopping.fulfillment": [{ version: UCP_VERSION }],
  "dev.ucp.shopping.discount": [{ version: UCP_VERSION }],
};

/**
 * The session as the agent reads it: each line priced from the catalogue, the discount and shipping as the
 * cart and checkout take them, totals that add up (`subtotal` GST included, `discount` negative,
 * `fulfillment`, `total`), and a message with a path for everything missing or wrong.
 */
export function checkoutView(session: SessionRow, shop: StoreRead, read: CatalogueRead): UcpCheckout {
  const messages: UcpMessage[] = [];
  const variantOf = new Map(read.variants.map((r) => [r.id.toLowerCase(), r]));
  const asked = new Map<string, number>();
  for (const l of session.lineItems) asked.set(l.variant_id.toLowerCase(), (asked.get(l.variant_id.toLowerCase()) ?? 0) + l.quantity);
  const priced: { unitPrice: number; quantity: number }[] = [];
  const taxed: TaxLine[] = [];
  if (session.lineItems.length === 0) messages.push({ type: "error", code: "missing", severity: "recoverable", path: "$.line_items", content: "Add at least one line item." });
  const lineItems = session.lineItems.map((l, i) => {
    const found = variantOf.get(l.variant_id.toLowerCase());
    const id = `li_${i + 1}`;
    if (!found || !found.active) {
      messages.push({ type: "error", code: "item_unavailable", severity: "recoverable", path: `$.line_items[${i}].item.id`, content: found ? `${found.productTitle} is not for sale right now.` : "This store sells no product with this id." });
      return { id, item: { id: l.variant_id, title: found?.productTitle ?? "Unavailable item", price: 0 }, quantity: l.quantity, totals: [{ type: "subtotal", amount: 0 }, { type: "total", amount: 0 }] };
    }
    const title = found.variantTitle === "Default" ? found.productTitle : `${found.productTitle} (${found.variantTitle})`;
    if (l.quantity > CART_LINE_QUANTITY_MAX) {
      // More than a cart line holds is not priced (nor counted in the totals) until it is changed.
      messages.push({ type: "error", code: "invalid", severity: "recoverable", path: `$.line_items[${i}].quantity`, content: `A line holds at most ${CART_LINE_QUANTITY_MAX}.` });
      return { id, item: { id: l.variant_id, title, price: found.price }, quantity: l.quantity, totals: [{ type: "subtotal", amount: 0 }, { type: "total", amount: 0 }] };
    }
    if (!found.preorder && asked.get(l.variant_id.toLowerCase())! > found.available) {
      messages.push({ type: "error", code: "out_of_stock", severity: "recoverable", path: `$.line_items[${i}].quantity`, content: `Only ${found.available} of ${found.productTitle} can be ordered now.` });
    }
    const line = { unitPrice: found.price, quantity: l.quantity };
    priced.push(line);
    taxed.push({ taxClass: found.taxClass, amount: lineTotal(line), quantity: l.quantity });
    const amount = lineTotal(line);
    return { id, item: { id: l.variant_id, title, price: found.price }, quantity: l.quantity, totals: [{ type: "subtotal", amount }, { type: "total", amount }] };
  });

  messages.push(...buyerMessages(session.buyer), ...addressMessages(session.destination));

  // One live code applies per order, as in the cart; the rest are warnings at their own path.
  const codeOf = new Map(read.codes.map((c) => [c.code, c]));
  let applied: CodeRead | null = null;
  const seen = new Set<string>();
  session.discountCodes.forEach((raw, i) => {
    const code = normalCode(raw);
    const found = codeOf.get(code);
    const why = seen.has(code) ? "again" : !found ? "unknown" : found.state !== "live" ? found.state : applied ? "second" : null;
    seen.add(code);
    if (why === null) applied = found!;
    else messages.push({ type: "warning", path: `$.discounts.codes[${i}]`, ...discountWarning[why] });
  });
  const terms = applied as CodeRead | null;
  const cart = cartTotals(priced, terms);

  const totals: Total[] = [{ type: "subtotal", amount: cart.subtotal, display_text: "Subtotal (GST included)" }];
  if (cart.discount > 0) totals.push({ type: "discount", amount: -cart.discount, display_text: `Discount ${terms!.code}` });
  const shipping = shippingFor(shop, cart.total);
  if (session.destination) totals.push({ type: "fulfillment", amount: shipping, display_text: "Shipping" });
  const charged = session.destination ? shipping : 0;
  totals.push({ type: "total", amount: cart.total + charged, display_text: "Total", ...gstLines(taxed, cart.discount, charged, session.destination, read.rates) });
  messages.push({ type: "info", content: "Prices include GST." });

  const lineIds = lineItems.map((l) => l.id);
  const status: UcpSessionStatus = TERMINAL.includes(session.status) ? session.status : messages.some((m) => m.type === "error") ? "incomplete" : "ready_for_complete";
  return {
    ucp: { version: UCP_VERSION, capabilities: CAPABILITIES, payment_handlers: {} },
    id: session.id,
    status,
    currency: shop.currency,
    line_items: lineItems,
    ...(session.buyer ? { buyer: session.buyer } : {}),
    fulfillment: shippingMethod(lineIds, session.destination, shipping),
    discounts: { codes: session.discountCodes, applied: terms && cart.discount > 0 ? [{ code: terms.code, title: `Discount code ${terms.code}`, amount: cart.discount, method: "across" }] : [] },
    totals,
    messages,
    links: shop.links,
    expires_at: session.expiresAt.toISOString(),
  };
}

