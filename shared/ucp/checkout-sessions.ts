import { and, eq, gt, inArray, notInArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { constant, plan, together, type Plan } from "../db/plan";
import { isIndianStateCode, orderMoney, type GstRates, type IndianStateCode, type TaxLine } from "../rules/gst";
import { ratesPlan } from "../rules/gst-rates";
import { CART_LINE_QUANTITY_MAX, discount, idempotencyKey, page, product, productVariant, store, ucpCheckoutSession, type TaxClass, type UcpSessionStatus } from "../db/schema";
import type { Q, ResultOf, Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { shippingFor } from "../orders/checkout";
import { checkoutInput } from "../orders/checkout-input";
import { cartTotals, lineTotal } from "../storefront/cart-totals";
import { AVAILABLE } from "../storefront/catalog";
import { DISCOUNT_STATE, type DiscountState } from "../storefront/discount-state";
import type { Address, AddressField, SessionAsked } from "./checkout-input";
import { UCP_VERSION } from "./profile";

/**
 * UCP checkout sessions (issue 26 item 3; docs/ucp.md): create, read, replace and cancel. A session keeps
 * only what the agent asked for (./checkout-input.ts); every answer prices it afresh from the catalogue with
 * the cart's own arithmetic (shared/storefront/cart-totals.ts), stock as the cart's change checks it
 * (`AVAILABLE`), discount codes as the cart applies them (one live code, `DISCOUNT_STATE`), and the address
 * checked by checkout's own rules (shared/orders/checkout-input.ts). What is missing or wrong is a message
 * with the JSONPath of its field; the status is `incomplete` while any error remains, `ready_for_complete`
 * when none does. A session is its store's (row-level security) and its agent's (the `UCP-Agent` profile
 * that made it): for anyone else it does not exist. Completing (placing the order) is not built yet.
 */

const TERMINAL: readonly UcpSessionStatus[] = ["completed", "canceled"];

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
}

/** The protocol's error answer for a session that does not exist for this caller (`common/types/error_response.json`). */
export const sessionNotFound = () => ({
  ucp: { version: UCP_VERSION, status: "error" as const },
  messages: [{ type: "error" as const, code: "not_found", content: "No checkout session with this id exists for this agent at this store (or it expired).", severity: "unrecoverable" as const }],
});

// Reading -------------------------------------------------------------------------------------------------

interface StoreRead {
  enabled: boolean;
  currency: string;
  fee: number;
  freeOver: number | null;
  /** The store's published policy pages, as the checkout's `links` (paths on the store's domain). */
  links: { type: string; url: string; title: string }[];
}

/** A published page's handle to the link type UCP knows it by (the first match). */
const POLICY_LINKS: [RegExp, string][] = [
  [/privacy/, "privacy_policy"],
  [/terms/, "terms_of_service"],
  [/refund|return/, "refund_policy"],
  [/shipping|delivery/, "shipping_policy"],
  [/faq/, "faq"],
];

interface VariantRead {
  id: string;
  productTitle: string;
  variantTitle: string;
  price: number;
  active: boolean;
  preorder: boolean;
  available: number;
  taxClass: TaxClass;
}

interface CodeRead {
  code: string;
  kind: "percentage" | "fixed_amount";
  value: number;
  state: DiscountState;
}

interface CatalogueRead {
  variants: VariantRead[];
  codes: CodeRead[];
  /** The GST rates of the day (shared/rules/gst-rates.ts), as checkout reads them. */
  rates: GstRates;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A code as the cart looks it up (shared/storefront/cart-changes.ts). */
const normalCode = (code: string) => code.trim().toUpperCase();

const v = alias(productVariant, "v");

function storePlan(q: Q): Plan<StoreRead | null> {
  return plan(
    [
      q
        .select({ enabled: store.agenticCheckout, currency: store.currency, fee: store.shippingFeeMinor, freeOver: store.freeShippingOverMinor })
        .from(store)
        .where(eq(store.id, CURRENT_STORE)),
      q
        .select({ handle: page.handle, title: page.title })
        .from(page)
        .where(and(eq(page.storeId, CURRENT_STORE), eq(page.status, "published")))
        .orderBy(page.handle)
        .limit(50),
    ] as const,
    ([[row], pages]) => {
      if (!row) return null;
      const links = pages.flatMap((p) => {
        const type = POLICY_LINKS.find(([pattern]) => pattern.test(p.handle))?.[1];
        return type ? [{ type, url: `/pages/${p.handle}`, title: p.title }] : [];
      });
      return { ...row, fee: Number(row.fee), freeOver: row.freeOver === null ? null : Number(row.freeOver), links };
    },
  );
}

/** The variants a session names (published or not, to say which) and its codes' discounts, in one unit with whatever else it sends. */
function cataloguePlan(q: Q, asked: SessionAsked): Plan<CatalogueRead> {
  const ids = [...new Set(asked.lineItems.map((l) => l.variant_id).filter((id) => UUID.test(id)))];
  const codes = [...new Set(asked.discountCodes.map(normalCode))];
  const rates = ratesPlan(q, new Date());
  return plan(
    [
      q
        .select({
          id: v.id,
          productTitle: product.title,
          variantTitle: v.title,
          price: v.priceMinor,
          active: sql<boolean>`${product.status} = 'active'`,
          preorder: v.preorder,
          taxClass: v.taxClass,
          available: sql<number>`${sql.raw(AVAILABLE)}`,
        })
        .from(v)
        .innerJoin(product, and(eq(product.storeId, v.storeId), eq(product.id, v.productId)))
        .where(and(eq(v.storeId, CURRENT_STORE), inArray(v.id, ids.length ? ids : ["00000000-0000-0000-0000-000000000000"]))),
      // DISCOUNT_STATE reads the bare columns of discount, so discount stays the only table of this query.
      q
        .select({ code: discount.code, kind: discount.kind, value: discount.value, state: sql<DiscountState>`${DISCOUNT_STATE}` })
        .from(discount)
        .where(and(eq(discount.storeId, CURRENT_STORE), inArray(discount.code, codes.length ? codes : [""]))),
      ...rates.steps,
    ] as const,
    ([variants, found, ...rest]) => ({
      variants: variants.map((r) => ({ ...r, price: Number(r.price), available: Number(r.available) })),
      codes: found.map((c) => ({ ...c, value: Number(c.value) })),
      rates: rates.finish(rest),
    }),
  );
}

interface SessionRow extends SessionAsked {
  id: string;
  status: UcpSessionStatus;
  expiresAt: Date;
}

const sessionColumns = {
  id: ucpCheckoutSession.id,
  status: ucpCheckoutSession.status,
  lineItems: ucpCheckoutSession.lineItems,
  buyer: ucpCheckoutSession.buyer,
  destination: ucpCheckoutSession.destination,
  discountCodes: ucpCheckoutSession.discountCodes,
  expiresAt: ucpCheckoutSession.expiresAt,
};

/** The session `id` of this store, made by this agent, not expired. */
const theSession = (id: string, agent: string | null) =>
  and(
    eq(ucpCheckoutSession.storeId, CURRENT_STORE),
    eq(ucpCheckoutSession.id, id),
    agent === null ? undefined : eq(ucpCheckoutSession.agentProfile, agent),
    gt(ucpCheckoutSession.expiresAt, sql`now()`),
  );

/** The session `id` of this store and agent, as it was at the start of the unit. */
function sessionPlan(q: Q, id: string, agent: string | null): Plan<SessionRow | undefined> {
  return plan([q.select(sessionColumns).from(ucpCheckoutSession).where(theSession(id, agent))] as const, ([rows]) => rows[0]);
}

/** An agent's Idempotency-Key in the unit's store, while it lives (24 hours, as the API's keys). */
export function agentKeyPlan(q: Q, owner: string, key: string) {
  return plan(
    [
      q
        .select({ procedure: idempotencyKey.procedure, hash: idempotencyKey.requestHash, status: idempotencyKey.status, response: idempotencyKey.response })
        .from(idempotencyKey)
        .where(and(eq(idempotencyKey.storeId, CURRENT_STORE), eq(idempotencyKey.owner, owner), eq(idempotencyKey.key, key), gt(idempotencyKey.createdAt, sql`now() - interval '24 hours'`))),
    ] as const,
    ([rows]) => rows[0],
  );
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

const CAPABILITIES = {
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
  const destinationId = "destination_1";
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
    fulfillment: {
      methods: [
        {
          id: "shipping",
          type: "shipping",
          line_item_ids: lineIds,
          destinations: session.destination ? [{ id: destinationId, type: "shipping_address", ...session.destination }] : [],
          selected_destination_id: session.destination ? destinationId : null,
          groups: [
            {
              id: "parcel_1",
              line_item_ids: lineIds,
              options: session.destination ? [{ id: "standard", title: "Standard shipping", totals: [{ type: "total", amount: shipping }] }] : [],
              selected_option_id: session.destination ? "standard" : null,
            },
          ],
        },
      ],
    },
    discounts: { codes: session.discountCodes, applied: terms && cart.discount > 0 ? [{ code: terms.code, title: `Discount code ${terms.code}`, amount: cart.discount, method: "across" }] : [] },
    totals,
    messages,
    links: shop.links,
    expires_at: session.expiresAt.toISOString(),
  };
}

// Operations ----------------------------------------------------------------------------------------------

/** What an operation answers: the session, or why not (the door turns these into the protocol's answers). */
export type SessionAnswer = { ok: true; checkout: UcpCheckout } | { ok: false; why: "off" | "not_found" | "terminal" };

/**
 * A statement the caller's write unit sends first (the door's `Idempotency-Key`, taken by the change's own unit:
 * two requests with one key meet there, and a change that rolls back takes no key).
 */
export type AlsoWrite = (q: Q) => Plan<unknown>;
const none: AlsoWrite = () => constant(undefined);

/** One write of a session in its own unit, after the caller's key (`also`); answers the write's rows. */
async function writeKeyed<S extends Step>(db: Database, storeId: string, also: AlsoWrite, write: (q: Q) => S): Promise<ResultOf<S>> {
  const { rows } = await sendStoreUnit(db, storeId, (q) => together({ key: also(q), rows: plan([write(q)] as const, ([r]) => r) }), { readOnly: false });
  return rows;
}

const OFF = { ok: false, why: "off" } as const;
const NOT_FOUND = { ok: false, why: "not_found" } as const;

/** Whether the store sells to agents now (`store.agentic_checkout`). */
export async function agenticCheckoutOn(db: Database, storeId: string): Promise<boolean> {
  return (await sendStoreUnit(db, storeId, (q) => storePlan(q)))?.enabled === true;
}

/** A new session from an agent's request: one unit reads the switch and the catalogue, one writes the session. */
export async function createSession(db: Database, storeId: string, agent: string, asked: SessionAsked, also: AlsoWrite = none): Promise<SessionAnswer> {
  const { shop, read } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), read: cataloguePlan(q, asked) }));
  if (!shop?.enabled) return OFF;
  const id = crypto.randomUUID();
  const draft = checkoutView({ id, status: "incomplete", expiresAt: new Date(), ...asked }, shop, read);
  const [row] = await writeKeyed(db, storeId, also, (q) =>
    q
      .insert(ucpCheckoutSession)
      .values({ id, storeId: CURRENT_STORE, agentProfile: agent, status: draft.status, ...asked })
      .returning({ expiresAt: ucpCheckoutSession.expiresAt }),
  );
  return { ok: true, checkout: { ...draft, expires_at: row!.expiresAt.toISOString() } };
}

/**
 * The session as it is now, priced afresh: the switch and the session in one unit, its catalogue in the next.
 * With no agent (null), the session by its id alone: its `continue_url` page, where the buyer holds the link.
 */
export async function getSession(db: Database, storeId: string, agent: string | null, id: string): Promise<SessionAnswer> {
  const { shop, session } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), session: sessionPlan(q, id, agent) }));
  if (!shop?.enabled) return OFF;
  if (!session) return NOT_FOUND;
  const read = await sendStoreUnit(db, storeId, (q) => cataloguePlan(q, session));
  return { ok: true, checkout: checkoutView(session, shop, read) };
}

/**
 * A full replacement (the specification's update): the switch, the session and the new request's catalogue
 * read in one unit, the session rewritten in the next unless it ended meanwhile. A completed or cancelled
 * session cannot change.
 */
export async function replaceSession(db: Database, storeId: string, agent: string, id: string, asked: SessionAsked, also: AlsoWrite = none): Promise<SessionAnswer> {
  const { shop, session, read } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), session: sessionPlan(q, id, agent), read: cataloguePlan(q, asked) }));
  if (!shop?.enabled) return OFF;
  if (!session) return NOT_FOUND;
  if (TERMINAL.includes(session.status)) return { ok: false, why: "terminal" };
  const next = checkoutView({ ...session, ...asked }, shop, read);
  const rows = await writeKeyed(db, storeId, also, (q) =>
    q
      .update(ucpCheckoutSession)
      .set({ ...asked, status: next.status, updatedAt: sql`now()` })
      .where(and(theSession(id, agent), notInArray(ucpCheckoutSession.status, [...TERMINAL])))
      .returning({ id: ucpCheckoutSession.id }),
  );
  return rows.length ? { ok: true, checkout: next } : { ok: false, why: "terminal" };
}

/**
 * Cancels a session that has not ended: the switch, the session as it was and the change in one unit (a
 * session completed or cancelled already is refused, as the specification asks), then its catalogue read for
 * the answer.
 */
export async function cancelSession(db: Database, storeId: string, agent: string, id: string): Promise<SessionAnswer> {
  const { shop, before, after } = await sendStoreUnit(
    db,
    storeId,
    (q) =>
      together({
        shop: storePlan(q),
        before: sessionPlan(q, id, agent),
        after: plan(
          [
            q
              .update(ucpCheckoutSession)
              .set({ status: "canceled", updatedAt: sql`now()` })
              .where(and(theSession(id, agent), notInArray(ucpCheckoutSession.status, [...TERMINAL]), inArray(ucpCheckoutSession.storeId, q.select({ id: store.id }).from(store).where(and(eq(store.id, CURRENT_STORE), eq(store.agenticCheckout, true))))))
              .returning(sessionColumns),
          ] as const,
          ([rows]): SessionRow | undefined => rows[0],
        ),
      }),
    { readOnly: false },
  );
  if (!shop?.enabled) return OFF;
  if (!before) return NOT_FOUND;
  if (!after) return { ok: false, why: "terminal" };
  const read = await sendStoreUnit(db, storeId, (q) => cataloguePlan(q, after));
  return { ok: true, checkout: checkoutView(after, shop, read) };
}
