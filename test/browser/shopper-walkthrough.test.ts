/**
 * A shopper in a real browser: Chromium (playwright-core) against the storefront Worker under
 * `wrangler dev`, on the seeded test database, at http://demo.localhost:<port>/ (browsers resolve
 * *.localhost to this machine). Screenshots of each page land in .data/screenshots/shopper-*.png.
 */
import { describe, expect } from "vitest";
import { DEMO_STORES } from "../../scripts/lib/seed";
import { startStorefrontWorker } from "./support";
import { walkthrough } from "./walkthrough";

const demo = DEMO_STORES.find((s) => s.slug === "demo")!;

const w = walkthrough({
  start: startStorefrontWorker,
  viewport: { width: 390, height: 844 }, // a phone
  baseUrl: (url) => url.replace("127.0.0.1", "demo.localhost"),
  prefix: "shopper-",
  shootEachStep: true,
});
const { step } = w;

const total = (name: string) => w.page.locator(`[data-total=${name}]`).innerText();

describe("a shopper in Chromium", () => {
  step("1. the store's home page on its own hostname", "1-home", async () => {
    await w.page.goto("/");
    expect(await w.page.locator("h1").innerText()).toBe(demo.name);
    expect(await w.page.locator("ul.grid li").count()).toBeGreaterThan(0);
  });

  step("2. searches for kurta and opens the product", "2-search", async () => {
    await w.page.fill("input[name=q]", "kurta");
    await w.page.click("form[role=search] button[type=submit]");
    await w.page.waitForURL((u) => u.pathname === "/search");
    await w.page.click("text=Cotton Kurta");
    await w.page.waitForURL((u) => u.pathname === "/products/cotton-kurta");
    expect(await w.page.locator("h1").innerText()).toBe("Cotton Kurta");
    // M has stock only at the boutique, which does not sell online.
    expect(await w.page.locator("label:has-text('M ·') input[type=radio]").isDisabled()).toBe(true);
  });

  step("3. adds two variants to the cart", "3-added", async () => {
    await w.page.check("label:has-text('S ·') input[type=radio]");
    await w.page.click("form[action='/api/cart/lines'] button[type=submit]");
    await w.page.waitForURL((u) => u.pathname === "/cart");
    await w.page.goto("/products/cotton-kurta");
    await w.page.check("label:has-text('L ·') input[type=radio]");
    await w.page.click("form[action='/api/cart/lines'] button[type=submit]");
    await w.page.waitForURL((u) => u.pathname === "/cart");
    expect(await w.page.locator("table tbody tr").count()).toBe(2);
    expect(await total("subtotal")).toBe("₹2,598.00");
  });

  step("4. changes a quantity and applies WELCOME10: the totals follow", "4-totals", async () => {
    await w.page.fill("tr:has-text('Cotton Kurta · S') input[name=quantity]", "2");
    await w.page.click("tr:has-text('Cotton Kurta · S') button:has-text('Update')");
    await w.page.waitForLoadState();
    expect(await total("subtotal")).toBe("₹3,897.00");
    await w.page.fill("input[name=code]", "welcome10");
    await w.page.click("form[action='/api/cart/discount'] button:has-text('Apply')");
    await w.page.waitForLoadState();
    expect(await total("discount")).toBe("−₹389.70");
    expect(await total("total")).toBe("₹3,507.30");
  });

  step("5. an unknown code says so, and the cart is unchanged", "5-bad-code", async () => {
    await w.page.fill("input[name=code]", "NOPE");
    await w.page.click("form[action='/api/cart/discount'] button:has-text('Apply')");
    await w.page.waitForLoadState();
    expect(await w.page.locator("[role=alert]").innerText()).toContain("We don't know that discount code");
    expect(await total("total")).toBe("₹3,507.30");
  });
});
