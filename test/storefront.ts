import { eq } from "drizzle-orm";
import type { Database } from "#shared/db/database";
import { discount, product, productVariant } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { CHALLENGE_FIELD } from "#shared/challenge/challenge";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import worker from "../workers/storefront/index";
import { call } from "./call";
import { makeStore, type TestStore } from "./harness";

export interface ShopStore extends TestStore {
  productId: string;
  variantId: string;
  discountCode: string;
}

/** A test store whose fixture product is on sale (active; one variant priced 1000 with 5 in stock online). */
export async function makeShop(db: Database): Promise<ShopStore> {
  const s = await makeStore(db);
  return withStore(db, s.id, async (tx) => {
    const [p] = await tx.update(product).set({ status: "active" }).returning({ id: product.id });
    const [v] = await tx.select({ id: productVariant.id }).from(productVariant).where(eq(productVariant.productId, p!.id));
    const [d] = await tx.select({ code: discount.code }).from(discount);
    return { ...s, productId: p!.id, variantId: v!.id, discountCode: d!.code };
  });
}

export interface Answer {
  status: number;
  headers: Headers;
  body: { cart?: unknown; json?: { code: string; message: string; data?: Record<string, unknown> } } & Record<string, unknown>;
}

/**
 * A shopper at one store's hostname, keeping the wc_cart cookie between calls like a browser. Like a person's
 * browser, it holds a passed person check (the token of Turnstile's test keys, as the tests are configured),
 * which a door reads only past its threshold; a test of the check itself sends its own header.
 */
export class Shopper {
  cookie: string | undefined;

  constructor(readonly host: string) {}

  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, env: Record<string, unknown> = {}): Promise<Answer> {
    const h: Record<string, string> = { host: this.host, [CHALLENGE_FIELD]: DUMMY_TOKEN, ...headers };
    if (this.cookie) h["cookie"] = `wc_cart=${this.cookie}`;
    let payload: string | undefined;
    if (body instanceof URLSearchParams) {
      h["content-type"] ??= "application/x-www-form-urlencoded";
      payload = body.toString();
    } else if (typeof body === "string") {
      h["content-type"] ??= "application/json";
      payload = body;
    } else if (body !== undefined) {
      h["content-type"] ??= "application/json";
      payload = JSON.stringify(body);
    }
    const res = await call(worker, `http://storefront.test${path}`, { method, headers: h, body: payload, redirect: "manual" }, env);
    const set = /(?:^|,\s*)wc_cart=([^;]*)/.exec(res.headers.get("set-cookie") ?? "");
    if (set) this.cookie = set[1];
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : {} };
  }

  get = (path = "/api/cart") => this.send("GET", path);
  add = (variantId: string, quantity?: number) => this.send("POST", "/api/cart/lines", { variantId, quantity });
  setQuantity = (lineId: string, quantity: number) => this.send("PATCH", `/api/cart/lines/${lineId}`, { quantity });
  remove = (lineId: string) => this.send("DELETE", `/api/cart/lines/${lineId}`);
  applyCode = (code: string) => this.send("POST", "/api/cart/discount", { code });
  dropCode = () => this.send("DELETE", "/api/cart/discount");
  form = (path: string, fields: Record<string, string>, headers: Record<string, string> = { "sec-fetch-site": "same-origin" }) =>
    this.send("POST", path, new URLSearchParams(fields), headers);
}

export interface CartBody {
  id: string | null;
  currency: string;
  lines: { id: string; variantId: string; productTitle: string; variantTitle: string; sku: string | null; quantity: number; unitPrice: number; lineTotal: number; available: number }[];
  subtotal: number;
  discount: number;
  discountCode: string | null;
  total: number;
}

export const cartOf = (a: Answer): CartBody => a.body.cart as CartBody;
