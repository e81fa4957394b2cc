import { withStore } from "#shared/db/with-store";
import { UCP_VERSION } from "#shared/ucp/profile";
import worker from "../workers/storefront/index";
import { call } from "./call";
import { testDb, type TestStore } from "./harness";
import { makeShop, type ShopStore } from "./storefront";

/**
 * What the UCP checkout-session tests share (workers/storefront/ucp*.test.ts): a store with agentic checkout
 * on, a request as an agent sends it, the agent platforms they fetch profiles from, a ready session's body.
 */
export const db = testDb();
export const sql = (s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
export const ip = () => `198.19.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
export const AGENT = 'profile="https://agent.example.com/.well-known/ucp"';
export const BASE = "/api/ucp/checkout-sessions";

export type Json = Record<string, any>;

/**
 * The agent platforms of the tests, as the UCP_AGENT_FETCH binding (development and test only): each profile
 * URL answers a platform profile at our version, except the hosts named for a failure.
 */
export const fetched: string[] = [];
/** The keys a signing platform publishes (host `signed.…`). */
export const published: Record<string, unknown>[] = [];
const platforms = {
  async fetch(url: string): Promise<Response> {
    fetched.push(url);
    const host = new URL(url).host;
    if (host.startsWith("unreachable.")) throw new TypeError("fetch failed");
    const version = host.startsWith("old.") ? "2026-04-08" : UCP_VERSION;
    if (host.startsWith("malformed.")) return new Response("<html>", { headers: { "content-type": "text/html" } });
    // Platforms on hosts `hooks.…` (and the local one) take order updates at their profile's webhook URL.
    const hook = host.startsWith("hooks.") || host === "127.0.0.1:8789" ? { "dev.ucp.shopping.order": [{ version, config: { webhook_url: new URL("/orders", url).href } }] } : {};
    return Response.json({ ucp: { version, services: {}, capabilities: hook, payment_handlers: {} }, keys: host.startsWith("signed.") ? published : [] });
  },
};

export async function send(host: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, env: Record<string, unknown> = {}) {
  const h: Record<string, string> = { host, "cf-connecting-ip": headers["cf-connecting-ip"] ?? ip(), "ucp-agent": AGENT, ...headers };
  if (body !== undefined) h["content-type"] ??= "application/json";
  const init = { method, headers: h, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) };
  const res = await call(worker, `http://storefront.test${path}`, init, { UCP_AGENT_FETCH: platforms, ...env });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Json };
}

/** A store of the test's own with agentic checkout on, shipping ₹50 under ₹5,000. */
export async function shop(): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update store set agentic_checkout = true, shipping_fee_minor = 5000, free_shipping_over_minor = 500000 where id = $1", [s.id]);
  return s;
}

export const ADDRESS = { type: "shipping_address", id: "home", first_name: "Asha", last_name: "Rao", street_address: "12 MG Road", address_locality: "Pune", address_region: "IN-MH", postal_code: "411001", address_country: "IN" };
export const ready = (variantId: string, quantity: number, codes: string[] = []) => ({
  line_items: [{ item: { id: variantId }, quantity }],
  buyer: { email: "asha@example.com", first_name: "Asha" },
  fulfillment: { methods: [{ type: "shipping", destinations: [ADDRESS] }] },
  discounts: { codes },
});
export const paths = (body: Json) => (body["messages"] as Json[]).filter((m) => m["type"] === "error").map((m) => `${m["path"]} ${m["code"]}`);
export const total = (body: Json, type: string) => (body["totals"] as Json[]).find((t) => t["type"] === type)?.["amount"];
