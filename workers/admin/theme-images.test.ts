import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { product } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { readMediaHeader } from "#shared/media/header";
import type { ThemeState } from "#shared/procedures/theme";
import { testDb } from "../../test/harness";
import { ADMIN, ownerOf, page, postForm, rpc, rpcJson, type Browser, type RpcError } from "../../test/admin";
import { base64, EXECUTABLE, makeJpeg, makePng, pngHeaderOnly } from "../../test/media";

/** Settings → Storefront's images (issue 23 item 2): the logo, favicon and banner image through the media pipeline. */
const db = testDb();
const { MEDIA } = env as Cloudflare.AdminEnv;

const setImage = (browser: Browser, input: Record<string, unknown>) => rpc(browser, "theme/setImage", input);

/** The images form as a browser sends it: multipart, same-origin, with the page's CSRF token. */
function uploadForm(browser: Browser, slot: string, file: { name: string; bytes: Uint8Array; type: string }, alt?: string) {
  const form = new FormData();
  form.set("csrf", browser.csrf);
  form.set("action", "upload");
  form.set("slot", slot);
  if (alt !== undefined) form.set("alt", alt);
  form.set("image", new File([file.bytes], file.name, { type: file.type }));
  return page(browser, "/settings/storefront/images", { method: "POST", body: form, headers: { origin: ADMIN } });
}

describe("theme images: uploaded through the media pipeline into the draft", () => {
  it("resizes the logo and banner into the store's widths and crops the favicon into 32 and 180 px PNGs, all under the store's prefix", async () => {
    const { store, browser } = await ownerOf(db);
    const logoRes = await setImage(browser, { slot: "logo", image: { base64: base64(await makePng(600, 200, 11)) } });
    expect(logoRes.status).toBe(200);
    const { draft, published } = await rpcJson<ThemeState>(logoRes);
    expect(published).toBeNull();
    expect(draft.logo).toMatchObject({ width: 600, height: 200, widths: [160, 320, 600], alt: "" });
    for (const w of draft.logo!.widths) expect(await MEDIA.head(`${store.id}/${draft.logo!.hash}/${w}.webp`), `${w}.webp`).not.toBeNull();

    const banner = await rpcJson<ThemeState>(await setImage(browser, { slot: "bannerImage", alt: "Lamps on a silk saree", image: { base64: base64(await makeJpeg(1000, 400, 12)) } }));
    expect(banner.draft.bannerImage).toMatchObject({ width: 1000, height: 400, widths: [160, 320, 640, 960, 1000], alt: "Lamps on a silk saree" });
    expect(banner.draft.logo).toEqual(draft.logo);

    const icon = await rpcJson<ThemeState>(await setImage(browser, { slot: "favicon", image: { base64: base64(await makePng(300, 200, 13)) } }));
    const hash = icon.draft.favicon!.hash;
    for (const size of [32, 180]) {
      const object = await MEDIA.get(`${store.id}/${hash}/icon-${size}.png`);
      expect(object!.httpMetadata?.contentType).toBe("image/png");
      expect(readMediaHeader(new Uint8Array(await object!.arrayBuffer()))).toEqual({ format: "png", width: size, height: size });
    }

    const removed = await rpcJson<ThemeState>(await rpc(browser, "theme/removeImage", { slot: "logo" }));
    expect(removed.draft.logo).toBeNull();
    expect(removed.draft.favicon).toEqual({ hash });
  });

  it("refuses a renamed executable and a 30,000 x 30,000 PNG by content, naming the field, and leaves the draft as it was", async () => {
    const { browser } = await ownerOf(db);
    const exe = await setImage(browser, { slot: "logo", image: { base64: base64(EXECUTABLE) } });
    expect(exe.status).toBe(415);
    const exeError = await rpcJson<RpcError>(exe);
    expect(exeError.data?.reason).toBe("not_an_image");
    expect(exeError.data?.issues?.[0]?.path).toBe("image.base64");

    const bomb = await setImage(browser, { slot: "favicon", image: { base64: base64(pngHeaderOnly(30_000, 30_000)) } });
    expect(bomb.status).toBe(400);
    expect((await rpcJson<RpcError>(bomb)).data?.reason).toBe("too_many_pixels");

    const wrongSlot = await setImage(browser, { slot: "hero", image: { base64: base64(await makePng(10, 10)) } });
    expect(wrongSlot.status).toBe(400);
    await wrongSlot.arrayBuffer();

    const { draft } = await rpcJson<ThemeState>(await rpc(browser, "theme/get", {}));
    expect([draft.logo, draft.favicon, draft.bannerImage]).toEqual([null, null, null]);
  });

  it("the settings page uploads without JavaScript, shows the draft's thumbnail and preview, refuses by content, and removes", async () => {
    const { browser } = await ownerOf(db);
    const before = await (await page(browser, "/settings/storefront")).text();
    expect(before).toContain('enctype="multipart/form-data"');
    expect(before).toContain('<label for="image-logo">Upload a logo</label>');

    const refused = await uploadForm(browser, "logo", { name: "logo.png", bytes: EXECUTABLE, type: "image/png" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert">Not uploaded: .*JPEG, PNG, WebP or AVIF/);

    const done = await uploadForm(browser, "logo", { name: "logo.png", bytes: await makePng(500, 250, 21), type: "image/png" });
    expect([done.status, done.headers.get("location")]).toEqual([303, "/settings/storefront?done=image-saved#theme-images"]);
    const after = await (await page(browser, "/settings/storefront")).text();
    const thumb = /<img src="(\/settings\/storefront\/media\/[0-9a-f]{64}\/160\.webp)"/.exec(after);
    expect(thumb).not.toBeNull();
    expect(after).toContain("Replace the logo");
    // The preview's header shows the draft's logo with the store's name as its alt text.
    expect(after).toMatch(/<a href="#preview" class="brand"><img src="\/settings\/storefront\/media\/[0-9a-f]{64}\/320\.webp" width="80" height="40" alt="/);
    const file = await page(browser, thumb![1]!);
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "image/webp"]);
    await file.arrayBuffer();

    // Another store's member cannot read this store's theme files through the admin.
    const other = await ownerOf(db);
    const foreign = await page(other.browser, thumb![1]!);
    expect(foreign.status).toBe(404);
    await foreign.arrayBuffer();

    const remove = await postForm(browser, "/settings/storefront/images", { csrf: browser.csrf, action: "remove", slot: "logo" });
    expect(remove.status).toBe(303);
    const { draft } = await rpcJson<ThemeState>(await rpc(browser, "theme/get", {}));
    expect(draft.logo).toBeNull();
  });

  it("removing a product's image keeps its files while the theme shows the same photo as its banner", async () => {
    const { store, browser } = await ownerOf(db);
    const productId = await withStore(db, store.id, async (tx) => (await tx.insert(product).values({ storeId: store.id, title: "Lamp", handle: "lamp" }).returning({ id: product.id }))[0]!.id);
    const photo = base64(await makeJpeg(400, 200, 41));
    const item = await rpcJson<{ id: string; hash: string }>(await rpc(browser, "media/attach", { productId, alt: "Brass lamp", image: { base64: photo } }));
    const banner = await rpcJson<ThemeState>(await setImage(browser, { slot: "bannerImage", image: { base64: photo } }));
    expect(banner.draft.bannerImage?.hash).toBe(item.hash);
    expect((await rpc(browser, "media/remove", { productId, id: item.id })).status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${item.hash}/400.webp`)).not.toBeNull();
    // Once nothing names it, the next removal deletes the files.
    await rpc(browser, "theme/removeImage", { slot: "bannerImage" });
    const again = await rpcJson<{ id: string }>(await rpc(browser, "media/attach", { productId, alt: "Brass lamp", image: { base64: photo } }));
    expect((await rpc(browser, "media/remove", { productId, id: again.id })).status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${item.hash}/400.webp`)).toBeNull();
  });
});
