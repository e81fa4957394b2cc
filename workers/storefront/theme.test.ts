import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readMediaHeader } from "#shared/media/header";
import { themeStamp, THEME_DEFAULTS } from "#shared/storefront/theme";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import { callerFor } from "../../test/procedures";
import { base64, makeJpeg, makePng } from "../../test/media";
import worker from "./index";

/** The store's published look on the real storefront Worker (issue 23 item 2), against real Postgres. */
const db = testDb();
const get = (host: string, path: string) => call(worker, `http://storefront.test${path}`, { headers: { host } });
const page = async (host: string, path: string) => {
  const res = await get(host, path);
  return { res, html: await res.text() };
};

const LOOK = {
  brandColour: "#7a1f3d",
  accentColour: "#0b5d3b",
  announcementEnabled: true,
  announcementText: "Free shipping over ₹999 <b>today</b>",
  announcementLink: "/products",
  bannerHeading: "Diwali edit",
  bannerText: "Silk, lamps and sweets.",
  bannerLinkLabel: "Shop the edit",
  bannerLink: "/products?sort=newest",
};

describe("the store's look on the storefront", () => {
  it("a draft never shows; publishing renews the cached pages with the theme's stylesheet, bar and banner", async () => {
    const store = await makeStore(db);
    const owner = callerFor(db, store.ownerUserId, store.id);
    const before = await page(store.hostname, "/");
    expect(before.res.status).toBe(200);
    expect(before.html).not.toContain("/theme.css");

    await owner("theme.updateDraft", LOOK);
    for (const path of ["/", "/products"]) {
      const { html } = await page(store.hostname, path);
      expect(html, path).not.toContain("/theme.css");
      expect(html, path).not.toContain("Free shipping");
      expect(html, path).not.toContain("Diwali edit");
    }

    await owner("theme.publish", {});
    const home = await page(store.hostname, "/");
    const stamp = themeStamp({ ...THEME_DEFAULTS, ...LOOK });
    expect(home.html).toContain(`<link rel="stylesheet" href="/theme.css?t=${stamp}"/>`);
    expect(home.html).toMatch(/<aside class="announcement" aria-label="Announcement"><a href="\/products">Free shipping over ₹999 &lt;b&gt;today&lt;\/b&gt;<\/a><\/aside>/);
    expect(home.html).toContain('<h2 id="banner-heading">Diwali edit</h2>');
    expect(home.html).toContain('<a href="/products?sort=newest" class="cta">Shop the edit</a>');
    // Links take the brand colour (on the light page; the page's own text colour in the dark scheme).
    expect(home.html).toContain("main a:not(.cta){color:var(--brand-ink,LinkText)}");
    // No inline style beyond the registered shell: the CSP still allows only 'self' and hashes.
    expect(home.res.headers.get("content-security-policy")).toMatch(/style-src 'self' 'sha256-[^']+'/);
    expect(home.res.headers.get("content-security-policy")).not.toContain("unsafe-inline");

    // The bar is on every page; the banner only on the home page.
    const products = await page(store.hostname, "/products");
    expect(products.html).toContain('class="announcement"');
    expect(products.html).not.toContain("Diwali edit");
    const notFound = await page(store.hostname, "/pages/nothing-here");
    expect(notFound.res.status).toBe(404);
    expect(notFound.html).toContain('class="announcement"');

    const css = await get(store.hostname, `/theme.css?t=${stamp}`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const body = await css.text();
    expect(body).toContain("--brand:#7a1f3d");
    expect(body).toContain("--accent:#0b5d3b");
    expect(body).toContain("--brand-text:#ffffff");
    // An old stamp gets today's look, never kept under its address.
    const stale = await get(store.hostname, "/theme.css?t=old");
    expect(stale.headers.get("cache-control")).toBe("no-cache");
    expect(await stale.text()).toBe(body);
  });

  it("a store that published nothing serves an empty theme stylesheet and the platform's look", async () => {
    const store = await makeStore(db);
    const css = await get(store.hostname, "/theme.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("cache-control")).toBe("no-cache");
    expect(await css.text()).toBe("");
    const { html } = await page(store.hostname, "/");
    expect(html).not.toContain('class="announcement"');
    expect(html).not.toContain('class="banner"');
  });

  it("one store's published look never shows on another's pages", async () => {
    const [a, b] = [await makeStore(db), await makeStore(db)];
    await callerFor(db, a.ownerUserId, a.id)("theme.updateDraft", { announcementEnabled: true, announcementText: "Only at store A" });
    await callerFor(db, a.ownerUserId, a.id)("theme.publish", {});
    expect((await page(a.hostname, "/")).html).toContain("Only at store A");
    expect((await page(b.hostname, "/")).html).not.toContain("Only at store A");
    expect(await (await get(b.hostname, "/theme.css")).text()).toBe("");
  });

  it("the logo, favicon and banner image show only once published, with sizes given; another store's files are not served", async () => {
    const [a, b] = [await makeStore(db), await makeStore(db)];
    const media = { media: () => ({ bucket: (env as Cloudflare.StorefrontEnv).MEDIA, allowLocalUrls: true }) };
    const owner = callerFor(db, a.ownerUserId, a.id, media);
    await owner("theme.updateDraft", { bannerHeading: "Festive edit" });
    await owner("theme.setImage", { slot: "logo", image: { base64: base64(await makePng(300, 100, 31)) } });
    await owner("theme.setImage", { slot: "favicon", image: { base64: base64(await makePng(64, 64, 32)) } });
    const { draft } = (await owner("theme.setImage", { slot: "bannerImage", alt: "Diyas on a silk saree", image: { base64: base64(await makeJpeg(800, 320, 33)) } })) as {
      draft: { logo: { hash: string }; favicon: { hash: string }; bannerImage: { hash: string } };
    };
    // In the draft only: nothing of it on the storefront.
    const before = await page(a.hostname, "/");
    for (const hash of [draft.logo.hash, draft.favicon.hash, draft.bannerImage.hash]) expect(before.html).not.toContain(hash);
    expect(before.html).not.toContain('rel="icon"');
    await owner("theme.publish", {});
    const home = await page(a.hostname, "/");
    expect(home.html).toContain(
      `<a class="brand" href="/"><picture><source type="image/webp" srcset="/media/${draft.logo.hash}/160.webp 160w, /media/${draft.logo.hash}/300.webp 300w" sizes="120px"/><img src="/media/${draft.logo.hash}/300.jpg"`,
    );
    expect(home.html).toMatch(new RegExp(`<img src="/media/${draft.logo.hash}/300\\.jpg" srcset="[^"]+" sizes="120px" width="120" height="40" alt="${a.name}"`));
    expect(home.html).toContain(`<link rel="icon" type="image/png" sizes="32x32" href="/media/${draft.favicon.hash}/icon-32.png"/>`);
    expect(home.html).toContain(`<link rel="apple-touch-icon" sizes="180x180" href="/media/${draft.favicon.hash}/icon-180.png"/>`);
    expect(home.html).toMatch(new RegExp(`<section class="banner"[^>]*><picture><source type="image/webp" srcset="/media/${draft.bannerImage.hash}/160\\.webp 160w[^"]*"`));
    expect(home.html).toMatch(/width="800" height="320" alt="Diyas on a silk saree" loading="eager" decoding="async" fetchpriority="high"/);

    const icon = await get(a.hostname, `/media/${draft.favicon.hash}/icon-32.png`);
    expect([icon.status, icon.headers.get("content-type"), icon.headers.get("cache-control")]).toEqual([200, "image/png", "public, max-age=31536000, immutable"]);
    expect(readMediaHeader(new Uint8Array(await icon.arrayBuffer()))).toEqual({ format: "png", width: 32, height: 32 });
    for (const path of [`/media/${draft.favicon.hash}/icon-32.png`, `/media/${draft.logo.hash}/160.webp`, `/media/${draft.bannerImage.hash}/800.jpg`]) {
      const foreign = await get(b.hostname, path);
      expect(foreign.status, path).toBe(404);
      await foreign.arrayBuffer();
    }
    expect((await page(b.hostname, "/")).html).not.toContain(draft.logo.hash);

    // A removed logo stays on the storefront until the draft is published again.
    await owner("theme.removeImage", { slot: "logo" });
    expect((await page(a.hostname, "/")).html).toContain(`/media/${draft.logo.hash}/160.webp`);
    await owner("theme.publish", {});
    const after = await page(a.hostname, "/");
    expect(after.html).not.toContain(draft.logo.hash);
    expect(after.html).toMatch(new RegExp(`<a class="brand" href="/">${a.name}</a>`));
  });
});
