import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { newTrace, tripsOf } from "../../test/proxy";
import { callerFor } from "../../test/procedures";
import { base64, makeJpeg } from "../../test/media";
import worker from "./index";

/** Collections and the navigation menu on the storefront (issue 23 item 3), through the real Worker and Postgres. */
const db = testDb();
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;
const get = (host: string, path: string, headers: Record<string, string> = {}) => call(worker, `http://storefront.test${path}`, { headers: { host, ...headers } });
const sql = (store: TestStore, text: string, values: unknown[] = []) => withStore(db, store.id, (tx) => tx.$client.query(text, values));

/** Card titles in page order (each card links to its product). */
const cardTitles = (html: string) => [...html.matchAll(/<a href="\/products\/[^"]+"><strong>([^<]*)<\/strong>/g)].map((m) => m[1]);
/** The header menu's links in order, as [label, href]. */
const menuLinks = (html: string) => {
  const nav = /<nav class="menu" aria-label="Menu">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
  return [...nav.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => [m[2], m[1]]);
};

/** A store with active products (and a draft), a published collection holding them in a chosen order, and an unpublished one. */
async function shop() {
  const store = await makeStore(db);
  const ids: Record<string, string> = {};
  for (const [title, status] of [["Cotton Kurta", "active"], ["Silk Saree", "active"], ["Draft Dupatta", "draft"], ["Festive Lamp", "active"]] as const) {
    const handle = title.toLowerCase().replace(/ /g, "-");
    const { rows } = await sql(store, "insert into product (store_id, title, handle, status) values ($1, $2, $3, $4) returning id", [store.id, title, handle, status]);
    ids[title] = rows[0].id;
    await sql(store, "insert into product_variant (store_id, product_id, price_minor, preorder) values ($1, $2, 49900, true)", [store.id, ids[title]]);
  }
  const { rows } = await sql(
    store,
    `insert into collection (store_id, title, handle, description, published) values
       ($1, 'Festive Edit', 'festive', 'Lights and silk.\n\nFor Diwali.', true), ($1, 'Coming Soon', 'soon', '', false) returning id, handle`,
    [store.id],
  );
  const festive = rows.find((r: { handle: string }) => r.handle === "festive").id as string;
  const soon = rows.find((r: { handle: string }) => r.handle === "soon").id as string;
  const order = ["Festive Lamp", "Draft Dupatta", "Silk Saree", "Cotton Kurta"];
  for (const [position, title] of order.entries()) {
    await sql(store, "insert into collection_product (store_id, collection_id, product_id, position) values ($1, $2, $3, $4)", [store.id, festive, ids[title], position]);
  }
  await sql(store, "insert into collection_product (store_id, collection_id, product_id, position) values ($1, $2, $3, 0)", [store.id, soon, ids["Cotton Kurta"]]);
  return { store, ids, festive, soon };
}

describe("collections on the storefront", () => {
  it("a published collection shows its active products in the collection's order; unpublished and unknown ones are 404", async () => {
    const { store } = await shop();
    const res = await get(store.hostname, "/collections/festive");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<h1>Festive Edit</h1>");
    expect(html).toContain("<p>Lights and silk.</p><p>For Diwali.</p>");
    expect(cardTitles(html)).toEqual(["Festive Lamp", "Silk Saree", "Cotton Kurta"]);
    expect(html).toContain(`<link rel="canonical" href="https://${store.hostname}/collections/festive"/>`);
    for (const path of ["/collections/soon", "/collections/nothing-here", "/collections/fixture-shelf"]) {
      const missing = await get(store.hostname, path);
      expect([path, missing.status]).toEqual([path, 404]);
      expect(await missing.text()).not.toContain("Cotton Kurta");
    }
    // Another store's collection of the same handle is not this store's.
    const other = await shop();
    await sql(other.store, "update collection set title = 'Theirs' where handle = 'festive'");
    expect(await (await get(store.hostname, "/collections/festive")).text()).not.toContain("Theirs");
  });

  it("pages a long collection as /products does, in the collection's order across pages", async () => {
    const { store, festive } = await shop();
    for (let i = 0; i < 28; i++) {
      const title = `Diya ${String(i).padStart(2, "0")}`;
      const { rows } = await sql(store, "insert into product (store_id, title, handle, status) values ($1, $2, $3, 'active') returning id", [store.id, title, `diya-${i}`]);
      await sql(store, "insert into product_variant (store_id, product_id, price_minor) values ($1, $2, 9900)", [store.id, rows[0].id]);
      // The newest first in the collection: positions after the first four, in reverse.
      await sql(store, "insert into collection_product (store_id, collection_id, product_id, position) values ($1, $2, $3, $4)", [store.id, festive, rows[0].id, 100 - i]);
    }
    const first = await (await get(store.hostname, "/collections/festive")).text();
    const second = await (await get(store.hostname, "/collections/festive?page=2")).text();
    const all = [...cardTitles(first), ...cardTitles(second)];
    expect(cardTitles(first)).toHaveLength(24);
    expect(all.slice(0, 3)).toEqual(["Festive Lamp", "Silk Saree", "Cotton Kurta"]);
    expect(all.slice(3, 5)).toEqual(["Diya 27", "Diya 26"]);
    expect(all).toHaveLength(31);
    expect(first).toContain("31 products");
    expect(first).toContain('<a href="/collections/festive?page=2">Next</a>');
    expect(second).toContain('<a href="/collections/festive?page=1">Previous</a>');
    expect(second).toContain(`<link rel="canonical" href="https://${store.hostname}/collections/festive?page=2"/>`);
  });

  it("/collections lists the published collections only, and the sitemap lists them", async () => {
    const { store } = await shop();
    const index = await (await get(store.hostname, "/collections")).text();
    expect(index).toContain('<a href="/collections/festive"><strong>Festive Edit</strong></a>');
    expect(index).not.toContain("/collections/soon");
    expect(index).not.toContain("fixture-shelf");
    const sitemap = await (await get(store.hostname, "/sitemap.xml")).text();
    expect(sitemap).toContain(`<loc>https://${store.hostname}/collections/festive</loc>`);
    expect(sitemap).toContain(`<loc>https://${store.hostname}/collections</loc>`);
    expect(sitemap).not.toContain("/collections/soon");
    // A store without published collections lists neither.
    const bare = await makeStore(db);
    const none = await (await get(bare.hostname, "/sitemap.xml")).text();
    expect(none).not.toContain("/collections");
  });

  it("collection pages are kept in the edge cache, and a change to the collection or its products renews them", async () => {
    const { store, ids } = await shop();
    const edge = (res: Response) => /edge;desc="(\w+)"/.exec(res.headers.get("server-timing") ?? "")?.[1];
    for (const path of ["/collections/festive", "/collections"]) {
      expect([path, edge(await get(store.hostname, path))]).toEqual([path, "miss"]);
      expect([path, edge(await get(store.hostname, path))]).toEqual([path, "hit"]);
    }
    await sql(store, "update collection_product set position = position + 10 where product_id = $1", [ids["Festive Lamp"]]);
    const moved = await get(store.hostname, "/collections/festive");
    expect(edge(moved)).toBe("miss");
    expect(cardTitles(await moved.text())).toEqual(["Silk Saree", "Cotton Kurta", "Festive Lamp"]);
    await sql(store, "update collection set title = 'Diwali Edit' where handle = 'festive'");
    const renamed = await get(store.hostname, "/collections");
    expect(edge(renamed)).toBe("miss");
    expect(await renamed.text()).toContain("Diwali Edit");
  });

  it("a collection page is one round trip, as every catalogue page", async () => {
    const { store } = await shop();
    await get(store.hostname, "/"); // warms the host and the store's facts
    for (const path of [`/collections/festive?c=${crypto.randomUUID()}`, `/collections?c=${crypto.randomUUID()}`]) {
      const trace = newTrace();
      const res = await get(store.hostname, path, { "x-commerce-trace": trace });
      expect(`${path} ${res.status} ${(await tripsOf(proxy, trace)).turns}`).toMatch(/ 200 1$/);
    }
  });
});

describe("the navigation menu in the storefront's header", () => {
  it("shows the merchant's items in order, leaves out unpublished collections and pages, and follows changes at once", async () => {
    const { store, festive, soon } = await shop();
    const { rows } = await sql(store, "insert into page (store_id, title, handle, status) values ($1, 'Shipping', 'shipping', 'published') returning id", [store.id]);
    await sql(store, "delete from menu_item");
    await sql(
      store,
      `insert into menu_item (store_id, position, label, kind, collection_id, page_id, url) values
         ($1, 0, 'Festive', 'collection', $2, null, null),
         ($1, 1, 'Soon', 'collection', $3, null, null),
         ($1, 2, 'Shipping', 'page', null, $4, null),
         ($1, 3, 'About', 'page', null, (select id from page where handle = 'about'), null),
         ($1, 4, 'Blog', 'link', null, null, 'https://blog.example.com/')`,
      [store.id, festive, soon, rows[0].id],
    );
    const home = await (await get(store.hostname, "/")).text();
    expect(menuLinks(home)).toEqual([
      ["Festive", "/collections/festive"],
      ["Shipping", "/pages/shipping"],
      ["Blog", "https://blog.example.com/"],
    ]);
    // The page the shopper is on is marked; every page carries the menu (the cart's too).
    expect(await (await get(store.hostname, "/collections/festive")).text()).toContain('<a href="/collections/festive" aria-current="page">Festive</a>');
    expect(menuLinks(await (await get(store.hostname, "/cart")).text())).toHaveLength(3);
    // Publishing a collection and unpublishing another change the menu on the next page (the facts are pushed, the cached page's key changes).
    await sql(store, "update collection set published = (handle = 'soon')");
    const after = await (await get(store.hostname, "/")).text();
    expect(menuLinks(after)).toEqual([
      ["Soon", "/collections/soon"],
      ["Shipping", "/pages/shipping"],
      ["Blog", "https://blog.example.com/"],
    ]);
  });

  it("the seeded demo store has two collections and a menu (npm run dev shows them)", async () => {
    const home = await (await get("demo.localhost", "/")).text();
    expect(menuLinks(home)).toEqual([
      ["Festive Edit", "/collections/festive-edit"],
      ["Home &amp; Living", "/collections/home-living"],
      ["All products", "/products"],
      ["About us", "/pages/about-us"],
    ]);
    const festive = await (await get("demo.localhost", "/collections/festive-edit")).text();
    expect(cardTitles(festive).slice(0, 2)).toEqual(["Banarasi Silk Saree", "Lucknowi Chikankari Kurta"]);
    expect((await get("demo.localhost", "/collections/home-living")).status).toBe(200);
  });

  it("a store without a menu shows none", async () => {
    const store = await makeStore(db);
    expect(await (await get(store.hostname, "/")).text()).not.toContain('class="menu"');
  });

  it("a collection's image shows on /collections and above its products, sized, once set (the cached pages renewed)", async () => {
    const { store, festive } = await shop();
    const before = await (await get(store.hostname, "/collections")).text();
    expect(before).not.toContain("<picture>");
    const owner = callerFor(db, store.ownerUserId, store.id, { media: () => ({ bucket: (env as Cloudflare.StorefrontEnv).MEDIA, allowLocalUrls: true }) });
    const { image } = (await owner("collections.setImage", { id: festive, alt: "Diyas on brass", image: { base64: base64(await makeJpeg(800, 400, 71)) } })) as { image: { hash: string } };

    const list = await (await get(store.hostname, "/collections")).text();
    expect(list).toContain(`<picture><source type="image/webp" srcset="/media/${image.hash}/160.webp 160w, /media/${image.hash}/320.webp 320w, /media/${image.hash}/640.webp 640w, /media/${image.hash}/800.webp 800w" sizes="(min-width: 48rem) 16rem, 90vw"/>`);
    expect(list).toMatch(/width="800" height="400" alt="Diyas on brass" loading="lazy"/);
    const one = await (await get(store.hostname, "/collections/festive")).text();
    expect(one).toMatch(/width="800" height="400" alt="Diyas on brass" loading="eager" decoding="async" fetchpriority="high" class="collection-hero"/);
    // Its share card: the image as JPEG on the store's own address.
    expect(one).toMatch(new RegExp(`<meta property="og:image" content="https://[^/"]+/media/${image.hash}/800\\.jpg"/>`));
    expect(one).toContain('<meta name="twitter:card" content="summary_large_image"/>');
    const file = await get(store.hostname, `/media/${image.hash}/320.webp`);
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "image/webp"]);
    await file.arrayBuffer();
    const other = await makeStore(db);
    const foreign = await get(other.hostname, `/media/${image.hash}/320.webp`);
    expect(foreign.status).toBe(404);
    await foreign.arrayBuffer();

    await owner("collections.removeImage", { id: festive });
    expect(await (await get(store.hostname, "/collections/festive")).text()).not.toContain(image.hash);
  });
});
