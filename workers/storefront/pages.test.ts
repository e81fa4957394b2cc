import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import worker from "./index";

/** The shopper's catalogue pages through the real storefront Worker, against real Postgres. */
const db = testDb();
const get = (host: string, path: string) => call(worker, `http://storefront.test${path}`, { headers: { host } });
const variantId = (store: TestStore, sku: string) =>
  withStore(db, store.id, (tx) => tx.$client.query<{ id: string }>("select id from product_variant where sku = $1", [sku])).then((r) => r.rows[0]!.id);

interface Made {
  store: TestStore;
}

/** A store with a small catalogue: active, draft and archived products, stock online and in a shop, pages. */
async function catalogue(): Promise<Made> {
  const store = await makeStore(db);
  await withStore(db, store.id, async (tx) => {
    const q = (text: string, values: unknown[]) => tx.$client.query(text, values);
    const online = (await q("insert into location (store_id, name, sells_online) values ($1, 'Online store', true) returning id", [store.id])).rows[0].id;
    const shop = (await q("insert into location (store_id, name, sells_online) values ($1, 'Shop counter', false) returning id", [store.id])).rows[0].id;
    const product = async (title: string, handle: string, status: string, variants: [string, string, number, boolean, number, number][], description = "") => {
      const id = (await q("insert into product (store_id, title, handle, status, description) values ($1, $2, $3, $4, $5) returning id", [store.id, title, handle, status, description])).rows[0].id;
      for (const [i, [vtitle, sku, price, preorder, onlineStock, shopStock]] of variants.entries()) {
        const v = (await q("insert into product_variant (store_id, product_id, title, sku, price_minor, preorder, position) values ($1, $2, $3, $4, $5, $6, $7) returning id", [store.id, id, vtitle, sku, price, preorder, i])).rows[0].id;
        await q("insert into inventory_level (store_id, variant_id, location_id, on_hand) values ($1, $2, $3, $4), ($1, $2, $5, $6)", [store.id, v, online, onlineStock, shop, shopStock]);
      }
    };
    await product("Silk Saree", "silk-saree", "active", [["Red", `SAREE-RED-${store.slug}`, 125000, false, 3, 10], ["Blue", `SAREE-BLUE-${store.slug}`, 135000, false, 0, 7]], "Handwoven silk. Dry clean only.");
    await product("Cotton Kurta", "cotton-kurta", "active", [["M", `KURTA-M-${store.slug}`, 49900, false, 5, 0]]);
    await q("update product_variant set compare_at_minor = 64900 where sku = $1", [`KURTA-M-${store.slug}`]);
    await product("Festive Lamp", "festive-lamp", "active", [["Default", `LAMP-${store.slug}`, 89900, true, 0, 0]]);
    await product("<script>alert(1)</script> Mug", "mug", "active", [["Default", `MUG-${store.slug}`, 29900, false, 0, 4]]);
    await product("Draft Dupatta", "draft-dupatta", "draft", [["Default", `DRAFT-${store.slug}`, 10000, false, 9, 0]]);
    await product("Old Shawl", "old-shawl", "archived", [["Default", `OLD-${store.slug}`, 20000, false, 9, 0]]);
    await q("insert into page (store_id, title, handle, body, status, published_at) values ($1, 'Shipping', 'shipping', 'We ship in 3 days.\n\nFree over ₹999.', 'published', now()), ($1, 'Secret sale', 'secret-sale', 'Soon', 'draft', null)", [store.id]);
  });
  return { store };
}

describe("shopper pages", () => {
  it("a product's photos: a gallery led by the chosen variant's photo, its map of variant to photo for the switch, the share image in Open Graph and JSON-LD", async () => {
    const { store } = await catalogue();
    const hashes = ["a", "b"].map((ch) => ch.repeat(64));
    const [front, blue] = await withStore(db, store.id, async (tx) => {
      const rows = [];
      for (const [i, hash] of hashes.entries()) {
        rows.push(
          (
            await tx.$client.query<{ id: string }>(
              "insert into product_media (store_id, product_id, position, alt, hash, original_type, original_bytes, width, height, widths) select $1, id, $2, $3, $4, 'image/jpeg', 1000, 1600, 1200, '{160,320,640,960,1280,1600}' from product where handle = 'silk-saree' returning id",
              [store.id, i, i === 0 ? "Silk saree, draped" : "Silk saree in blue", hash],
            )
          ).rows[0]!.id,
        );
      }
      await tx.$client.query("update product_variant set media_id = $1 where sku = $2", [rows[1], `SAREE-BLUE-${store.slug}`]);
      return rows;
    });
    const html = await (await get(store.hostname, "/products/silk-saree")).text();
    const gallery = /<ol class="gallery" aria-label="Photos" data-variant-images="([^"]*)">([\s\S]*?)<\/ol>/.exec(html)!;
    // Red (chosen: the first that can be bought) has no photo of its own: the first photo leads.
    expect([...gallery[2]!.matchAll(/data-image="([^"]+)"/g)].map((m) => m[1])).toEqual([front, blue]);
    expect(JSON.parse(gallery[1]!.replaceAll("&quot;", '"'))).toEqual({ [(await variantId(store, `SAREE-BLUE-${store.slug}`))]: blue });
    expect(gallery[2]).toContain('alt="Silk saree, draped"');
    expect(gallery[2]).toContain('width="1600" height="1200"');
    expect(gallery[2]).toContain(`srcset="/media/${hashes[0]}/160.webp 160w`);
    expect(gallery[2]).toContain('loading="eager"');
    const share = `https://${store.hostname}/media/${hashes[0]}/1280.jpg`;
    expect(html).toContain(`<meta property="og:image" content="${share}"/>`);
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image"/>');
    const ld = JSON.parse(/<script type="application\/ld\+json">([^<]*)<\/script>/.exec(html)![1]!) as { image: string[] };
    expect(ld.image).toEqual([share, `https://${store.hostname}/media/${hashes[1]}/1280.jpg`]);
    // The cards show each product's first photo, on the list and in search, read in the same statement.
    for (const path of ["/products", "/search?q=saree"]) {
      const list = await (await get(store.hostname, path)).text();
      expect(list, path).toMatch(new RegExp(`<li><a href="/products/silk-saree"><picture><source type="image/webp" srcset="/media/${hashes[0]}/160.webp 160w[^"]*" sizes="[^"]+"/><img src="/media/${hashes[0]}/640.jpg"[^>]*width="1600" height="1200" alt="Silk saree, draped" loading="lazy"`));
      expect(list.match(/<picture>/g), path).toHaveLength(1);
    }
  });

  it("a product page carries schema.org Product JSON-LD (an Offer per variant) and Open Graph tags; a merchant's markup cannot break out", async () => {
    const { store } = await catalogue();
    const html = await (await get(store.hostname, "/products/silk-saree")).text();
    const blocks = [...html.matchAll(/<script type="application\/ld\+json">([^<]*)<\/script>/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
    expect(blocks).toHaveLength(1);
    const ld = blocks[0]!;
    const url = `https://${store.hostname}/products/silk-saree`;
    expect(ld).toMatchObject({ "@context": "https://schema.org", "@type": "Product", name: "Silk Saree", description: "Handwoven silk. Dry clean only.", url });
    // schema.org Product: each Offer with a decimal price, an ISO 4217 currency and a schema.org availability.
    expect(ld.offers).toEqual([
      expect.objectContaining({ "@type": "Offer", sku: `SAREE-RED-${store.slug}`, price: "1250.00", priceCurrency: "INR", availability: "https://schema.org/InStock", url }),
      expect.objectContaining({ "@type": "Offer", sku: `SAREE-BLUE-${store.slug}`, price: "1350.00", priceCurrency: "INR", availability: "https://schema.org/OutOfStock" }),
    ]);
    for (const [property, content] of [
      ["og:type", "product"],
      ["og:title", "Silk Saree"],
      ["og:url", url],
      ["product:price:amount", "1250.00"],
      ["product:price:currency", "INR"],
    ]) {
      expect(html).toContain(`<meta property="${property}" content="${content}"/>`);
    }
    const lamp = await (await get(store.hostname, "/products/festive-lamp")).text();
    expect(lamp).toContain('"availability":"https://schema.org/PreOrder"');
    // The mug's title holds <script>: escaped in the JSON, so the only </script> is the block's own.
    const mug = await (await get(store.hostname, "/products/mug")).text();
    const block = /<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(mug)![1]!;
    expect(block).not.toMatch(/[<>]/);
    expect((JSON.parse(block) as { name: string }).name).toBe("<script>alert(1)</script> Mug");
  });

  it("home and the catalogue show active products only, priced in the store's currency from minor units", async () => {
    const { store } = await catalogue();
    const home = await (await get(store.hostname, "/")).text();
    expect(home).toContain(`<h1>${store.name}</h1>`);
    // The store as schema.org Organization and WebSite, whose search a search engine may offer.
    const ld = JSON.parse(/<script type="application\/ld\+json">([^<]*)<\/script>/.exec(home)![1]!) as { "@graph": Record<string, unknown>[] };
    expect(ld["@graph"]).toEqual([
      { "@type": "Organization", "@id": `https://${store.hostname}/#store`, name: store.name, url: `https://${store.hostname}/` },
      expect.objectContaining({ "@type": "WebSite", potentialAction: expect.objectContaining({ "@type": "SearchAction", target: `https://${store.hostname}/search?q={search_term_string}` }) }),
    ]);
    expect(home).toContain("Silk Saree");
    expect(home).toContain("From ₹1,250.00");
    expect(home).not.toContain("Draft Dupatta");
    expect(home).not.toContain("Old Shawl");
    const list = await (await get(store.hostname, "/products?sort=price_asc")).text();
    const order = ["Mug", "Cotton Kurta", "Festive Lamp", "Silk Saree"].map((t) => list.indexOf(t));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(list).toContain("4 products");
    // The mug's stock is all at the shop counter, which does not sell online.
    expect(list).toMatch(/Mug<\/strong><\/a><p class="card-price"><span class="price">From ₹299.00<\/span><\/p><span class="badge soldout">Sold out<\/span>/);
    // A sale shows what it was; a product only on pre-order says so.
    expect(list).toMatch(/Cotton Kurta<\/strong><\/a><p class="card-price"><span class="price">From ₹499.00<\/span> <s class="compare"><span class="visually-hidden">was <\/span>₹649.00<\/s><\/p><span class="badge sale">Sale<\/span>/);
    expect(list).toMatch(/Festive Lamp<\/strong><\/a><p class="card-price"><span class="price">From ₹899.00<\/span><\/p><span class="badge pre">Pre-order<\/span>/);
    expect(list).toMatch(/Silk Saree<\/strong><\/a><p class="card-price"><span class="price">From ₹1,250.00<\/span><\/p><\/li>/);
    const filtered = await (await get(store.hostname, "/products?min=400&max=1000")).text();
    expect(filtered).toContain("Cotton Kurta");
    expect(filtered).toContain("Festive Lamp");
    expect(filtered).not.toContain("Silk Saree");
    expect(filtered).toContain("2 products");
    const junk = await get(store.hostname, "/products?page=-3&sort=nope&min=abc");
    expect(junk.status).toBe(200);
  });

  it("a product page: variants with price and what online locations can sell, pre-order marked, an add-to-cart form", async () => {
    const { store } = await catalogue();
    const res = await get(store.hostname, "/products/silk-saree");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<title>Silk Saree · ");
    expect(html).toContain('<meta name="description" content="Handwoven silk. Dry clean only."/>');
    expect(html).toContain(`<link rel="canonical" href="https://${store.hostname}/products/silk-saree"/>`);
    expect(html).toContain("₹1,250.00");
    expect(html).toContain("3 available"); // the 10 at the shop counter are not for sale online
    expect(html).toMatch(/Blue · <span class="price">₹1,350.00<\/span>.*Sold out/s);
    expect(html).toContain('action="/api/cart/lines"');
    expect(html).toContain('name="quantity"');
    const lamp = await (await get(store.hostname, "/products/festive-lamp")).text();
    expect(lamp).toContain("Pre-order");
    const mug = await (await get(store.hostname, "/products/mug")).text();
    expect(mug).toContain("&lt;script&gt;alert(1)&lt;/script&gt; Mug");
    expect(mug).not.toContain("<script>alert(1)");
  });

  it("drafts, archived products, draft pages and other stores' handles are the store's own 404 page", async () => {
    const { store } = await catalogue();
    const other = await catalogue();
    for (const path of ["/products/draft-dupatta", "/products/old-shawl", "/pages/secret-sale", "/products/nope", "/pages/nope", "/nope"]) {
      const res = await get(store.hostname, path);
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expect(html, path).toContain(store.name);
      expect(html, path).toContain("There is no page at this address in this store");
    }
    // The same handle under another store's host is that store's product, never this one's.
    await withStore(db, other.store.id, (tx) => tx.$client.query("update product set title = 'Other Saree' where handle = 'silk-saree'"));
    expect(await (await get(store.hostname, "/products/silk-saree")).text()).not.toContain("Other Saree");
    expect(await (await get(other.store.hostname, "/products/silk-saree")).text()).toContain("Other Saree");
  });

  it("search finds products by title and SKU, never drafts; it is not indexed", async () => {
    const { store } = await catalogue();
    const byTitle = await (await get(store.hostname, "/search?q=kurta")).text();
    expect(byTitle).toContain("Cotton Kurta");
    expect(byTitle).toContain('<meta name="robots" content="noindex"/>');
    const bySku = await (await get(store.hostname, `/search?q=saree-blue-${store.slug}`)).text();
    expect(bySku).toContain("Silk Saree");
    expect(await (await get(store.hostname, "/search?q=dupatta")).text()).toContain("Nothing matches");
    expect((await get(store.hostname, "/search?q=%25_%5C")).status).toBe(200);
  });

  it("published pages render as paragraphs", async () => {
    const { store } = await catalogue();
    const html = await (await get(store.hostname, "/pages/shipping")).text();
    expect(html).toContain("<h1>Shipping</h1>");
    expect(html).toContain("<p>We ship in 3 days.</p><p>Free over ₹999.</p>");
  });

  it("robots.txt and sitemap.xml are per store", async () => {
    const { store } = await catalogue();
    const other = await catalogue();
    const robots = await get(store.hostname, "/robots.txt");
    expect(robots.headers.get("content-type")).toMatch(/text\/plain/);
    expect(await robots.text()).toContain(`Sitemap: https://${store.hostname}/sitemap.xml`);
    const sitemap = await get(store.hostname, "/sitemap.xml");
    expect(sitemap.headers.get("content-type")).toMatch(/application\/xml/);
    const xml = await sitemap.text();
    expect(xml).toContain(`<loc>https://${store.hostname}/products/silk-saree</loc>`);
    expect(xml).toContain(`<loc>https://${store.hostname}/pages/shipping</loc>`);
    expect(xml).not.toContain("draft-dupatta");
    expect(xml).not.toContain("old-shawl");
    expect(xml).not.toContain("secret-sale");
    expect(xml).not.toContain(other.store.hostname);
  });
});
