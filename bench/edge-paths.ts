/**
 * The request paths bench/edge.ts measures, each built afresh per request (a cold query, the next cart,
 * the next title) and checked on its answer. Round trips before the one-round-trip work (the issue's
 * baseline) are given where the issue counted them.
 */
import { buildLocalWebhook, type LocalWebhook } from "#shared/payments/local-protocol";
import { buyerHeaders } from "./checkout";
import { PORTS } from "./http";

export interface EdgeRequest {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

export type Floor = "floorApi" | "floorStorefront" | "floorWorker";

export interface EdgePath {
  name: string;
  /** What is asked, for the table. */
  request: string;
  /** The bare answer of the same Worker, whose p50 this path's is divided by. */
  floor: Floor;
  /** Round trips on the answer's path before this work (the table). */
  baseline?: number;
  note?: string;
  make(i: number): EdgeRequest | Promise<EdgeRequest>;
  expect(status: number, body: string): boolean;
  /** Sees each answer (checkout hands its payment's reference to the webhook). */
  answered?(body: string): void;
}

export interface EdgeSetup {
  /** The demo Owner's admin session cookie. */
  cookie: string;
  /** Created tokens with products:read, used in turn (120 calls a minute each). */
  tokens: string[];
  storeId: string;
  /** A cart with a line, read by GET /api/cart. */
  cartCookie: string;
  /** One fresh cart per checkout, made beforehand. */
  checkoutCarts: string[];
  /** The product whose title the write changes back and forth. */
  product: { id: string; title: string };
  /** The store's local-gateway secret (deriveLocalSecret of the bench Workers' root secret). */
  gatewaySecret: string;
}

const ADMIN = `http://127.0.0.1:${PORTS.admin}`;
const STOREFRONT = `http://127.0.0.1:${PORTS.storefront}`;
const WORKER = `http://127.0.0.1:${PORTS.worker}`;
const SHOP = { host: "demo.localhost" };
const JSON_TYPE = { "content-type": "application/json" };
const MCP = { ...JSON_TYPE, accept: "application/json, text/event-stream" };

export const CHECKOUT_INPUT = {
  email: "edge@example.test",
  shippingAddress: { name: "Edge Buyer", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
  paymentMethod: "gateway",
};

/** The title the write sets on request `i`: the product's own and a changed one in turn. */
export const titleFor = (product: EdgeSetup["product"], i: number) => (i % 2 === 0 ? `${product.title} (edge)` : product.title);

export function edgePaths(s: EdgeSetup): EdgePath[] {
  let token = 0;
  let cart = 0;
  const bearer = () => ({ authorization: `Bearer ${s.tokens[token++ % s.tokens.length]}` });
  const session = { cookie: s.cookie };
  const refs: string[] = [];
  const page = (status: number, body: string) => status === 200 && body.includes("<!doctype html>");
  return [
    { name: "floorApi", request: "GET /api/v1/products/list (405)", floor: "floorApi", make: () => ({ url: `${ADMIN}/api/v1/products/list` }), expect: (st) => st === 405 },
    { name: "floorStorefront", request: "GET /-s/x (404)", floor: "floorStorefront", make: () => ({ url: `${STOREFRONT}/-s/x`, headers: SHOP }), expect: (st) => st === 404 },
    // The worker Worker's bare answer, for its webhook: a path no route takes (404), no I/O.
    { name: "floorWorker", request: "GET /-/floor on the worker (404)", floor: "floorWorker", make: () => ({ url: `${WORKER}/-/floor` }), expect: (st) => st === 404 },
    {
      name: "tokenRead",
      request: "POST /api/v1/products/list (token)",
      floor: "floorApi",
      baseline: 8,
      make: () => ({ url: `${ADMIN}/api/v1/products/list`, method: "POST", headers: { ...JSON_TYPE, ...bearer() }, body: JSON.stringify({ json: { page: 1, pageSize: 20 } }) }),
      expect: (st, body) => st === 200 && body.includes('"total":'),
    },
    {
      name: "mcpToolsCall",
      request: "MCP tools/call listProducts",
      floor: "floorApi",
      baseline: 10,
      make: (i) => ({
        url: `${ADMIN}/api/mcp/demo`,
        method: "POST",
        headers: { ...MCP, ...bearer() },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 20 } } }),
      }),
      expect: (st, body) => st === 200 && body.includes("total") && !body.includes('"isError":true'),
    },
    {
      name: "mcpToolsList",
      request: "MCP tools/list",
      floor: "floorApi",
      make: (i) => ({ url: `${ADMIN}/api/mcp/demo`, method: "POST", headers: { ...MCP, ...bearer() }, body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }) }),
      expect: (st, body) => st === 200 && body.includes('"listProducts"'),
    },
    {
      name: "storefrontProductCold",
      request: "GET /products/cotton-kurta?c=<fresh>",
      floor: "floorStorefront",
      baseline: 7,
      make: (i) => ({ url: `${STOREFRONT}/products/cotton-kurta?c=${Date.now()}-${i}`, headers: SHOP }),
      expect: (st, body) => st === 200 && body.includes("Cotton Kurta"),
    },
    {
      name: "storefrontSearchCold",
      request: "GET /search?q=kurta&c=<fresh>",
      floor: "floorStorefront",
      baseline: 7,
      make: (i) => ({ url: `${STOREFRONT}/search?q=kurta&c=${Date.now()}-${i}`, headers: SHOP }),
      expect: page,
    },
    {
      name: "cartRead",
      request: "GET /api/cart",
      floor: "floorStorefront",
      make: () => ({ url: `${STOREFRONT}/api/cart`, headers: { ...SHOP, cookie: s.cartCookie } }),
      expect: (st, body) => st === 200 && body.includes('"cart":{'),
    },
    { name: "adminOrders", request: "GET /orders (session)", floor: "floorApi", baseline: 10, make: () => ({ url: `${ADMIN}/orders`, headers: session }), expect: page },
    { name: "adminHome", request: "GET / (session)", floor: "floorApi", baseline: 25, make: () => ({ url: `${ADMIN}/`, headers: session }), expect: page },
    {
      name: "rpcProductsList",
      request: "POST /api/rpc/products/list",
      floor: "floorApi",
      make: () => ({ url: `${ADMIN}/api/rpc/products/list`, method: "POST", headers: { ...JSON_TYPE, ...session }, body: JSON.stringify({ json: { page: 1, pageSize: 20 } }) }),
      expect: (st, body) => st === 200 && body.includes('"total":'),
    },
    {
      name: "rpcProductsUpdate",
      request: "POST /api/rpc/products/update (title)",
      floor: "floorApi",
      note: "the product's title changed and changed back in turn",
      make: (i) => ({ url: `${ADMIN}/api/rpc/products/update`, method: "POST", headers: { ...JSON_TYPE, ...session }, body: JSON.stringify({ json: { id: s.product.id, title: titleFor(s.product, i) } }) }),
      expect: (st) => st === 200,
    },
    {
      name: "checkout",
      request: "POST /api/checkout (local gateway)",
      floor: "floorStorefront",
      baseline: 27,
      note: "one line of cotton-kurta, the cart made beforehand; the gateway is the local one",
      make: () => {
        const cookie = s.checkoutCarts[cart++];
        if (!cookie) throw new Error("checkout: no cart left (bench/edge.ts makes one per checkout)");
        // Each from its own address with the local person check's token: a crowd, not one script (decision 0019).
        return { url: `${STOREFRONT}/api/checkout`, method: "POST", headers: { ...SHOP, ...JSON_TYPE, ...buyerHeaders(), cookie }, body: JSON.stringify({ ...CHECKOUT_INPUT, email: `edge-${cart}@example.test` }) };
      },
      expect: (st) => st === 201,
      answered: (body) => {
        const url = (JSON.parse(body) as { payment?: { redirectUrl?: string } }).payment?.redirectUrl ?? "";
        const ref = url.split("/-gateway/pay/")[1];
        if (!ref) throw new Error(`checkout: no local gateway page in the answer: ${body.slice(0, 200)}`);
        refs.push(decodeURIComponent(ref));
      },
    },
    {
      name: "paymentWebhook",
      request: "POST /webhooks/payments/local/<store> (captured)",
      floor: "floorWorker",
      note: "the local gateway's signed webhook for the checkout just placed (worker Worker); each from its own cf-connecting-ip so the per-address limit (120 a minute) does not refuse the run",
      make: async (i) => {
        const providerRef = refs.shift();
        if (!providerRef) throw new Error("paymentWebhook: no checkout to pay (it follows checkout in each round)");
        const hook: LocalWebhook | null = await buildLocalWebhook({ providerRef, outcome: "captured", secret: s.gatewaySecret, workerOrigin: WORKER });
        if (!hook) throw new Error("paymentWebhook: the reference is not this store's");
        return { url: hook.url, method: "POST", headers: { ...hook.headers, "cf-connecting-ip": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }, body: hook.body };
      },
      expect: (st, body) => st === 200 && body.includes('"applied":true'),
    },
  ];
}
