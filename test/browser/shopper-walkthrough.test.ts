/**
 * A shopper in a real browser: Chromium (playwright-core) against the storefront Worker under
 * `wrangler dev`, on the seeded test database, at http://demo.localhost:<port>/ (browsers resolve
 * *.localhost to this machine). Screenshots of each page land in .data/screenshots/shopper-*.png.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEMO_STORES } from "../../scripts/lib/seed";
import { findChromium, launchChromium } from "./chromium";
import { SCREENSHOT_DIR, startStorefrontWorker, type AdminWorker } from "./support";

const demo = DEMO_STORES.find((s) => s.slug === "demo")!;

let browser: Browser | undefined;
let context: BrowserContext | undefined;
let page: Page;
let worker: AdminWorker | undefined;
let origin = "";
let setupError: unknown;

beforeAll(async () => {
  try {
    const [b, w] = await Promise.allSettled([
      findChromium().then(launchChromium),
      startStorefrontWorker({ databaseUrl: inject("databaseUrl"), wsProxy: inject("wsProxy") }),
    ]);
    if (b.status === "fulfilled") browser = b.value;
    if (w.status === "fulfilled") worker = w.value;
    if (b.status === "rejected") throw b.reason;
    if (w.status === "rejected") throw w.reason;
    origin = worker!.url.replace("127.0.0.1", "demo.localhost");
    context = await browser!.newContext({ baseURL: origin, viewport: { width: 390, height: 844 } }); // a phone
    page = await context.newPage();
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

const shot = (name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, `shopper-${name}.png`), fullPage: true });

let reported = false;
function step(name: string, slug: string, fn: () => Promise<void>) {
  it(name, async () => {
    if (setupError) {
      if (reported) throw new Error("Not run: the walkthrough's set-up failed (see the first step's error).");
      reported = true;
      throw setupError;
    }
    try {
      await fn();
      await shot(slug);
    } catch (e) {
      await shot(`failed-${slug}`).catch(() => {});
      console.error(`[browser] shopper step "${name}" failed at ${page.url()}\n[storefront worker output]\n${worker?.output() ?? ""}`);
      throw e;
    }
  });
}

const total = (name: string) => page.locator(`[data-total=${name}]`).innerText();

describe("a shopper in Chromium", () => {
  step("1. the store's home page on its own hostname", "1-home", async () => {
    await page.goto("/");
    expect(await page.locator("h1").innerText()).toBe(demo.name);
    expect(await page.locator("ul.grid li").count()).toBeGreaterThan(0);
  });

  step("2. searches for kurta and opens the product", "2-search", async () => {
    await page.fill("input[name=q]", "kurta");
    await page.click("form[role=search] button[type=submit]");
    await page.waitForURL((u) => u.pathname === "/search");
    await page.click("text=Cotton Kurta");
    await page.waitForURL((u) => u.pathname === "/products/cotton-kurta");
    expect(await page.locator("h1").innerText()).toBe("Cotton Kurta");
    // M has stock only at the boutique, which does not sell online.
    expect(await page.locator("label:has-text('M ·') input[type=radio]").isDisabled()).toBe(true);
  });

  step("3. adds two variants to the cart", "3-added", async () => {
    await page.check("label:has-text('S ·') input[type=radio]");
    await page.click("form[action='/api/cart/lines'] button[type=submit]");
    await page.waitForURL((u) => u.pathname === "/cart");
    await page.goto("/products/cotton-kurta");
    await page.check("label:has-text('L ·') input[type=radio]");
    await page.click("form[action='/api/cart/lines'] button[type=submit]");
    await page.waitForURL((u) => u.pathname === "/cart");
    expect(await page.locator("table tbody tr").count()).toBe(2);
    expect(await total("subtotal")).toBe("₹2,598.00");
  });

  step("4. changes a quantity and applies WELCOME10: the totals follow", "4-totals", async () => {
    await page.fill("tr:has-text('Cotton Kurta · S') input[name=quantity]", "2");
    await page.click("tr:has-text('Cotton Kurta · S') button:has-text('Update')");
    await page.waitForLoadState();
    expect(await total("subtotal")).toBe("₹3,897.00");
    await page.fill("input[name=code]", "welcome10");
    await page.click("form[action='/api/cart/discount'] button:has-text('Apply')");
    await page.waitForLoadState();
    expect(await total("discount")).toBe("−₹389.70");
    expect(await total("total")).toBe("₹3,507.30");
  });

  step("5. an unknown code says so, and the cart is unchanged", "5-bad-code", async () => {
    await page.fill("input[name=code]", "NOPE");
    await page.click("form[action='/api/cart/discount'] button:has-text('Apply')");
    await page.waitForLoadState();
    expect(await page.locator("[role=alert]").innerText()).toContain("We don't know that discount code");
    expect(await total("total")).toBe("₹3,507.30");
  });
});
