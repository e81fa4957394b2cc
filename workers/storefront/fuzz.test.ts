import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import { call } from "../../test/call";
import { answered, controlText, deepValue, expectNoServerError, fuzzRuns, hostileObject, hostileValue, hugeText, nulText, someId, wellFormed, wrongType } from "../../test/fuzz";
import { testDb } from "../../test/harness";
import { makeShop, type ShopStore } from "../../test/storefront";
import { app } from "./app";
import { shop } from "./shop";
import worker from "./index";

/**
 * Generated hostile input at every storefront route (issue 20 item 22; docs/decisions/0023-inputs-at-the-door.md).
 * The routes are read from the apps themselves (the public app's and the store's internal pages, whose
 * `/-s/:storeId` prefix a shopper never types), so a new route is fuzzed without a line here. Path
 * parameters, the query, JSON and form bodies and the cart cookie get values of every class; the property
 * is the admin suite's: never a 5xx, a 4xx says why, no SQL, file path or stack.
 */
const db = testDb();

const RUNS_PER_ROUTE = 8;

let s: ShopStore;

beforeAll(async () => {
  s = await makeShop(db);
});

interface Route {
  method: string;
  path: string;
}

/** Every route a shopper can reach, once each. */
function shopperRoutes(): Route[] {
  const seen = new Set<string>();
  const routes: Route[] = [];
  const add = (method: string, path: string) => {
    const methods = method === "ALL" ? ["GET", "POST"] : [method];
    for (const m of methods) {
      const key = `${m} ${path}`;
      if (!seen.has(key)) seen.add(key), routes.push({ method: m, path });
    }
  };
  for (const r of app.routes) if (r.path !== "/*") add(r.method, r.path);
  for (const r of shop.routes) if (r.path.startsWith("/-s/:storeId/")) add(r.method, r.path.slice("/-s/:storeId".length));
  return routes;
}

/** A path segment that URL-encodes (a lone surrogate goes as U+FFFD, as a browser sends it). */
const segment = (value: unknown) => encodeURIComponent(wellFormed(String(value)));

/** Names the storefront's forms, bodies and queries use, so values reach the checks behind the first. */
const FIELDS = {
  variantId: "string",
  quantity: "number",
  code: "string",
  email: "string",
  phone: "string",
  shippingAddress: "object",
  paymentMethod: "string",
  acceptsMarketing: "other",
  password: "string",
  return: "string",
  _method: "string",
  path: "string",
  k: "string",
  key: "string",
} as const;
const QUERY = ["q", "page", "sort", "min", "max", "k", "return", "cartError", "sig", "ref", "utm_source"];

const paramValue = fc.oneof(nulText, controlText, hugeText.map((t) => t.slice(0, 3_000)), someId, fc.constantFrom("fixture", "..", "%", "-s", "a/b"), fc.string({ maxLength: 12 }));
const queryValue = fc.oneof(nulText, controlText, fc.string({ maxLength: 12 }), fc.constantFrom("-1", "1e308", "NaN", "0", "99999999999"));
const query = fc.dictionary(fc.constantFrom(...QUERY), queryValue, { maxKeys: 4 });

type Body = { kind: "json"; value: unknown } | { kind: "form"; value: Record<string, string> } | { kind: "raw"; value: string; type: string };

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 3, arbitrary: hostileObject(FIELDS).map((value): Body => ({ kind: "json", value })) },
  {
    weight: 3,
    arbitrary: fc
      .dictionary(fc.constantFrom(...Object.keys(FIELDS), "shippingAddress.name", "shippingAddress.postalCode"), fc.oneof(nulText, controlText, hugeText, fc.string({ maxLength: 12 })), { maxKeys: 5 })
      .map((value): Body => ({ kind: "form", value })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("{", "[]", "null", '{"code": "\\u0000"}', `${"[".repeat(40_000)}${"]".repeat(40_000)}`, "a=%00&b=%ZZ", "\u0000"), fc.constantFrom("application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"))
      .map(([value, type]): Body => ({ kind: "raw", value, type })),
  },
);

const cookie = fc.option(fc.oneof(someId, nulText.map(segment), fc.string({ maxLength: 40 }).map(segment)), { nil: undefined });

function requestOf(route: Route, params: unknown[], q: Record<string, string>, b: Body | undefined, cartCookie: string | undefined): Request {
  let i = 0;
  const path = route.path.replace(/:[A-Za-z]+/g, () => segment(params[i++ % params.length]));
  const search = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, wellFormed(v)])).toString();
  const headers: Record<string, string> = {
    host: s.hostname,
    // A shopper of their own: the per-address limits never decide a case here.
    "cf-connecting-ip": `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
    "sec-fetch-site": "same-origin",
  };
  if (cartCookie) headers["cookie"] = `wc_cart=${cartCookie}`;
  let payload: string | undefined;
  if (b && route.method !== "GET") {
    if (b.kind === "json") (headers["content-type"] = "application/json"), (payload = JSON.stringify(b.value));
    else if (b.kind === "form") (headers["content-type"] = "application/x-www-form-urlencoded"), (payload = new URLSearchParams(Object.entries(b.value).map(([k, v]) => [k, wellFormed(v)])).toString());
    else (headers["content-type"] = b.type), (payload = b.value);
  }
  return new Request(`http://storefront.test${path}${search ? `?${search}` : ""}`, { method: route.method, headers, body: payload, redirect: "manual" });
}

describe("every storefront route, generated input", () => {
  it("path parameters, query, bodies and the cart cookie of every class", async () => {
    const routes = shopperRoutes();
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(fc.array(paramValue, { minLength: 1, maxLength: 2 }), query, fc.option(body, { nil: undefined }), cookie, async (params, q, b, c) => {
          const res = await call(worker, requestOf(route, params, q, b, c));
          expectNoServerError(`${route.method} ${route.path}`, { params, q, b: b && { ...b, value: JSON.stringify(b.value)?.slice(0, 200) }, c }, await answered(res));
        }),
        fuzzRuns(RUNS_PER_ROUTE),
      );
    }
  });

  it("the cart and checkout APIs with a real cart: every field of every class", async () => {
    const cart = await call(worker, new Request("http://storefront.test/api/cart/lines", { method: "POST", headers: { host: s.hostname, "content-type": "application/json" }, body: JSON.stringify({ variantId: s.variantId, quantity: 1 }) }));
    const cartCookie = /wc_cart=([^;]*)/.exec(cart.headers.get("set-cookie") ?? "")?.[1];
    const checkout = fc.record(
      {
        email: fc.oneof(fc.constant("buyer@example.test"), hostileValue),
        phone: fc.oneof(fc.constant("+919876543210"), hostileValue),
        shippingAddress: fc.oneof(
          fc.record({ name: fc.oneof(fc.constant("Asha"), nulText, controlText, hugeText), line1: fc.oneof(fc.constant("1 Road"), nulText), city: fc.constant("Mumbai"), state: fc.oneof(fc.constant("IN-MH"), wrongType), postalCode: fc.constant("400001"), country: fc.constant("IN") }, { requiredKeys: [] }),
          deepValue,
          hostileValue,
        ),
        paymentMethod: fc.oneof(fc.constantFrom("gateway", "manual_transfer"), hostileValue),
        acceptsMarketing: fc.oneof(fc.boolean(), hostileValue),
      },
      { requiredKeys: [] },
    );
    const routes: [string, string, fc.Arbitrary<unknown>][] = [
      ["POST", "/api/cart/discount", fc.record({ code: fc.oneof(fc.constant(s.discountCode), nulText, controlText, hugeText, hostileValue) })],
      ["POST", "/api/cart/lines", fc.record({ variantId: fc.oneof(fc.constant(s.variantId), hostileValue), quantity: fc.oneof(fc.integer({ min: -5, max: 10 }), hostileValue) }, { requiredKeys: [] })],
      ["POST", "/api/checkout", checkout],
    ];
    for (const [method, path, input] of routes) {
      await fc.assert(
        fc.asyncProperty(input, async (value) => {
          const res = await call(worker, requestOf({ method, path }, [], {}, { kind: "json", value }, cartCookie));
          expectNoServerError(`${method} ${path}`, value, await answered(res));
        }),
        fuzzRuns(RUNS_PER_ROUTE * 2),
      );
    }
  });
});
