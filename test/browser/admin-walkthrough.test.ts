/**
 * A real-browser walkthrough of the admin: Chromium (playwright-core) against the admin Worker under
 * `wrangler dev`, on the seeded test database. Steps run in order on one page and share its session.
 * Screenshots of steps 2, 3 and 6 (and of any failing step) land in .data/screenshots/.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEMO_PASSWORD, DEMO_PEOPLE, DEMO_STORES, STORE_SEEDS } from "../../scripts/lib/seed";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MemoryOAuthClient } from "../oauth-client";
import { findChromium, launchChromium } from "./chromium";
import { SCREENSHOT_DIR, startAdminWorker, type AdminWorker } from "./support";

const PAGE_SIZE = 20;
const demoStore = DEMO_STORES.find((s) => s.slug === "demo")!;
const demoTitles = STORE_SEEDS.demo.products.map((p) => p.title);
const person = (role: "owner" | "staff") => DEMO_PEOPLE.find((p) => p.store === "demo" && p.role === role)!;

// One seeded product to search for, and every seeded product that search should return (title, handle or SKU).
const SEARCH = "Banarasi Silk Saree";
const searchMatches = STORE_SEEDS.demo.products
  .filter((p) => [p.title, p.handle, ...p.variants.map((v) => v.sku)].some((t) => t.toLowerCase().includes(SEARCH.toLowerCase())))
  .map((p) => p.title);

let browser: Browser | undefined;
let context: BrowserContext | undefined;
let page: Page;
let worker: AdminWorker | undefined;

/**
 * Set-up failures (no Chromium, the Worker not starting) are kept and thrown by the steps rather than by
 * beforeAll, so they count as failed tests (vitest would report the steps as skipped otherwise).
 */
let setupError: unknown;

beforeAll(async () => {
  try {
    const binary = await findChromium(); // no Chromium: fail at once, with the hint, before starting anything
    console.log(`[browser] Chromium from ${binary.source}`);
    const [b, w] = await Promise.allSettled([
      launchChromium(binary),
      startAdminWorker({ databaseUrl: inject("databaseUrl"), wsProxy: inject("wsProxy") }),
    ]);
    if (b.status === "fulfilled") browser = b.value;
    if (w.status === "fulfilled") worker = w.value;
    if (b.status === "rejected") throw b.reason;
    if (w.status === "rejected") throw w.reason;
    context = await browser!.newContext({ baseURL: worker!.url, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    // Local pages answer in milliseconds: short waits keep a failing step (and those after it) quick.
    page.setDefaultTimeout(5_000);
    page.setDefaultNavigationTimeout(10_000);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  } catch (e) {
    setupError = e;
  }
}, 90_000);

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
  await worker?.stop();
}, 30_000);

async function screenshot(name: string): Promise<string> {
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

let reportedSetupError = false;

/** Runs one step; on failure keeps a screenshot and the Worker's last output next to the error. */
function step(name: string, slug: string, fn: () => Promise<void>) {
  it(name, async () => {
    if (setupError) {
      if (reportedSetupError) throw new Error("Not run: the walkthrough's set-up failed (see the first step's error).");
      reportedSetupError = true;
      throw setupError;
    }
    try {
      await fn();
    } catch (e) {
      const shot = await screenshot(`failed-${slug}`).catch(() => "(none)");
      console.error(`[browser] step "${name}" failed at ${page.url()}; screenshot ${shot}\n[admin worker output]\n${worker?.output() ?? ""}`);
      throw e;
    }
  });
}

const pathOf = (p: Page) => new URL(p.url()).pathname;

/** Text of each body row of the page's table. */
async function rowTexts(): Promise<string[]> {
  return page.locator("table tbody tr").allInnerTexts();
}

/** Signs in through the form; a refused or failed sign-in fails here with what the page said. */
async function signIn(email: string): Promise<void> {
  await page.goto("/login");
  await page.fill("input[name=email]", email);
  await page.fill("input[name=password]", DEMO_PASSWORD);
  const answer = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/login");
  await page.click("form[action='/login'] button[type=submit]");
  const response = await answer;
  if (response.status() !== 303) {
    await page.waitForLoadState();
    const said = (await page.locator("body").innerText()).replace(/\s+/g, " ").slice(0, 300);
    throw new Error(`Signing in as ${email}: POST /login answered ${response.status()}, not a 303 redirect. The page says: ${said}`);
  }
  await page.waitForURL((u) => u.pathname !== "/login");
}

describe("admin walkthrough in Chromium", () => {
  step("1. /login shows the sign-in form; the owner signs in", "1-login", async () => {
    const response = await page.goto("/login");
    expect(response?.status()).toBe(200);
    await expect(page.locator("input[name=email]").count()).resolves.toBe(1);
    await expect(page.locator("input[name=password]").count()).resolves.toBe(1);
    await expect(page.locator("form[action='/login'] button[type=submit]").count()).resolves.toBe(1);
    await signIn(person("owner").email);
  });

  step("2. lands on / with the store's name and the role Owner", "2-home", async () => {
    expect(pathOf(page)).toBe("/");
    expect(await page.locator("h1").first().innerText()).toContain(demoStore.name);
    expect((await page.locator("[data-testid=role]").innerText()).trim()).toBe("Owner");
    await screenshot("2-home-owner");
  });

  step("3. products: seeded rows, search, and the pager to page 2", "3-products", async () => {
    await Promise.all([page.waitForURL((u) => u.pathname === "/products"), page.locator('a[href="/products"]').first().click()]);
    const firstPage = await rowTexts();
    expect(firstPage.length).toBeGreaterThan(0);
    expect(firstPage.length).toBeLessThanOrEqual(PAGE_SIZE);
    expect(firstPage.some((row) => demoTitles.some((t) => row.includes(t)))).toBe(true);

    // The pager: more seeded products than one page holds, so page 1 links to page 2.
    expect(demoTitles.length).toBeGreaterThan(PAGE_SIZE);
    const next = page.locator("a[rel=next]");
    expect(await next.count()).toBe(1);
    await Promise.all([page.waitForURL((u) => u.searchParams.get("page") === "2"), next.click()]);
    const secondPage = await rowTexts();
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage.some((row) => demoTitles.some((t) => row.includes(t)))).toBe(true);
    expect(secondPage.filter((row) => firstPage.includes(row))).toEqual([]);

    // Search for one seeded product: only the rows that match.
    await page.fill("input[name=query]", SEARCH);
    await Promise.all([page.waitForURL((u) => u.searchParams.get("query") === SEARCH), page.press("input[name=query]", "Enter")]);
    const found = await rowTexts();
    expect(found.length).toBe(searchMatches.length);
    for (const row of found) expect(searchMatches.some((t) => row.includes(t))).toBe(true);
    await screenshot("3-products-search");
  });

  step("4. settings shows the store's name", "4-settings", async () => {
    await Promise.all([page.waitForURL((u) => u.pathname === "/settings"), page.locator('a[href="/settings"]').first().click()]);
    expect((await page.locator("h1").first().innerText()).trim()).toBe("Settings");
    expect(await page.inputValue("input[name=name]")).toBe(demoStore.name);
  });

  step("5. sign out returns to /login", "5-logout", async () => {
    await Promise.all([page.waitForURL((u) => u.pathname === "/login"), page.locator('form[action="/logout"] button').first().click()]);
    expect(pathOf(page)).toBe("/login");
    expect(await page.locator("input[name=password]").count()).toBe(1);
  });

  step("6. staff signs in; /settings answers 403 in place", "6-staff", async () => {
    await signIn(person("staff").email);
    expect(pathOf(page)).toBe("/");
    expect((await page.locator("[data-testid=role]").innerText()).trim()).toBe("Staff");
    const response = await page.goto("/settings");
    expect(response?.status()).toBe(403);
    expect(await page.locator("body").innerText()).toContain("Your role does not allow");
    expect(pathOf(page)).toBe("/settings");
    await screenshot("6-staff-settings-403");
  });

  step("7. staff creates a token on MCP & API and lists the products with curl's request", "7-token", async () => {
    await page.goto("/");
    await Promise.all([page.waitForURL((u) => u.pathname === "/settings/api"), page.locator('a[href="/settings/api"]').first().click()]);
    await page.fill('form[action="/settings/api/tokens"] input[name=name]', "Walkthrough script");
    await page.check('input[name=areas][value="products:read"]');
    await Promise.all([page.waitForLoadState("load"), page.locator('form[action="/settings/api/tokens"] button[type=submit]').click()]);
    const token = await page.inputValue("#new-token");
    expect(token).toMatch(/^wc_live_/);
    expect(await page.locator("body").innerText()).toContain("shown only once");
    await screenshot("7-token-created");
    // The README's curl, from Node.
    const res = await fetch(`${worker!.url}/api/v1/products/list`, {
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
    const mcpUrl = new URL(`${worker!.url}/api/mcp/${demoStore.slug}`);
    const oauth = new MemoryOAuthClient("http://127.0.0.1:33419/callback", "Walkthrough MCP client");
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
    await expect(new Client({ name: "walkthrough", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(oauth.authorizationUrl).toBeDefined();
    // The member (signed in as Staff since step 6) consents in the real browser.
    await page.goto(oauth.authorizationUrl!.toString());
    expect(await page.locator("h1").first().innerText()).toContain("Walkthrough MCP client");
    await screenshot("8-mcp-consent");
    const callback = page.waitForRequest((r) => r.url().startsWith("http://127.0.0.1:33419/callback"));
    await page.locator('button[name=decision][value=approve]').click();
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
