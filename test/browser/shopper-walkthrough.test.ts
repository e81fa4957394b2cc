/**
 * A shopper in a real browser: Chromium (playwright-core) against the storefront Worker under
 * `wrangler dev`, on the seeded test database, at http://demo.localhost:<port>/ (browsers resolve
 * *.localhost to this machine). The admin Worker runs beside it on the same local state (the HOSTS KV
 * namespace it writes after a commit is the one the storefront reads), so the demo Owner can turn the
 * storefront password on and off and make a short link in the same run. The shipped order's tax invoice
 * is opened and its PDF fetched, and the shipped email's HTML part is shown as a mail client would. Screenshots
 * of each page land in .data/screenshots/shopper-*.png.
 */
import { afterAll, describe, expect } from "vitest";
import { DEMO_PASSWORD, DEMO_STORES, STORE_SEEDS } from "../../scripts/lib/seed";
import { openTheStore, owner, ownerRpc, photographTheKurta, photos } from "./shopper-fixture";
import { startStorefrontWithAdmin } from "./support";
import { checkOutAndPay, signIn, walkthrough } from "./walkthrough";

const demo = DEMO_STORES.find((s) => s.slug === "demo")!;
const festive = STORE_SEEDS.demo.collections!.find((c) => c.handle === "festive-edit")!;
/** Every active kurta of the demo store, whatever its title says besides. */
const kurtas = STORE_SEEDS.demo.products.filter((p) => p.status === "active" && /\bkurta\b/i.test(p.title)).map((p) => p.title);
/** The collection's cards: its active products, in the collection's order. */
const festiveTitles = festive.products.map((h) => STORE_SEEDS.demo.products.find((p) => p.handle === h)!).filter((p) => p.status === "active").map((p) => p.title);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** The demo store's address on the storefront Worker (browsers resolve *.localhost to this machine). */
const storeUrl = (workerUrl: string) => workerUrl.replace("127.0.0.1", "demo.localhost");
const w = walkthrough({
  start: async (db) => {
    const workers = await startStorefrontWithAdmin(db);
    try {
      await openTheStore(workers.admin);
      await photographTheKurta(workers.admin);
    } catch (e) {
      await workers.stop();
      throw e;
    }
    return workers;
  },
  viewport: PHONE,
  baseUrl: storeUrl,
  prefix: "shopper-",
  shootEachStep: true,
});
// axe checks every page (walkthrough.ts): the helpers below check the page they leave, steps the pages they click on from.
const { step, check } = w;

// What the steps below leave behind until they undo it themselves.
const left = { passwordOn: false, linkSlug: null as string | null, orderUrl: null as string | null, mailSeconds: 0 };
afterAll(async () => {
  if (!w.worker || (!left.passwordOn && !left.linkSlug && photos.attached.length === 0)) return;
  const rpc = await ownerRpc(w.worker.admin);
  for (const id of photos.attached) await rpc("media/remove", { productId: photos.productId, id });
  if (left.passwordOn) await rpc("store/update", { storefrontPassword: null });
  if (left.linkSlug) {
    const { items } = (await rpc("links/list", { pageSize: 100 })) as { items: { id: string; slug: string }[] };
    const link = items.find((l) => l.slug === left.linkSlug);
    if (link) await rpc("links/delete", { id: link.id });
  }
}, 30_000);

/** The admin at a desktop's size, or the storefront at a phone's, on the one page of the walkthrough. */
async function inAdmin(path: string): Promise<void> {
  await check();
  await w.page.setViewportSize(DESKTOP);
  await w.page.goto(`${w.worker.admin.url}${path}`);
}
async function onStore(path: string): Promise<void> {
  await check();
  await w.page.setViewportSize(PHONE);
  await w.page.goto(path);
}

/** Saves the admin's Settings form and waits for its notice. */
async function saveSettings(): Promise<void> {
  await check();
  await Promise.all([w.page.waitForURL((u) => u.searchParams.get("saved") === "1"), w.page.click("form[action='/settings'] button[type=submit]")]);
  expect(await w.page.locator("[role=status]").innerText()).toContain("Settings saved.");
}

const passwordForm = () => w.page.locator("form[action='/api/storefront/password'] input[name=password]");
const STORE_PASSWORD = `walkthrough-${Date.now().toString(36)}`;
const LINK_SLUG = `tour-${Date.now().toString(36)}`;
const linkRow = () => w.page.locator(`tr[data-slug="${LINK_SLUG}"]`);

const total = (name: string) => w.page.locator(`[data-total=${name}]`).innerText();
/** This run's shopper: a fresh address, so the marketing consent it asks for is new on every run on one database. */
const SHOPPER_EMAIL = `walkthrough+${Date.now().toString(36)}@example.test`;

describe("a shopper in Chromium", () => {
  step("1. the store's home page on its own hostname", "1-home", async () => {
    await w.page.goto("/");
    expect(await w.page.locator("h1").innerText()).toBe(demo.name);
    expect(await w.page.locator("ul.grid li").count()).toBeGreaterThan(0);
  });

  step("2. opens a collection from the store's menu: its products in the merchant's order", "2-collection", async () => {
    await Promise.all([w.page.waitForURL((u) => u.pathname === `/collections/${festive.handle}`), w.page.click(`nav.menu a:text-is("${festive.title}")`)]);
    expect(await w.page.locator("h1").innerText()).toBe(festive.title);
    expect(await w.page.locator("nav.menu a[aria-current=page]").innerText()).toBe(festive.title);
    expect(await w.page.locator("ul.grid li strong").allInnerTexts()).toEqual(festiveTitles);
  });

  step("3. searches with a typo, kurtha: the kurtas are found", "3-search-typo", async () => {
    await w.page.fill("#q", "kurtha");
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/search" && u.searchParams.get("q") === "kurtha"), w.page.click("header.shop form[role=search] button[type=submit]")]);
    const found = await w.page.locator("ul.grid li strong").allInnerTexts();
    expect(found).toEqual(expect.arrayContaining(kurtas));
  });

  step("4. opens the Cotton Kurta: its photos, and the chosen size's photo comes first", "4-product-gallery", async () => {
    await Promise.all([w.page.waitForURL((u) => u.pathname === "/products/cotton-kurta"), w.page.click("ul.grid a:has-text('Cotton Kurta')")]);
    expect(await w.page.locator("h1").innerText()).toBe("Cotton Kurta");
    // M has stock only at the boutique, which does not sell online.
    expect(await w.page.locator("label:has-text('M ·') input[type=radio]").isDisabled()).toBe(true);
    const gallery = w.page.locator("ol.gallery[aria-label=Photos]");
    expect(await gallery.locator("li img").count()).toBeGreaterThanOrEqual(2);
    for (const img of await gallery.locator("li img").all()) expect(await img.getAttribute("alt")).toBeTruthy();
    // The large photo is loaded with the page (the others may wait until scrolled to).
    expect(await gallery.locator("li img").first().evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
    // A size that can be bought and has a photo of its own, not the one in front: choosing it brings that photo forward.
    const photoOf = JSON.parse((await gallery.getAttribute("data-variant-images")) ?? "{}") as Record<string, string>;
    const inFront = await gallery.locator("li").first().getAttribute("data-image");
    const radio = (variantId: string) => w.page.locator(`input[name=variantId][value="${variantId}"]`);
    let chosen: [string, string] | undefined;
    for (const [variantId, imageId] of Object.entries(photoOf)) if (!chosen && imageId !== inFront && (await radio(variantId).isEnabled())) chosen = [variantId, imageId];
    expect(chosen, "a size of the Cotton Kurta with a photo of its own").toBeDefined();
    await radio(chosen![0]).check();
    expect(await gallery.locator("li").first().getAttribute("data-image")).toBe(chosen![1]);
  });

  step("5. adds two variants to the cart", "5-added", async () => {
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

  step("6. changes a quantity and applies WELCOME10: the totals follow", "6-totals", async () => {
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

  step("7. an unknown code says so, and the cart is unchanged", "7-bad-code", async () => {
    await w.page.fill("input[name=code]", "NOPE");
    await w.page.click("form[action='/api/cart/discount'] button:has-text('Apply')");
    await w.page.waitForLoadState();
    expect(await w.page.locator("[role=alert]").innerText()).toContain("We don't know that discount code");
    expect(await total("total")).toBe("₹3,507.30");
  });

  step("8. the Owner turns the storefront password on in the admin: the store answers its password page", "8-password-page", async () => {
    await w.page.setViewportSize(DESKTOP);
    await signIn(w.page, owner.email, DEMO_PASSWORD, w.worker.admin.url, check);
    await inAdmin("/settings");
    await w.page.fill("input[name=storefrontPassword]", STORE_PASSWORD);
    left.passwordOn = true;
    await saveSettings();
    expect(await w.page.locator("form[action='/settings']").innerText()).toContain("On: shoppers need the password.");
    await onStore("/products/cotton-kurta");
    expect(await w.page.locator("h1").innerText()).toBe(demo.name);
    expect(await passwordForm().count()).toBe(1);
    expect(await w.page.locator("text=Cotton Kurta").count()).toBe(0);
  });

  step("9. enters the password and is back on the page asked for", "9-password-entered", async () => {
    await w.page.fill("form[action='/api/storefront/password'] input[name=password]", STORE_PASSWORD);
    await Promise.all([
      w.page.waitForURL((u) => u.pathname === "/products/cotton-kurta"),
      w.page.click("form[action='/api/storefront/password'] button[type=submit]"),
    ]);
    expect(await w.page.locator("h1").innerText()).toBe("Cotton Kurta");
    await onStore("/");
    expect(await w.page.locator("ul.grid li").count()).toBeGreaterThan(0);
  });

  step("10. the Owner turns the password off: a new shopper sees the store without one", "10-password-off", async () => {
    await inAdmin("/settings");
    await w.page.check("input[name=removeStorefrontPassword]");
    await saveSettings();
    left.passwordOn = false;
    expect(await w.page.locator("form[action='/settings']").innerText()).toContain("Off: the storefront is open.");
    const stranger = await w.page.context().browser()!.newContext({ viewport: PHONE });
    try {
      const fresh = await stranger.newPage();
      await fresh.goto(storeUrl(w.worker.url));
      expect(await fresh.locator("h1").innerText()).toBe(demo.name);
      expect(await fresh.locator("form[action='/api/storefront/password']").count()).toBe(0);
      expect(await fresh.locator("ul.grid li").count()).toBeGreaterThan(0);
      await check(fresh);
    } finally {
      await stranger.close();
    }
  });

  step("11. the Owner makes a short link on the admin's Links page", "11-link-created", async () => {
    await inAdmin("/links");
    await w.page.fill("#slug", LINK_SLUG);
    await w.page.fill("#target", "/products/cotton-kurta");
    await w.page.fill("#utm_source", "walkthrough");
    await w.page.fill("#utm_medium", "qr");
    await w.page.fill("#utm_campaign", "draft");
    left.linkSlug = LINK_SLUG;
    await check();
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "created"), w.page.click("form:has(input[name=action][value=create]) button[type=submit]")]);
    expect(await w.page.locator("[role=status]").innerText()).toContain("Short link created.");
    expect(await linkRow().locator("td[data-clicks]").innerText()).toBe("0");
  });

  step("12. the Owner edits the link: a bad target is named next to its field, then the fixed one is saved", "12-link-edited", async () => {
    await Promise.all([w.page.waitForURL((u) => u.searchParams.has("edit")), w.page.click(`a[aria-label="Edit ${LINK_SLUG}"]`)]);
    expect(await w.page.inputValue("#edit-utm_campaign")).toBe("draft");
    await check();
    await w.page.fill("#edit-utm_campaign", "tour");
    await w.page.fill("#edit-target", "products/cotton-kurta");
    await Promise.all([w.page.waitForLoadState("load"), w.page.click("form#edit button[type=submit]")]);
    expect(await w.page.locator("#edit-target-error").innerText()).toContain("a path that starts with a single /");
    expect(await w.page.inputValue("#edit-target")).toBe("products/cotton-kurta");
    expect(await w.page.inputValue("#edit-utm_campaign")).toBe("tour");
    await check();
    await w.screenshot("12-link-edit-refused");
    await w.page.fill("#edit-target", "/products/cotton-kurta");
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "updated"), w.page.click("form#edit button[type=submit]")]);
    expect(await w.page.locator("[role=status]").innerText()).toContain("Short link saved.");
    expect(await linkRow().innerText()).toContain("walkthrough · qr · tour");
  });

  step("13. a shopper follows /l/<slug> and lands on its target with the UTM tags", "13-link-followed", async () => {
    await onStore(`/l/${LINK_SLUG}`);
    const landed = new URL(w.page.url());
    expect(landed.pathname).toBe("/products/cotton-kurta");
    expect(Object.fromEntries(landed.searchParams)).toEqual({ utm_source: "walkthrough", utm_medium: "qr", utm_campaign: "tour" });
    expect(await w.page.locator("h1").innerText()).toBe("Cotton Kurta");
  });

  step("14. the click is counted on the admin's Links page", "14-link-clicks", async () => {
    await inAdmin("/links");
    expect(await linkRow().locator("td[data-clicks]").innerText()).toBe("1");
  });

  step("15. the Owner deletes the link: the store is left as it was", "15-link-deleted", async () => {
    await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "deleted"), w.page.click(`button[aria-label="Delete ${LINK_SLUG}"]`)]);
    left.linkSlug = null;
    expect(await linkRow().count()).toBe(0);
  });

  step("16. the shopper checks out (ticking 'Email me news and offers'): address, Pay online now, the local gateway's page, Pay; the order page says paid", "16-paid", async () => {
    // What this run ships goes back on the warehouse's shelf first, so runs on one database never run out.
    const rpc = await ownerRpc(w.worker.admin);
    for (const [sku, units] of [["KURTA-COT-S", 2], ["KURTA-COT-L", 1]] as const) {
      const { items } = (await rpc("inventory/levels", { query: sku, pageSize: 10 })) as { items: { variantId: string; locationId: string; onHand: number }[] };
      const shelf = items.reduce((a, b) => (b.onHand > a.onHand ? b : a));
      await rpc("inventory/adjust", { variantId: shelf.variantId, locationId: shelf.locationId, delta: units, reason: "received", note: "Shopper walkthrough" });
    }
    await onStore("/checkout");
    const orderPage = await checkOutAndPay(w.page, { email: SHOPPER_EMAIL, name: "Asha Rao", line1: "12 MG Road", city: "Pune", postalCode: "411001", state: "IN-MH", acceptsMarketing: true }, check);
    left.orderUrl = orderPage.href;
    expect(await w.page.locator("dd[data-status=payment]").getAttribute("data-value")).toBe("paid");
    expect(await w.page.locator("dd[data-status=fulfillment]").innerText()).toBe("not shipped yet");
  });

  step("17. within seconds of the payment, payment_received is in the admin's local mailbox", "17-mailbox", async () => {
    const number = (await w.page.locator("h1").innerText()).replace(/\D/g, "");
    const paidAt = Date.now();
    await inAdmin("/mailbox");
    const subject = `Payment received for order #${number}`;
    // The worker's relay runs every 5 s (and at once on a nudge): give it a few passes.
    while (!(await w.page.content()).includes(subject) && Date.now() - paidAt < 20_000) {
      await w.page.waitForTimeout(500);
      await w.page.reload();
    }
    expect(await w.page.content()).toContain(subject);
    left.mailSeconds = (Date.now() - paidAt) / 1000;
    await inAdmin("/notifications");
    expect(await w.page.locator('tr[data-template="payment_received"]').first().innerText()).toContain(SHOPPER_EMAIL);
    await onStore(left.orderUrl!);
  });

  step("18. the Owner finds the order paid in the admin and ships every parcel with the store's courier", "18-shipped", async () => {
    const number = (await w.page.locator("h1").innerText()).replace(/\D/g, "");
    await inAdmin(`/orders?query=%23${number}`);
    const row = w.page.locator("tbody tr").first();
    expect(await row.innerText()).toContain(`#${number}`);
    expect(await row.locator('[data-status="paid"]').count()).toBe(1);
    await check();
    await Promise.all([w.page.waitForURL((u) => /^\/orders\/[0-9a-f-]{36}$/.test(u.pathname)), row.locator("a").first().click()]);
    const ship = w.page.locator("form[data-action=fulfill]");
    await check();
    while (await ship.count()) {
      await Promise.all([w.page.waitForURL((u) => u.searchParams.get("done") === "fulfill"), ship.locator("button[type=submit]").click()]);
      expect(await w.page.locator("[role=status]").innerText()).toContain("is shipped");
    }
    expect(await w.page.locator("#shipments tbody tr").count()).toBeGreaterThan(0);
    expect(await w.page.locator('#shipments [data-status="pending"]').count()).toBeGreaterThan(0);
  });

  step("19. the shopper's order page shows it shipped, with the courier's tracking number", "19-shopper-sees-shipped", async () => {
    await onStore(left.orderUrl!);
    expect(await w.page.locator("dd[data-status=fulfillment]").innerText()).toBe("shipped");
    expect(await w.page.locator("li[data-shipment]").first().innerText()).toMatch(/Local Courier, tracking number \S+: handed to the courier/);
  });

  step("20. the shopper confirms marketing consent through the emailed link in the local mailbox", "20-consent-confirmed", async () => {
    // The checkout only asked (double opt-in): the customer waits for the shopper's confirmation.
    await inAdmin(`/customers?query=${encodeURIComponent(SHOPPER_EMAIL)}`);
    expect(await w.page.locator("tbody tr").first().locator("td[data-consent]").getAttribute("data-consent")).toBe("pending");
    const subject = `Confirm you want news and offers from ${demo.name} · ${demo.name}`;
    const mail = w.page.locator("article").filter({ has: w.page.locator(`h2:text-is("${subject}")`) }).filter({ hasText: `to ${SHOPPER_EMAIL}` });
    const since = Date.now();
    await inAdmin("/mailbox");
    while ((await mail.count()) === 0 && Date.now() - since < 20_000) {
      await w.page.waitForTimeout(500);
      await w.page.reload();
    }
    const text = await mail.first().locator("pre.mail").innerText();
    const link = new URL(/Confirm: (\S+)/.exec(text)![1]!);
    expect(link.pathname).toMatch(/^\/consent\/[0-9a-f-]{36}$/);
    // The email's link names the store's own domain; this run's storefront serves it on its own port.
    await onStore(link.pathname + link.search);
    await w.screenshot("20-consent-asked");
    await check();
    await Promise.all([w.page.waitForLoadState("load"), w.page.click("button:has-text('Yes, send me news and offers')")]);
    expect(await w.page.locator("[role=alert], [role=status]").first().innerText()).toContain("is subscribed.");
    await inAdmin(`/customers?query=${encodeURIComponent(SHOPPER_EMAIL)}`);
    await Promise.all([w.page.waitForURL((u) => /^\/customers\/[0-9a-f-]{36}$/.test(u.pathname)), w.page.locator("tbody tr a").first().click()]);
    expect(await w.page.locator("dd[data-consent]").getAttribute("data-consent")).toBe("confirmed");
    expect(await w.page.locator("dd[data-consent]").innerText()).toContain("through the confirmation email");
  });

  step("21. the shopper opens the shipped order's tax invoice from the order page and downloads its PDF", "21-tax-invoice", async () => {
    await onStore(left.orderUrl!);
    const invoice = w.page.locator("li[data-invoice]").first();
    const [view, pdf] = await Promise.all(["View", "PDF"].map((text) => invoice.locator(`a:text-is("${text}")`).getAttribute("href")));
    await Promise.all([w.page.waitForURL((u) => /^\/orders\/[0-9a-f-]{36}\/invoices\/[0-9a-f-]{36}$/.test(u.pathname)), invoice.locator('a:text-is("View")').click()]);
    expect(new URL(w.page.url()).pathname + new URL(w.page.url()).search).toBe(view);
    expect(await w.page.locator("article.document h1").innerText()).toBe("Tax invoice");
    expect(await w.page.locator("article.document .meta").innerText()).toMatch(/No\. INV\/\d{2}-\d{2}\/\d{6}/);
    expect(await w.page.locator("article.document").innerText()).toContain("Asha Rao");
    // The PDF as the browser gets it (its own resolver knows *.localhost): a PDF, saved under the invoice's number.
    const got = await w.page.evaluate(async (href) => {
      const res = await fetch(href);
      const head = new Uint8Array(await res.arrayBuffer()).subarray(0, 5);
      return { status: res.status, type: res.headers.get("content-type"), disposition: res.headers.get("content-disposition"), head: String.fromCharCode(...head) };
    }, pdf!);
    expect(got).toMatchObject({ status: 200, type: "application/pdf", head: "%PDF-" });
    expect(got.disposition).toMatch(/^attachment; filename="INV-\d{2}-\d{2}-\d{6}\.pdf"$/);
  });

  step("22. the order_shipped email's HTML part, as the shopper's mail client shows it, from the local mailbox", "22-email-html", async () => {
    await onStore(left.orderUrl!);
    const number = (await w.page.locator("h1").innerText()).replace(/\D/g, "");
    const mail = w.page.locator("article").filter({ has: w.page.locator(`h2:has-text("Order #${number} has shipped")`) }).filter({ hasText: `to ${SHOPPER_EMAIL}` });
    const since = Date.now();
    await inAdmin("/mailbox");
    while ((await mail.count()) === 0 && Date.now() - since < 20_000) {
      await w.page.waitForTimeout(500);
      await w.page.reload();
    }
    const html = await mail.first().locator("a[data-part=html]").getAttribute("href");
    await w.page.setViewportSize(PHONE);
    const answer = await w.page.goto(`${w.worker.admin.url}${html}`);
    expect(answer?.headers()["content-type"]).toContain("text/html");
    expect(await w.page.locator("body").innerText()).toContain(`#${number}`);
  });
});
