/**
 * A merchant running the demo store from the admin in a real browser (issue 13): Chromium against the admin
 * and the storefront under `wrangler dev` (one local state, so the storefront sees the admin's changes at
 * once), on the seeded test database. As Owner: a product with two variants, its first stock, a price
 * changed and seen on the storefront, stock adjusted with the keyboard only, a customer, a discount created
 * and disabled, a page edited, previewed and published, a colleague invited who accepts in a second browser
 * and is then demoted. As Staff: no Delete, no Team; a shopper's order's packing slip printed, then the parcel shipped.
 * Screenshots: .data/screenshots/merchant-*.png.
 * Every name carries this run's suffix: the test database keeps what earlier runs made.
 */
import type { Page } from "playwright-core";
import { afterAll, describe, expect } from "vitest";
import { DEMO_PASSWORD, DEMO_PEOPLE } from "../../scripts/lib/seed";
import { adminRpcAs, startStorefrontWithAdmin } from "./support";
import { checkOutAndPay, signIn, walkthrough } from "./walkthrough";

const person = (role: "owner" | "staff") => DEMO_PEOPLE.find((p) => p.store === "demo" && p.role === role)!;
const run = Date.now().toString(36);
const PRODUCT = `Walkthrough Dupatta ${run}`;
const HANDLE = `walkthrough-dupatta-${run}`;
const SKU = (size: string) => `WD-${run}-${size}`.toUpperCase();
const CODE = `TOUR${run}`.toUpperCase();
const PAGE_HANDLE = `care-${run}`;
const COLLEAGUE = `colleague-${run}@example.test`;

const w = walkthrough({
  start: (db) => startStorefrontWithAdmin(db, { worker: false }),
  viewport: { width: 1280, height: 900 },
  baseUrl: (storefront) => storefront,
  prefix: "merchant-",
});
const { step } = w;
const admin = (path: string) => `${w.worker.admin.url}${path}`;
const shop = (path: string) => `${w.worker.url.replace("127.0.0.1", "demo.localhost")}${path}`;
const notice = () => w.page.locator("[role=status]").first().innerText();
/** Clicks and waits for the page the click leads to. */
async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForEvent("load"), page.locator(selector).first().click()]);
}
let productUrl = "";

// The demo store is shared with the other walkthroughs (which count its products): take back what this run
// made that they could see. The customer and the disabled code stay (their names carry the run's suffix).
afterAll(async () => {
  if (!w.worker) return;
  const rpc = await adminRpcAs(w.worker.admin.url, person("owner").email, DEMO_PASSWORD);
  const products = (await rpc("products/list", { query: HANDLE })) as { items: { id: string; handle: string }[] };
  for (const p of products.items.filter((x) => x.handle === HANDLE)) await rpc("products/delete", { id: p.id });
  const pages = (await rpc("content/list", { query: PAGE_HANDLE })) as { items: { id: string; handle: string }[] };
  for (const p of pages.items.filter((x) => x.handle === PAGE_HANDLE)) await rpc("content/publish", { id: p.id, published: false });
  const team = (await rpc("staff/list", {})) as { members: { id: string; email: string }[] };
  for (const m of team.members.filter((x) => x.email === COLLEAGUE)) await rpc("staff/remove", { memberId: m.id });
}, 30_000);

describe("a merchant runs the store from the admin", () => {
  step("1. the Owner's home: today, what waits, and every area in the navigation", "1-home", async () => {
    await signIn(w.page, person("owner").email, DEMO_PASSWORD, w.worker.admin.url);
    for (const path of ["/products", "/inventory", "/orders", "/customers", "/discounts", "/pages", "/team"]) {
      expect(await w.page.locator(`header nav a[href="${path}"]`).count(), path).toBe(1);
    }
    expect(await w.page.locator("#today-heading").count()).toBe(1);
    await w.screenshot("1-home-owner");
  });

  step("2. a product with two variants, then its first stock", "2-product", async () => {
    await w.page.goto(admin("/products"));
    await submit(w.page, 'a[href="/products/new"]');
    await w.page.fill("#title", PRODUCT);
    await w.page.selectOption("#status", "active");
    await w.page.fill("#handle", HANDLE);
    await w.page.fill("#v0-title", "Red");
    await w.page.fill("#v0-sku", SKU("red"));
    await w.page.fill("#v0-price", "799");
    await w.page.fill("#v1-title", "Blue");
    await w.page.fill("#v1-sku", SKU("blue"));
    await w.page.fill("#v1-price", "849.50");
    await submit(w.page, '#product-form button[value="save"]');
    expect(await notice()).toBe("Product created.");
    productUrl = w.page.url().split("?")[0]!;
    await w.page.selectOption("#stock-variant", { label: `Red (${SKU("red")})` });
    await w.page.fill("#stock-delta", "6");
    await submit(w.page, '#add-stock button[type="submit"]');
    expect(await notice()).toBe("Stock saved.");
    expect(await w.page.locator(`tr[data-stock^="${SKU("red")}@"]`).count()).toBe(1);
    await w.screenshot("2-product-created");
  });

  step("3. a price changed in the admin is the price on the storefront", "3-price", async () => {
    await w.page.fill("#v0-price", "749");
    await submit(w.page, '#product-form button[value="save"]');
    expect(await notice()).toBe("Product saved.");
    await w.page.goto(shop(`/products/${HANDLE}`));
    const text = await w.page.locator("main").innerText();
    expect(text).toContain("₹749.00");
    expect(text).not.toContain("₹799.00");
    await w.screenshot("3-storefront-price");
  });

  step("4. stock adjusted on /inventory with the keyboard only", "4-inventory", async () => {
    await w.page.goto(admin(`/inventory?query=${SKU("red")}`));
    const row = w.page.locator(`tr[data-level^="${SKU("red")}@"]`);
    expect(await row.count()).toBe(1);
    await row.locator('input[name="delta"]').focus();
    await w.page.keyboard.type("-2");
    await w.page.keyboard.press("Tab");
    await w.page.keyboard.press("ArrowDown"); // received → correction
    await w.page.keyboard.press("Shift+Tab");
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "adjusted"), w.page.keyboard.press("Enter")]);
    expect(await notice()).toBe("Stock adjusted.");
    expect(await w.page.locator(`tr[data-level^="${SKU("red")}@"] td.num`).first().innerText()).toBe("4");
    await w.screenshot("4-inventory-adjusted");
  });

  step("5. a customer, with a mistake corrected by its field", "5-customer", async () => {
    await w.page.goto(admin("/customers/new"));
    await w.page.fill("#email", `shopper-${run}@example.test`);
    await w.page.fill("#phone", "98765 43210");
    await w.page.fill("#firstName", "Kavya");
    await submit(w.page, '#customer-form button[type="submit"]');
    expect(await w.page.locator("#phone-error").innerText()).toContain("E.164");
    expect(await w.page.inputValue("#firstName")).toBe("Kavya");
    await w.page.fill("#phone", "+919876543210");
    await submit(w.page, '#customer-form button[type="submit"]');
    expect(await notice()).toBe("Customer added.");
    await w.screenshot("5-customer");
  });

  step("6. a discount created, then disabled", "6-discount", async () => {
    await w.page.goto(admin("/discounts"));
    await w.page.fill("#new-code", CODE);
    await w.page.fill("#new-value", "15");
    await submit(w.page, '#new-discount button[type="submit"]');
    expect(await notice()).toBe("Discount created.");
    await submit(w.page, `tr[data-discount="${CODE}"] button[value="disable"]`);
    expect(await notice()).toContain("Discount disabled");
    expect(await w.page.locator(`tr[data-discount="${CODE}"] [data-status]`).first().getAttribute("data-status")).toBe("disabled");
    await w.screenshot("6-discount-disabled");
  });

  step("7. a page written, previewed, published and read on the storefront", "7-page", async () => {
    await w.page.goto(admin("/pages"));
    await w.page.fill("#title", "Caring for silk");
    await w.page.fill("#handle", PAGE_HANDLE);
    await w.page.fill("#body", "Dry clean only.");
    await submit(w.page, '#page-form button[value="save"]');
    expect(await notice()).toBe("Draft created.");
    await w.page.fill("#body", "Dry clean only.\n\nStore folded in muslin.");
    await submit(w.page, '#page-form button[value="preview"]');
    expect(await w.page.locator("[data-preview] p").allInnerTexts()).toEqual(["Dry clean only.", "Store folded in muslin."]);
    await submit(w.page, '#page-form button[value="save"]');
    await submit(w.page, 'button[value="publish"]');
    expect(await notice()).toContain("Page published");
    await w.page.goto(shop(`/pages/${PAGE_HANDLE}`));
    expect(await w.page.locator("main").innerText()).toContain("Store folded in muslin.");
    await w.screenshot("7-page-published");
  });

  step("8. a colleague invited, who accepts in a second browser, then is demoted to Staff", "8-team", async () => {
    await w.page.goto(admin("/team"));
    await w.page.fill("#invite-email", COLLEAGUE);
    await w.page.selectOption("#invite-role", "admin");
    await submit(w.page, '#invite button[type="submit"]');
    const link = await w.page.inputValue("#invite-link");
    expect(link).toContain("/invite/");
    await w.screenshot("8-invited");
    const colleague = await w.otherBrowser();
    await colleague.goto(link);
    await colleague.fill("#name", "Walkthrough Colleague");
    await colleague.fill("#password", "a long enough password");
    await Promise.all([colleague.waitForURL((u) => !u.pathname.startsWith("/invite")), colleague.click('button[type="submit"]')]);
    expect((await colleague.locator("[data-testid=role]").innerText()).trim()).toBe("Admin");
    await w.page.goto(admin("/team"));
    const row = w.page.locator(`tr[data-member="${COLLEAGUE}"]`);
    await row.locator("select").selectOption("staff");
    await submit(w.page, `tr[data-member="${COLLEAGUE}"] button[value="role"]`);
    expect(await notice()).toBe("Role changed.");
    expect(await w.page.locator(`tr[data-member="${COLLEAGUE}"] [data-role]`).getAttribute("data-role")).toBe("staff");
    await colleague.reload();
    expect((await colleague.locator("[data-testid=role]").innerText()).trim()).toBe("Staff");
  });

  step("9. Staff: the product without Delete, no Team in the navigation, /team the 403 page", "9-staff", async () => {
    await w.page.goto(admin("/"));
    await submit(w.page, 'form[action="/logout"] button');
    await signIn(w.page, person("staff").email, DEMO_PASSWORD, w.worker.admin.url);
    expect(await w.page.locator('header nav a[href="/team"]').count()).toBe(0);
    await w.page.goto(productUrl);
    expect(await w.page.locator("text=Delete…").count()).toBe(0);
    expect(await w.page.locator('button[value="archive"]').count()).toBe(1);
    const refused = await w.page.goto(admin("/team"));
    expect(refused?.status()).toBe(403);
    await w.screenshot("9-staff-team-403");
  });

  step("10. Staff print a paid order's packing slip before packing, then ship the parcel: the slip names its AWB", "10-packing-slip", async () => {
    // A shopper's order of one kurta, its unit first put back on the shelf (runs on one database never run out).
    const rpc = await adminRpcAs(w.worker.admin.url, person("owner").email, DEMO_PASSWORD);
    const { items } = (await rpc("inventory/levels", { query: "KURTA-COT-S", pageSize: 10 })) as { items: { variantId: string; locationId: string; onHand: number }[] };
    const shelf = items.reduce((a, b) => (b.onHand > a.onHand ? b : a));
    await rpc("inventory/adjust", { variantId: shelf.variantId, locationId: shelf.locationId, delta: 1, reason: "received", note: "Merchant walkthrough" });
    await w.page.goto(shop("/products/cotton-kurta"));
    await w.page.check("label:has-text('S ·') input[type=radio]");
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/cart"), w.page.click("form[action='/api/cart/lines'] button[type=submit]")]);
    await w.page.goto(shop("/checkout"));
    const orderPage = await checkOutAndPay(w.page, {
      email: `slip-${run}@example.test`,
      phone: "+919812345678",
      name: "Meera Iyer",
      line1: "4 Residency Road",
      city: "Bengaluru",
      postalCode: "560025",
      state: "IN-KA",
    });
    const orderId = orderPage.pathname.split("/")[2]!;

    await w.page.goto(admin(`/orders/${orderId}`));
    await Promise.all([
      w.page.waitForURL((u) => u.pathname.startsWith(`/orders/${orderId}/parcels/`) && u.pathname.endsWith("/packing-slip")),
      w.page.locator("#parcels a:text-is('Packing slip')").first().click(),
    ]);
    const slip = w.page.locator("article.document");
    expect(await slip.locator("h1").innerText()).toBe("Packing slip");
    expect(await slip.locator(".parties").innerText()).toMatch(/SHIP TO\s+Meera Iyer\s+4 Residency Road\s+Bengaluru 560025\s+Karnataka, India\s+Phone: \+919812345678/i);
    expect(await slip.locator("table.lines tbody tr").allInnerTexts()).toEqual([expect.stringMatching(/^Cotton Kurta — S\s+KURTA-COT-S\s+1$/)]);
    expect(await slip.innerText()).not.toMatch(/₹|AWB/);
    expect(await w.page.locator("button[data-print]").isVisible()).toBe(true);
    // The printed form: the slip alone, no admin menus, no Print button.
    await w.page.emulateMedia({ media: "print" });
    expect(await w.page.locator("header.bar").isVisible()).toBe(false);
    expect(await w.page.locator("button[data-print]").isVisible()).toBe(false);
    await w.screenshot("10-packing-slip");
    await w.page.emulateMedia({ media: null });

    // Packed: shipped with the store's courier; the slip now names the courier and the AWB.
    const slipUrl = w.page.url();
    await w.page.goto(admin(`/orders/${orderId}`));
    const ship = w.page.locator("form[data-action=fulfill]");
    while (await ship.count()) {
      await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "fulfill"), ship.locator("button[type=submit]").click()]);
    }
    await w.page.goto(slipUrl);
    expect(await slip.innerText()).toMatch(/AWB: \S+/);
  });
});
