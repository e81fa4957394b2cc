import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AppError, isAppError } from "#shared/core/errors";
import { CURRENT_STORE } from "#shared/db/openings";
import { together } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import { productImagesByHandlePlan } from "#shared/storefront/media";
import { paymentSettingsPlan } from "#shared/orders/holds";
import { CART_LINE_QUANTITY_MAX } from "#shared/db/schema";
import { CART_TOKEN, cartPlan, newCartToken } from "#shared/storefront/cart";
import { cartChangePlan, type CartChange } from "#shared/storefront/cart-changes";
import { productByHandlePlan } from "#shared/storefront/catalog";
import { contentParagraphs } from "#shared/storefront/content";
import { pagesAbout, publishedPagesPlan } from "#shared/storefront/pages";
import { searchPlan } from "#shared/storefront/search";
import { SEARCH_COUNT_CAP } from "#shared/storefront/statements";
import { sha256Hex } from "#shared/core/tokens";
import { toMinor } from "./catalog-read";
import { cardAnswer, cardOf, cartAnswer, cartOf, failure, json, productAnswer, productOf, type StorefrontMcpDeps } from "./storefront-mcp-answers";
import { registerCheckoutTools, type CheckoutToolDeps } from "./storefront-mcp-ucp";

export type { StorefrontMcpDeps } from "./storefront-mcp-answers";

/**
 * The Storefront MCP's tools (docs/storefront-mcp.md): what a shopper's AI agent may do at one store, on
 * the same plans as the pages (search, the product page, content pages, the cart and its changes), each
 * one unit of the store, one round trip. Names and arguments follow Shopify's Storefront MCP so agent
 * authors recognise them. Money is answered as the pages show it: the store's currency, GST included.
 */
export const STOREFRONT_MCP_INFO = { name: "edge-commerce-storefront", version: "1.0.0" } as const;

/** Results per search page at most, and how far a search pages (the search's count stops at 1,000). */
export const SEARCH_LIMIT_MAX = 50;
/** A policy page's text is cut here (a page of terms is a few thousand characters). */
const PAGE_TEXT_MAX = 20_000;
/** Changes of each kind in one update_cart (each is a few statements of its one unit). */
const LINES_MAX = 25;

// ——— Arguments ———

const priceBound = z.number().min(0).max(1e9);
const filter = z
  .strictObject({
    available: z.boolean().optional().describe("true: only products that can be bought now (in stock online, or on pre-order)."),
    price: z
      .strictObject({ min: priceBound.optional(), max: priceBound.optional() })
      .optional()
      .describe("Bounds of a product's lowest price, in major units of the store's currency (rupees for INR, GST included), e.g. {\"min\": 500, \"max\": 2000}."),
  })
  .describe("One or more filters; each object may hold one of them.");

const searchInput = z.strictObject({
  query: z.string().trim().min(1).max(200).describe("What the shopper wants, in words: \"blue cotton kurta\", a product name or a SKU. Typos are forgiven."),
  context: z.string().max(1000).optional().describe("Optional: what the shopper is after, in a sentence (accepted for compatibility; the search reads `query`)."),
  filters: z.array(filter).max(4).optional().describe("e.g. [{\"available\": true}, {\"price\": {\"min\": 500, \"max\": 2000}}]."),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).default(10).describe(`Products per page, 1 to ${SEARCH_LIMIT_MAX} (10 when absent).`),
  after: z
    .string()
    .regex(/^[1-9]\d{0,3}$/, "a cursor this tool answered (pagination.end_cursor)")
    .optional()
    .describe("pagination.end_cursor of the previous page, for the next one."),
});

const productInput = z.strictObject({
  product_id: z.string().trim().min(1).max(100).describe("A product_id from search_catalog, or the product's handle (the last part of its URL)."),
});

const policiesInput = z.strictObject({
  query: z.string().trim().max(200).optional().describe("Optional: what the shopper asks, e.g. \"returns\", \"shipping time\", \"privacy\". Without it, every published page."),
  context: z.string().max(1000).optional(),
});

const cartIdInput = z.string().max(100).describe("The cart_id that update_cart answered.");
const quantity = (min: number) => z.number().int().min(min).max(CART_LINE_QUANTITY_MAX);

const cartInput = z.strictObject({ cart_id: cartIdInput });

const updateCartInput = z.strictObject({
  cart_id: cartIdInput.optional().describe("The cart to change; absent: a new cart is made (and its cart_id answered)."),
  add_items: z
    .array(z.strictObject({ product_variant_id: z.uuid(), quantity: quantity(1).default(1) }))
    .max(LINES_MAX)
    .optional()
    .describe("Variants to add (product_variant_id from get_product); adding one the cart has raises its quantity."),
  update_items: z
    .array(z.strictObject({ id: z.uuid(), quantity: quantity(0) }))
    .max(LINES_MAX)
    .optional()
    .describe("Lines to change: the line's id from the cart's lines, and its new quantity (0 removes it)."),
  remove_line_ids: z.array(z.uuid()).max(LINES_MAX).optional().describe("Lines to remove, by id."),
  discount_codes: z
    .array(z.string().trim().min(1).max(40))
    .max(1)
    .optional()
    .describe("The discount code to apply (a cart holds one); [] removes the cart's code."),
});

/** The cart's changes in the order they apply: line updates and removals, then additions, then the code. */
function changesOf(input: z.infer<typeof updateCartInput>): CartChange[] {
  const changes: CartChange[] = [];
  for (const u of input.update_items ?? []) changes.push({ kind: "set", lineId: u.id, quantity: u.quantity });
  for (const id of input.remove_line_ids ?? []) changes.push({ kind: "set", lineId: id, quantity: 0 });
  for (const a of input.add_items ?? []) changes.push({ kind: "add", variantId: a.product_variant_id, quantity: a.quantity });
  if (input.discount_codes) {
    const [code] = input.discount_codes;
    changes.push(code === undefined ? { kind: "dropCode" } : { kind: "applyCode", code });
  }
  return changes;
}

/** Whether an update_cart call's arguments (as sent) apply a discount code: counted at the door as a code attempt. */
export function appliesCode(args: unknown): boolean {
  const codes = (args as { discount_codes?: unknown } | null)?.discount_codes;
  return Array.isArray(codes) && codes.length > 0;
}

const unknownCart = () => new AppError("NOT_FOUND", "No cart of this store has this cart_id. Make a new one with update_cart without a cart_id.", { reason: "unknown_cart" });

/** The cart's token, when the id could be one; else the same answer as an unknown cart (no database work). */
const tokenOf = (cartId: string) => {
  if (!CART_TOKEN.test(cartId)) throw unknownCart();
  return cartId;
};

// ——— The server ———

/**
 * The MCP server of one request: the store's five shopping tools, each one unit of the store, and UCP's five
 * checkout tools (./storefront-mcp-ucp.ts), listed whether or not the store sells to agents (a store that does
 * not answers them not_found).
 */
export function storefrontMcpServer(deps: StorefrontMcpDeps, checkout: CheckoutToolDeps): McpServer {
  const { db, store, log } = deps;
  const server = new McpServer(STOREFRONT_MCP_INFO, {
    capabilities: { tools: {} },
    instructions:
      `The shop "${store.name}". Find products with search_catalog, read one with get_product, answer questions about returns, shipping and privacy with get_store_policies, ` +
      `build a cart with update_cart and give the shopper its checkout_url: they pay on the store's own checkout page. Prices are in ${store.currency}, GST included. ` +
      "A store that sells to agents over UCP (its /.well-known/ucp profile) also runs checkouts with create_checkout, update_checkout and complete_checkout (meta[\"ucp-agent\"].profile on every call); " +
      "the buyer pays on the store's page at the checkout's continue_url.",
  });
  const run = async (tool: string, work: () => Promise<CallToolResult>) => {
    try {
      return await work();
    } catch (e) {
      return failure(log, tool, e);
    }
  };
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

  server.registerTool(
    "search_catalog",
    {
      title: "Search the store's products",
      description:
        `Searches ${store.name}'s products for sale by the shopper's words (typos forgiven), what can be bought first, then the best match. ` +
        "Filter by price (major units, GST included) and availability. Answers each product's id, title, URL, image, lowest price and availability; " +
        "call get_product with a product_id for its variants (sizes, colours) before adding to a cart.",
      inputSchema: searchInput,
      outputSchema: z.object({
        products: z.array(cardAnswer),
        total: z.number().int().describe("How many products matched (the count stops at 1,000)."),
        pagination: z.object({ has_next_page: z.boolean(), end_cursor: z.string().nullable() }),
        currency: z.string(),
      }),
      annotations: readOnly,
    },
    (input) =>
      run("search_catalog", async () => {
        const page = input.after ? Number(input.after) : 1;
        // The search counts to 1,000 and pages no further (as the search page stops at its last page).
        if ((page - 1) * input.limit >= SEARCH_COUNT_CAP) {
          throw new AppError("BAD_REQUEST", `A search pages through its first ${SEARCH_COUNT_CAP} products only; use the end_cursor it answered.`, { issues: [{ path: "after", message: "past the search's last page" }] });
        }
        const available = input.filters?.some((f) => f.available === true) ?? false;
        const bounds = input.filters?.find((f) => f.price)?.price;
        const query = {
          text: input.query,
          page,
          pageSize: input.limit,
          minPrice: toMinor(bounds?.min, store.currency),
          maxPrice: toMinor(bounds?.max, store.currency),
          inStockOnly: available,
        };
        const found = await sendStoreUnit(db, store.id, (q) => searchPlan(q, query));
        const seen = page * input.limit;
        const hasNext = (found.more || found.total > seen) && seen < SEARCH_COUNT_CAP;
        return json({
          products: found.items.map((p) => cardOf(deps, p)),
          total: found.total,
          pagination: { has_next_page: hasNext, end_cursor: hasNext ? String(page + 1) : null },
          currency: store.currency,
        });
      }),
  );

  server.registerTool(
    "get_product",
    {
      title: "Get a product with its variants",
      description:
        "One product for sale by its product_id (or handle): its description, photos and every variant with its id, options, price (GST included), compare-at price and stock state " +
        "(in_stock, pre_order or out_of_stock). Add a variant to a cart with update_cart's add_items.",
      inputSchema: productInput,
      outputSchema: z.object({ product: productAnswer, currency: z.string() }),
      annotations: readOnly,
    },
    (input) =>
      run("get_product", async () => {
        const id = z.uuid().safeParse(input.product_id);
        const key = id.success ? { id: id.data } : input.product_id.toLowerCase();
        if (typeof key === "string" && !/^[a-z0-9-]{1,100}$/.test(key)) throw noProduct();
        // The product page's own reads, in one unit: the product, the store's pre-order terms, the photos.
        const { product, settings, photos } = await sendStoreUnit(db, store.id, (q) =>
          together({ product: productByHandlePlan(q, key), settings: paymentSettingsPlan(q, CURRENT_STORE), photos: productImagesByHandlePlan(q, key) }),
        );
        if (!product) throw noProduct();
        return json({ product: productOf(deps, product, photos, settings.depositPercent), currency: store.currency });
      }),
  );

  server.registerTool(
    "get_store_policies",
    {
      title: "Read the store's policies and pages",
      description:
        "The store's published pages (returns and refunds, shipping, privacy, terms, contact, about…) with their URLs and text, the ones about the query first. " +
        "Use it to answer a shopper's questions about the store; quote the page's URL.",
      inputSchema: policiesInput,
      outputSchema: z.object({
        pages: z.array(z.object({ handle: z.string(), title: z.string(), url: z.string(), text: z.string(), updated_at: z.string() })),
        matched: z.boolean().describe("false when no page has the query's words: every page is answered instead."),
      }),
      annotations: readOnly,
    },
    (input) =>
      run("get_store_policies", async () => {
        const all = await sendStoreUnit(db, store.id, (q) => publishedPagesPlan(q));
        const { pages, matched } = pagesAbout(all, input.query);
        return json({
          pages: pages.map((p) => ({
            handle: p.handle,
            title: p.title,
            url: `${deps.origin}/pages/${p.handle}`,
            text: contentParagraphs(p.body).join("\n\n").slice(0, PAGE_TEXT_MAX),
            updated_at: new Date(p.updatedAt).toISOString(),
          })),
          matched,
        });
      }),
  );

  server.registerTool(
    "get_cart",
    {
      title: "Get a cart",
      description: "A cart by its cart_id: its lines with prices, the discount, the totals (GST included) and the checkout_url to give the shopper.",
      inputSchema: cartInput,
      outputSchema: z.object({ cart: cartAnswer }),
      annotations: readOnly,
    },
    (input) =>
      run("get_cart", async () => {
        const token = tokenOf(input.cart_id);
        const tokenHash = await sha256Hex(token);
        const cart = await sendStoreUnit(db, store.id, (q) => cartPlan(q, { tokenHash }));
        if (!cart.id) throw unknownCart();
        return json({ cart: cartOf(deps, token, cart) });
      }),
  );

  server.registerTool(
    "update_cart",
    {
      title: "Make or change a cart",
      description:
        "Without cart_id, makes a new cart; with it, changes that cart. In one call: add variants (add_items), change quantities (update_items; 0 removes), remove lines " +
        "(remove_line_ids), apply or remove a discount code (discount_codes). All of the changes apply or none (an error says which failed and why, e.g. not enough stock). " +
        "Answers the cart with its checkout_url: give that link to the shopper, who pays on the store's checkout page.",
      inputSchema: updateCartInput,
      outputSchema: z.object({ cart: cartAnswer }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) =>
      run("update_cart", async () => {
        const changes = changesOf(input);
        const fresh = input.cart_id === undefined ? await newCartToken() : undefined;
        const token = fresh?.token ?? tokenOf(input.cart_id!);
        const keys = { tokenHash: fresh ? null : await sha256Hex(token), freshHash: fresh?.hash ?? null };
        try {
          const { view } = await sendStoreUnit(db, store.id, (q) => cartChangePlan(q, keys, changes, { requireCart: true }), { readOnly: false });
          return json({ cart: cartOf(deps, token, view) });
        } catch (e) {
          if (isAppError(e) && e.data?.["reason"] === "unknown_code") deps.codeWasWrong();
          if (isAppError(e) && e.data?.["reason"] === "no_cart") throw unknownCart();
          throw e;
        }
      }),
  );

  registerCheckoutTools(server, checkout);
  return server;
}

const noProduct = () => new AppError("NOT_FOUND", "No product for sale at this store has this product_id or handle. Find one with search_catalog.", { reason: "unknown_product" });
