/**
 * A real-browser walkthrough of the admin: Chromium (playwright-core) against the admin Worker under
 * `wrangler dev`, on the seeded test database. Steps run in order on one page and share its session.
 * Screenshots of steps 2, 3 and 6 (and of any failing step) land in .data/screenshots/.
 */
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { DEMO_PASSWORD, DEMO_PEOPLE, DEMO_STORES, STORE_SEEDS } from "../../scripts/lib/seed";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MemoryOAuthClient } from "../oauth-client";
import { startAdminWorker } from "./support";
import { signIn, walkthrough } from "./walkthrough";

const PAGE_SIZE = 20;
const demoStore = DEMO_STORES.find((s) => s.slug === "demo")!;
const demoTitles = STORE_SEEDS.demo.products.map((p) => p.title);
const person = (role: "owner" | "staff") => DEMO_PEOPLE.find((p) => p.store === "demo" && p.role === role)!;

// One seeded product to search for, and every seeded product that search should return (title, handle or SKU).
const SEARCH = "Banarasi Silk Saree";
const searchMatches = STORE_SEEDS.demo.products
  .filter((p) => [p.title, p.handle, ...p.variants.map((v) => v.sku)].some((t) => t.toLowerCase().includes(SEARCH.toLowerCase())))
  .map((p) => p.title);

const w = walkthrough({ start: startAdminWorker, viewport: { width: 1280, height: 900 } });
// Every page a step shows is checked by axe (walkthrough.ts): `check` on each page a step moves on from.
const { step, check } = w;

const pathOf = (p: Page) => new URL(p.url()).pathname;

/** Text of each body row of the page's table. */
async function rowTexts(): Promise<string[]> {
  return w.page.locator("table tbody tr").allInnerTexts();
}

const signInAs = (email: string) => signIn(w.page, email, DEMO_PASSWORD, "", check);

describe("admin walkthrough in Chromium", () => {
  step("1. /login shows the sign-in form; the owner signs in", "1-login", async () => {
    const response = await w.page.goto("/login");
    expect(response?.status()).toBe(200);
    await expect(w.page.locator("input[name=email]").count()).resolves.toBe(1);
    await expect(w.page.locator("input[name=password]").count()).resolves.toBe(1);
    await expect(w.page.locator("form[action='/login'] button[type=submit]").count()).resolves.toBe(1);
    await signInAs(person("owner").email);
  });

  step("2. lands on / with the store's name and the role Owner", "2-home", async () => {
    expect(pathOf(w.page)).toBe("/");
    expect(await w.page.locator("h1").first().innerText()).toContain(demoStore.name);
    expect((await w.page.locator("[data-testid=role]").innerText()).trim()).toBe("Owner");
    await w.screenshot("2-home-owner");
  });

  step("3. products: seeded rows, search, and the pager to page 2", "3-products", async () => {
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/products"), w.page.locator('a[href="/products"]').first().click()]);
    const firstPage = await rowTexts();
    await check();
    expect(firstPage.length).toBeGreaterThan(0);
    expect(firstPage.length).toBeLessThanOrEqual(PAGE_SIZE);
    expect(firstPage.some((row) => demoTitles.some((t) => row.includes(t)))).toBe(true);

    // The pager: more seeded products than one page holds, so page 1 links to page 2.
    expect(demoTitles.length).toBeGreaterThan(PAGE_SIZE);
    const next = w.page.locator("a[rel=next]");
    expect(await next.count()).toBe(1);
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("page") === "2"), next.click()]);
    const secondPage = await rowTexts();
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage.some((row) => demoTitles.some((t) => row.includes(t)))).toBe(true);
    expect(secondPage.filter((row) => firstPage.includes(row))).toEqual([]);
    await check();

    // Search for one seeded product: only the rows that match.
    await w.page.fill("input[name=query]", SEARCH);
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("query") === SEARCH), w.page.press("input[name=query]", "Enter")]);
    const found = await rowTexts();
    expect(found.length).toBe(searchMatches.length);
    for (const row of found) expect(searchMatches.some((t) => row.includes(t))).toBe(true);
    await w.screenshot("3-products-search");
  });

  step("4. settings shows the store's name", "4-settings", async () => {
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/settings"), w.page.locator('a[href="/settings"]').first().click()]);
    expect((await w.page.locator("h1").first().innerText()).trim()).toBe("Settings");
    expect(await w.page.inputValue("input[name=name]")).toBe(demoStore.name);
  });

  step("5. sign out returns to /login", "5-logout", async () => {
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/login"), w.page.locator('form[action="/logout"] button').first().click()]);
    expect(pathOf(w.page)).toBe("/login");
    expect(await w.page.locator("input[name=password]").count()).toBe(1);
  });

  step("6. staff signs in; /settings answers 403 in place", "6-staff", async () => {
    await signInAs(person("staff").email);
    expect(pathOf(w.page)).toBe("/");
    expect((await w.page.locator("[data-testid=role]").innerText()).trim()).toBe("Staff");
    await check();
    const response = await w.page.goto("/settings");
    expect(response?.status()).toBe(403);
    expect(await w.page.locator("body").innerText()).toContain("Your role does not allow");
    expect(pathOf(w.page)).toBe("/settings");
    await w.screenshot("6-staff-settings-403");
  });

  step("7. staff creates a token on MCP & API and lists the products with curl's request", "7-token", async () => {
    await w.page.goto("/");
    await check();
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/settings/api"), w.page.locator('a[href="/settings/api"]').first().click()]);
    await check();
    await w.page.fill('form[action="/settings/api/tokens"] input[name=name]', "Walkthrough script");
    await w.page.check('input[name=areas][value="products:read"]');
    await Promise.all([w.page.waitForLoadState("load"), w.page.locator('form[action="/settings/api/tokens"] button[type=submit]').click()]);
    const token = await w.page.inputValue("#new-token");
    expect(token).toMatch(/^wc_live_/);
    expect(await w.page.locator("body").innerText()).toContain("shown only once");
    await w.screenshot("7-token-created");
    // The README's curl, from Node.
    const res = await fetch(`${w.worker.url}/api/v1/products/list`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ json: { page: 1 } }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { json: { items: { title: string }[]; total: number } };
    expect(body.json.total).toBe(demoTitles.length);
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=120;w=60');
  });

  step("8. an MCP client connects with nothing but the URL: consent in the browser, then tools", "8-mcp", async () => {
    const mcpUrl = new URL(`${w.worker.url}/api/mcp/${demoStore.slug}`);
    const oauth = new MemoryOAuthClient("http://127.0.0.1:33419/callback", "Walkthrough MCP client");
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
    await expect(new Client({ name: "walkthrough", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(oauth.authorizationUrl).toBeDefined();
    // The member (signed in as Staff since step 6) consents in the real browser.
    await w.page.goto(oauth.authorizationUrl!.toString());
    expect(await w.page.locator("h1").first().innerText()).toContain("Walkthrough MCP client");
    await w.screenshot("8-mcp-consent");
    await check();
    const callback = w.page.waitForRequest((r) => r.url().startsWith("http://127.0.0.1:33419/callback"));
    await w.page.locator('button[name=decision][value=approve]').click();
    const code = new URL((await callback).url()).searchParams.get("code");
    expect(code).toBeTruthy();
    await first.finishAuth(code!);
    const client = new Client({ name: "walkthrough", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("listProducts");
    const result = await client.callTool({ name: "listProducts", arguments: { pageSize: 3 } });
    const body = JSON.parse((result as { content: { text: string }[] }).content[0]!.text) as { total: number };
    expect(body.total).toBe(demoTitles.length);
    await client.close();
  });
});
