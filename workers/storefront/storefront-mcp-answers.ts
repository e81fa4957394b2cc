import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { isAppError } from "#shared/core/errors";
import { errorFields, type Logger } from "#shared/core/log";
import type { Database } from "#shared/db/database";
import { databaseUnavailable, isDatabaseUnavailable } from "#shared/db/unavailable";
import { mediaPath } from "#shared/media/limits";
import type { ProductImage } from "#shared/storefront/media";
import type { CartView } from "#shared/storefront/cart";
import { formatMoney, type ProductCard, type ProductView } from "#shared/storefront/catalog";

/**
 * The Storefront MCP's answers (./storefront-mcp-tools.ts registers the tools): each answer's schema, its
 * outputSchema, and how a product card, a product page and a cart become it, in the store's currency with GST
 * included as the pages show it, every URL on the store's domain the agent called.
 */

/** What the tools work with at one store: the door gives it (storefront-mcp.ts). */
export interface StorefrontMcpDeps {
  db: Database;
  log: Logger;
  store: { id: string; name: string; currency: string };
  /** The shopper-facing origin the agent called (https://<this store's domain>): every URL answered is on it. */
  origin: string;
  /** Told when a discount code was not the store's (it stays counted as a guess: storefront-mcp.ts). */
  codeWasWrong: () => void;
}


// ——— Answers ———

const money = z.object({
  amount: z.string().describe("Decimal amount in major units (rupees for INR), e.g. \"1250.00\"."),
  currency: z.string().describe("ISO 4217 code, e.g. INR."),
  formatted: z.string().describe("As the store's pages show it, e.g. ₹1,250.00."),
});
type Money = z.infer<typeof money>;

function moneyOf(minor: number, currency: string): Money {
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return { amount: (minor / 10 ** digits).toFixed(digits), currency, formatted: formatMoney(minor, currency) };
}

export const json = <T extends Record<string, unknown>>(value: T): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value });

/** A failure as the agent reads it: the error's code, words and details, never internals (those are logged). */
export function failure(log: Logger, tool: string, e: unknown): CallToolResult {
  const known = isAppError(e) ? e : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
  if (!known) log.error("Storefront MCP tool failed", { tool, ...errorFields(e) });
  const answer = known
    ? { code: known.code, message: known.message, ...(known.data ? { data: known.data } : {}) }
    : { code: "INTERNAL", message: "Something went wrong on our side; this call changed nothing. Try again in a moment." };
  return { content: [{ type: "text", text: JSON.stringify({ error: answer }) }], isError: true };
}

const productUrl = (deps: StorefrontMcpDeps, handle: string) => `${deps.origin}/products/${handle}`;

/** The width of an image an agent is given: 640 px or the largest made below it. */
const imageUrl = (deps: StorefrontMcpDeps, image: ProductImage | null | undefined) => {
  if (!image) return null;
  const width = [...image.widths].reverse().find((w) => w <= 640) ?? image.widths[0];
  return width === undefined ? null : `${deps.origin}${mediaPath(image.hash, width, "jpg")}`;
};

const availability = z.enum(["in_stock", "pre_order", "sold_out"]);
export const cardAnswer = z.object({
  product_id: z.string(),
  title: z.string(),
  handle: z.string(),
  url: z.string().describe("The product's page on this store's domain."),
  image_url: z.string().nullable(),
  price_range: z.object({ min: money }).describe("The lowest price of its variants, GST included."),
  compare_at_price: money.nullable().describe("The price it was before (a sale), for the variant of the lowest price."),
  on_sale: z.boolean(),
  available: z.boolean().describe("Something of it can be bought now: in stock online, or on pre-order."),
  availability: availability.describe("in_stock; pre_order: only on pre-order (ships when it arrives); sold_out."),
});

export function cardOf(deps: StorefrontMcpDeps, p: ProductCard): z.infer<typeof cardAnswer> {
  const currency = deps.store.currency;
  return {
    product_id: p.id,
    title: p.title,
    handle: p.handle,
    url: productUrl(deps, p.handle),
    image_url: imageUrl(deps, p.image),
    price_range: { min: moneyOf(p.fromPrice, currency) },
    compare_at_price: p.compareAt === null ? null : moneyOf(p.compareAt, currency),
    // No variant with a compare-at price: the statement's bool_or is null (not on sale).
    on_sale: p.onSale === true,
    available: p.available,
    availability: !p.available ? "sold_out" : p.preorderOnly ? "pre_order" : "in_stock",
  };
}

const stockState = z.enum(["in_stock", "pre_order", "out_of_stock"]);
export const productAnswer = z.object({
  product_id: z.string(),
  title: z.string(),
  handle: z.string(),
  url: z.string(),
  description: z.string(),
  vendor: z.string().nullable(),
  images: z.array(z.object({ url: z.string(), alt: z.string() })).describe("Its photos in the page's order (JPEG, at most 640 px wide)."),
  variants: z.array(
    z.object({
      product_variant_id: z.string().describe("Pass it to update_cart's add_items."),
      title: z.string().describe("The variant's options as the product page names them, e.g. \"M / Indigo\"."),
      sku: z.string().nullable(),
      price: money,
      compare_at_price: money.nullable(),
      image_url: z.string().nullable().describe("The photo the product page shows for this variant, if it has its own."),
      stock_state: stockState.describe("in_stock; pre_order: sold before it arrives (see preorder); out_of_stock: cannot be added to a cart."),
      available_quantity: z.number().int().describe("Units that can be bought now from stock (online); 0 when none. A pre-order variant can be ordered beyond it."),
    }),
  ),
  preorder: z
    .object({ deposit_percent: z.number(), words: z.string() })
    .nullable()
    .describe("How pre-ordered units are paid, when a variant is on pre-order."),
});

type Photos = { images: ProductImage[]; variantImage: Record<string, string> };

export function productOf(deps: StorefrontMcpDeps, p: ProductView, photos: Photos, depositPercent: number): z.infer<typeof productAnswer> {
  const currency = deps.store.currency;
  const byId = new Map(photos.images.map((i) => [i.id, i]));
  const preorder = p.variants.some((v) => v.preorder);
  return {
    product_id: p.id,
    title: p.title,
    handle: p.handle,
    url: productUrl(deps, p.handle),
    description: p.description,
    vendor: p.vendor,
    images: photos.images.flatMap((i) => {
      const url = imageUrl(deps, i);
      return url ? [{ url, alt: i.alt }] : [];
    }),
    variants: p.variants.map((v) => ({
      product_variant_id: v.id,
      title: v.title,
      sku: v.sku,
      price: moneyOf(v.price, currency),
      compare_at_price: v.compareAt !== null && v.compareAt > v.price ? moneyOf(v.compareAt, currency) : null,
      image_url: imageUrl(deps, byId.get(photos.variantImage[v.id] ?? "")),
      stock_state: v.preorder ? "pre_order" : v.available > 0 ? "in_stock" : "out_of_stock",
      available_quantity: Math.max(0, v.available),
    })),
    preorder: preorder
      ? {
          deposit_percent: depositPercent,
          words:
            depositPercent >= 100
              ? "Pre-orders are paid in full at checkout and ship when they arrive."
              : `Units in stock are paid in full; pre-ordered units beyond the stock pay ${depositPercent}% at checkout and the rest when they arrive.`,
        }
      : null,
  };
}

export const cartAnswer = z.object({
  cart_id: z.string().describe("Keep it to read or change this cart; it is this cart's key, so share it with no one else."),
  checkout_url: z.string().describe("Give this link to the shopper: it opens this cart in their browser at this store, where they enter their address and pay."),
  currency: z.string(),
  lines: z.array(
    z.object({
      id: z.string().describe("The line's id, for update_items and remove_line_ids."),
      product_variant_id: z.string(),
      product_title: z.string(),
      variant_title: z.string(),
      sku: z.string().nullable(),
      quantity: z.number().int(),
      unit_price: money,
      line_total: money,
      available_quantity: z.number().int().describe("Units that can be bought now (online stock)."),
    }),
  ),
  total_quantity: z.number().int(),
  discount_codes: z.array(z.object({ code: z.string(), applicable: z.boolean() })),
  cost: z.object({
    subtotal: money,
    discount: money,
    total: money.describe("Subtotal less the discount, GST included, before shipping."),
  }),
  taxes_and_shipping: z.string(),
});

const TAX_WORDS = "Prices include GST. Shipping, and the GST of each parcel, are shown at checkout once the shopper enters their address.";

export function cartOf(deps: StorefrontMcpDeps, token: string, cart: CartView): z.infer<typeof cartAnswer> {
  const currency = cart.currency || deps.store.currency;
  const m = (minor: number) => moneyOf(minor, currency);
  return {
    cart_id: token,
    checkout_url: `${deps.origin}/cart/open/${token}`,
    currency,
    lines: cart.lines.map((l) => ({
      id: l.id,
      product_variant_id: l.variantId,
      product_title: l.productTitle,
      variant_title: l.variantTitle,
      sku: l.sku,
      quantity: l.quantity,
      unit_price: m(l.unitPrice),
      line_total: m(l.lineTotal),
      available_quantity: Math.max(0, l.available),
    })),
    total_quantity: cart.lines.reduce((n, l) => n + l.quantity, 0),
    discount_codes: cart.discountCode ? [{ code: cart.discountCode, applicable: cart.discount > 0 }] : [],
    cost: { subtotal: m(cart.subtotal), discount: m(cart.discount), total: m(cart.total) },
    taxes_and_shipping: TAX_WORDS,
  };
}

