import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { product, productVariant } from "#shared/db/schema";
import { makeStore, testDb } from "../../../test/harness";
import { ADMIN, page, postForm, sessionFor, type Browser } from "../../../test/admin";
import { EXECUTABLE, makeJpeg } from "../../../test/media";

const db = testDb();

async function productPage() {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  const ids = await withStore(db, store.id, async (tx) => {
    const [p] = await tx.insert(product).values({ storeId: store.id, title: "Chanderi dupatta", handle: "chanderi-dupatta" }).returning({ id: product.id });
    const [v] = await tx.insert(productVariant).values({ storeId: store.id, productId: p!.id, title: "Rose", priceMinor: 149_900 }).returning({ id: productVariant.id });
    return { productId: p!.id, variantId: v!.id };
  });
  return { browser, ...ids };
}

/** The upload form as a browser sends it: multipart, same-origin, with the page's CSRF token. */
function upload(browser: Browser, productId: string, files: { name: string; bytes: Uint8Array; type: string }[], alt: string) {
  const form = new FormData();
  form.set("csrf", browser.csrf);
  form.set("action", "upload");
  form.set("alt", alt);
  for (const f of files) form.append("images", new File([f.bytes], f.name, { type: f.type }));
  return page(browser, `/products/${productId}/media`, { method: "POST", body: form, headers: { origin: ADMIN } });
}

const html = async (res: Response) => res.text();

describe("the product page's images (forms without JavaScript)", () => {
  it("offers an upload form with the product's title as alt text, uploads several images, shows and serves their thumbnails", async () => {
    const { browser, productId } = await productPage();
    const before = await html(await page(browser, `/products/${productId}`));
    expect(before).toContain('enctype="multipart/form-data"');
    expect(before).toMatch(/<input id="media-alt" name="alt" value="Chanderi dupatta" required/);

    const res = await upload(browser, productId, [
      { name: "front.jpg", bytes: await makeJpeg(300, 400, 11), type: "image/jpeg" },
      { name: "back.jpg", bytes: await makeJpeg(300, 400, 12), type: "image/jpeg" },
    ], "Chanderi dupatta in rose");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/products/${productId}?done=images-added#images`);
    const after = await html(await page(browser, `/products/${productId}?done=images-added`));
    expect(after).toContain("Images added, in every width.");
    const thumbs = [...after.matchAll(/<img src="(\/products\/[^"]+\/media\/[0-9a-f]{64}\/160\.webp)" width="160" height="213" alt="Chanderi dupatta in rose"/g)].map((m) => m[1]!);
    expect(thumbs).toHaveLength(2);
    const thumb = await page(browser, thumbs[0]!);
    expect([thumb.status, thumb.headers.get("content-type")]).toEqual([200, "image/webp"]);
    await thumb.arrayBuffer();
    // Signed out: no file.
    const anonymous = await page(null, thumbs[0]!);
    expect(anonymous.status).toBe(302);
  });

  it("refuses a renamed executable and a missing alt text with the page and why; moves, chooses variants and removes", async () => {
    const { browser, productId, variantId } = await productPage();
    const exe = await upload(browser, productId, [{ name: "holiday.jpg", bytes: EXECUTABLE, type: "image/jpeg" }], "Holiday");
    expect(exe.status).toBe(400);
    expect(await html(exe)).toContain("holiday.jpg: The file is not a JPEG, PNG, WebP or AVIF image (checked by its content, not its name).");
    const noAlt = await upload(browser, productId, [{ name: "a.jpg", bytes: await makeJpeg(50, 50, 21), type: "image/jpeg" }], " ");
    expect(noAlt.status).toBe(400);
    expect(await html(noAlt)).toContain("Not saved: give the image alt text");

    for (const seed of [22, 23]) expect((await upload(browser, productId, [{ name: `${seed}.jpg`, bytes: await makeJpeg(50, 50, seed), type: "image/jpeg" }], `Image ${seed}`)).status).toBe(303);
    const ids = () => page(browser, `/products/${productId}`).then(html).then((t) => [...t.matchAll(/name="mediaId" value="([^"]+)"/g)].map((m) => m[1]!).filter((v, i, all) => all.indexOf(v) === i));
    const alts = () => page(browser, `/products/${productId}`).then(html).then((t) => [...t.matchAll(/<img src="[^"]+" width="\d+" height="\d+" alt="([^"]+)"/g)].map((m) => m[1]));
    expect(await alts()).toEqual(["Image 22", "Image 23"]);
    const [first, second] = await ids();
    expect((await postForm(browser, `/products/${productId}/media`, { csrf: browser.csrf, action: "move", mediaId: second!, direction: "up" })).status).toBe(303);
    expect(await alts()).toEqual(["Image 23", "Image 22"]);
    expect((await postForm(browser, `/products/${productId}/media`, { csrf: browser.csrf, action: "variants", mediaId: first!, variantIds: variantId })).status).toBe(303);
    expect(await html(await page(browser, `/products/${productId}`))).toMatch(new RegExp(`id="show-${first}-${variantId}" type="checkbox" name="variantIds" value="${variantId}" checked`));
    expect((await postForm(browser, `/products/${productId}/media`, { csrf: browser.csrf, action: "remove", mediaId: first! })).status).toBe(303);
    expect(await alts()).toEqual(["Image 23"]);
  });
});
