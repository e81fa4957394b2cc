import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { ADMIN, ownerOf, page, postForm, rpc, rpcJson, type Browser, type RpcError } from "../../test/admin";
import { base64, EXECUTABLE, makeJpeg, pngHeaderOnly } from "../../test/media";

/** A collection's image (issue 23 item 3) through the media pipeline: procedures and the admin's form. */
const db = testDb();
const { MEDIA } = env as Cloudflare.AdminEnv;

interface Collection {
  id: string;
  image: { hash: string; width: number; height: number; widths: number[]; alt: string } | null;
}

async function collectionOf(browser: Browser, title: string) {
  return rpcJson<Collection>(await rpc(browser, "collections/create", { title, published: true }));
}

function uploadForm(browser: Browser, id: string, bytes: Uint8Array, alt = "") {
  const form = new FormData();
  form.set("csrf", browser.csrf);
  form.set("action", "upload");
  form.set("alt", alt);
  form.set("image", new File([bytes], "photo.jpg", { type: "image/jpeg" }));
  return page(browser, `/collections/${id}/image`, { method: "POST", body: form, headers: { origin: ADMIN } });
}

describe("a collection's image", () => {
  it("is resized into the store's widths under its prefix, replaced and removed; refusals by content write nothing", async () => {
    const { store, browser } = await ownerOf(db);
    const made = await collectionOf(browser, "Festive Edit");
    expect(made.image).toBeNull();
    const res = await rpc(browser, "collections/setImage", { id: made.id, alt: "Diyas and marigolds", image: { base64: base64(await makeJpeg(900, 450, 61)) } });
    expect(res.status).toBe(200);
    const { image } = await rpcJson<Collection>(res);
    expect(image).toMatchObject({ width: 900, height: 450, widths: [160, 320, 640, 900], alt: "Diyas and marigolds" });
    for (const w of image!.widths) expect(await MEDIA.head(`${store.id}/${image!.hash}/${w}.jpg`), `${w}.jpg`).not.toBeNull();
    expect((await rpcJson<Collection>(await rpc(browser, "collections/get", { id: made.id }))).image).toEqual(image);

    const exe = await rpc(browser, "collections/setImage", { id: made.id, image: { base64: base64(EXECUTABLE) } });
    expect(exe.status).toBe(415);
    expect((await rpcJson<RpcError>(exe)).data?.issues?.[0]?.path).toBe("image.base64");
    const bomb = await rpc(browser, "collections/setImage", { id: made.id, image: { base64: base64(pngHeaderOnly(30_000, 30_000)) } });
    expect([bomb.status, (await rpcJson<RpcError>(bomb)).data?.reason]).toEqual([400, "too_many_pixels"]);
    expect((await rpcJson<Collection>(await rpc(browser, "collections/get", { id: made.id }))).image).toEqual(image);

    // Another store's owner cannot give this collection an image: not found there, and nothing is stored.
    const other = await ownerOf(db);
    const foreign = await rpc(other.browser, "collections/setImage", { id: made.id, image: { base64: base64(await makeJpeg(200, 100, 62)) } });
    expect(foreign.status).toBe(404);
    await foreign.arrayBuffer();
    expect((await MEDIA.list({ prefix: `${other.store.id}/` })).objects).toEqual([]);

    const removed = await rpcJson<Collection>(await rpc(browser, "collections/removeImage", { id: made.id }));
    expect(removed.image).toBeNull();
  });

  it("the collection page uploads without JavaScript, shows the thumbnail, refuses a non-image, and removes", async () => {
    const { store, browser } = await ownerOf(db);
    const made = await collectionOf(browser, "Home & Living");
    const before = await (await page(browser, `/collections/${made.id}`)).text();
    expect(before).toContain(`<form method="post" action="/collections/${made.id}/image" enctype="multipart/form-data"`);
    expect(before).toContain("No image: the collection shows its title alone.");

    const refused = await uploadForm(browser, made.id, EXECUTABLE);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert">Not uploaded: .*JPEG, PNG, WebP or AVIF/);

    const done = await uploadForm(browser, made.id, await makeJpeg(640, 480, 63), "Cushions on a charpai");
    expect([done.status, done.headers.get("location")]).toEqual([303, `/collections/${made.id}?done=image-saved#image`]);
    const after = await (await page(browser, `/collections/${made.id}`)).text();
    const thumb = /<img src="(\/collections\/media\/[0-9a-f]{64}\/320\.webp)" width="320" height="240" alt="Cushions on a charpai"/.exec(after);
    expect(thumb).not.toBeNull();
    const file = await page(browser, thumb![1]!);
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "image/webp"]);
    await file.arrayBuffer();
    const foreign = await page((await ownerOf(db)).browser, thumb![1]!);
    expect(foreign.status).toBe(404);
    await foreign.arrayBuffer();

    expect((await postForm(browser, `/collections/${made.id}/image`, { csrf: browser.csrf, action: "remove" })).status).toBe(303);
    const { rows } = await withStore(db, store.id, (tx) => tx.$client.query("select image from collection where id = $1", [made.id]));
    expect(rows[0].image).toBeNull();
  });

  it("removing a product's image keeps its files while a collection shows the same photo", async () => {
    const { store, browser } = await ownerOf(db);
    const made = await collectionOf(browser, "Lamps");
    const { rows } = await withStore(db, store.id, (tx) => tx.$client.query("insert into product (store_id, title, handle) values ($1, 'Lamp', 'lamp') returning id", [store.id]));
    const photo = base64(await makeJpeg(400, 200, 64));
    const item = await rpcJson<{ id: string; hash: string }>(await rpc(browser, "media/attach", { productId: rows[0].id, alt: "Brass lamp", image: { base64: photo } }));
    await rpc(browser, "collections/setImage", { id: made.id, image: { base64: photo } });
    expect((await rpc(browser, "media/remove", { productId: rows[0].id, id: item.id })).status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${item.hash}/400.webp`)).not.toBeNull();
  });
});
