import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { withStore } from "#shared/db/with-store";
import { product, productVariant } from "#shared/db/schema";
import { readMediaHeader } from "#shared/media/header";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { rpc, rpcJson, sessionFor, type Browser, type RpcError } from "../../test/admin";
import { connectMcpClient, toolResult } from "../../test/oauth";
import { base64, EXECUTABLE, makeAvif, makeJpeg, makePng, pngHeaderOnly } from "../../test/media";

const db = testDb();
const { MEDIA } = env as Cloudflare.AdminEnv;

interface Item {
  id: string;
  alt: string;
  hash: string;
  width: number;
  height: number;
  widths: number[];
  variantIds: string[];
  files: { width: number; webp: string; jpeg: string }[];
}

async function owner(): Promise<{ store: TestStore; browser: Browser; productId: string; variantId: string }> {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  // A product of its own: the fixture product carries makeStore()'s media row.
  const { productId, variantId } = await withStore(db, store.id, async (tx) => {
    const [p] = await tx.insert(product).values({ storeId: store.id, title: "Kurta", handle: "kurta" }).returning({ id: product.id });
    const [v] = await tx.insert(productVariant).values({ storeId: store.id, productId: p!.id, priceMinor: 99_900 }).returning({ id: productVariant.id });
    return { productId: p!.id, variantId: v!.id };
  });
  return { store, browser, productId, variantId };
}

const attach = (browser: Browser, input: Record<string, unknown>) => rpc(browser, "media/attach", input);

describe("product media: upload, resize, R2", () => {
  it("resizes an upload once into each width below it, in WebP and JPEG, under the store's prefix and content hash", async () => {
    const { store, browser, productId, variantId } = await owner();
    const jpeg = await makeJpeg(700, 500);
    const res = await attach(browser, { productId, alt: "Blue cotton kurta, front", image: { base64: base64(jpeg) }, variantIds: [variantId] });
    expect(res.status).toBe(200);
    const item = await rpcJson<Item>(res);
    expect(item).toMatchObject({ alt: "Blue cotton kurta, front", width: 700, height: 500, widths: [160, 320, 640, 700], variantIds: [variantId] });
    expect(item.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(item.files[0]).toEqual({ width: 160, webp: `/media/${item.hash}/160.webp`, jpeg: `/media/${item.hash}/160.jpg` });
    for (const width of item.widths) {
      for (const [ext, type, format] of [["webp", "image/webp", "webp"], ["jpg", "image/jpeg", "jpeg"]] as const) {
        const object = await MEDIA.get(`${store.id}/${item.hash}/${width}.${ext}`);
        expect(object, `${width}.${ext}`).not.toBeNull();
        expect(object!.httpMetadata?.contentType).toBe(type);
        const header = readMediaHeader(new Uint8Array(await object!.arrayBuffer()));
        expect(header).toEqual({ format, width, height: Math.round((500 * width) / 700) });
      }
    }
    expect(await MEDIA.head(`${store.id}/${item.hash}/original`)).not.toBeNull();
    // Never upscaled: no 960 for a 700 px image.
    expect(await MEDIA.head(`${store.id}/${item.hash}/960.webp`)).toBeNull();

    const list = await rpcJson<{ items: Item[] }>(await rpc(browser, "media/list", { productId }));
    expect(list.items.map((i) => [i.id, i.variantIds])).toEqual([[item.id, [variantId]]]);
    // The same bytes again on the same product: refused with the field, nothing written twice.
    const again = await attach(browser, { productId, alt: "Again", image: { base64: base64(jpeg) } });
    expect(again.status).toBe(409);
    expect((await rpcJson<RpcError>(again)).data?.issues).toEqual([{ path: "image", message: "already on this product" }]);
  });

  it("reads PNG and AVIF too: the AVIF's size from its header, its pixels through libavif", async () => {
    const { store, browser, productId } = await owner();
    for (const [bytes, type] of [[await makePng(180, 120, 5), "image/png"], [await makeAvif(180, 120, 6), "image/avif"]] as const) {
      const res = await attach(browser, { productId, alt: type, image: { base64: base64(bytes) } });
      expect(res.status, type).toBe(200);
      const item = await rpcJson<Item & { originalType: string }>(res);
      expect(item).toMatchObject({ originalType: type, width: 180, height: 120, widths: [160, 180] });
      const object = await MEDIA.get(`${store.id}/${item.hash}/160.webp`);
      expect(readMediaHeader(new Uint8Array(await object!.arrayBuffer()))).toEqual({ format: "webp", width: 160, height: 107 });
    }
  });

  it("refuses a renamed executable and a 30,000×30,000 PNG by their content, before decoding, naming the field", async () => {
    const { browser, productId } = await owner();
    const exe = await attach(browser, { productId, alt: "photo.jpg", image: { base64: base64(EXECUTABLE) } });
    expect(exe.status).toBe(415);
    const exeError = await rpcJson<RpcError>(exe);
    expect(exeError.message).toMatch(/not a JPEG, PNG, WebP or AVIF image \(checked by its content, not its name\)/);
    expect(exeError.data?.issues?.[0]?.path).toBe("image.base64");

    // The header alone (no pixel data): refused for its size, not as undecodable, so nothing was decoded.
    const bomb = await attach(browser, { productId, alt: "Huge", image: { base64: base64(pngHeaderOnly(30_000, 30_000)) } });
    expect(bomb.status).toBe(400);
    const bombError = await rpcJson<RpcError>(bomb);
    expect(bombError.data?.reason).toBe("too_many_pixels");
    expect(bombError.message).toMatch(/30000×30000 pixels \(900\.0 MP\); the limit is 12\.0 MP and 10000 pixels a side/);
    expect(bombError.data?.issues?.[0]?.path).toBe("image.base64");

    const list = await rpcJson<{ items: Item[] }>(await rpc(browser, "media/list", { productId }));
    expect(list.items).toEqual([]);
  });

  it("requires alt text, and refuses a variant of another product and a private image URL", async () => {
    const { browser, productId } = await owner();
    const other = await owner();
    const jpeg = base64(await makeJpeg(40, 30));
    const noAlt = await attach(browser, { productId, alt: "   ", image: { base64: jpeg } });
    expect(noAlt.status).toBe(400);
    expect((await rpcJson<RpcError>(noAlt)).data?.issues?.[0]?.path).toBe("alt");
    const missing = await attach(browser, { productId, image: { base64: jpeg } });
    expect(missing.status).toBe(400);
    expect((await rpcJson<RpcError>(missing)).data?.issues?.[0]?.path).toBe("alt");

    const wrongVariant = await attach(browser, { productId, alt: "Kurta", image: { base64: jpeg }, variantIds: [other.variantId] });
    expect(wrongVariant.status).toBe(400);
    expect((await rpcJson<RpcError>(wrongVariant)).data?.issues).toEqual([{ path: "variantIds", message: "not a variant of this product" }]);

    const privateUrl = await attach(browser, { productId, alt: "Kurta", image: { url: "http://10.0.0.7/kurta.jpg" } });
    expect(privateUrl.status).toBe(400);
    const urlError = await rpcJson<RpcError>(privateUrl);
    expect(urlError.data?.issues?.[0]?.path).toBe("image.url");
    expect(urlError.message).toMatch(/private, link-local or reserved address/);
    // Loopback is allowed under APP_ENV test (a server on the developer's machine): the fetch is made, and
    // the local database proxy's 404 for an unknown path is refused with the status.
    const notThere = await attach(browser, { productId, alt: "Kurta", image: { url: `http://${(env as { DB_WS_PROXY?: string }).DB_WS_PROXY}/kurta.jpg` } });
    expect(notThere.status).toBe(400);
    const notThereError = await rpcJson<RpcError>(notThere);
    expect(notThereError.data?.issues?.[0]?.path).toBe("image.url");
    expect(notThereError.message).toBe("The image URL answered 404.");
  });

  it("reorders, changes alt text and variants, removes an image and deletes its files unless another product uses them", async () => {
    const { store, browser, productId, variantId } = await owner();
    const [second] = await withStore(db, store.id, (tx) => tx.insert(product).values({ storeId: store.id, title: "Second", handle: "second" }).returning({ id: product.id }));
    const one = base64(await makeJpeg(200, 200, 1));
    const two = base64(await makeJpeg(200, 200, 2));
    const a = await rpcJson<Item>(await attach(browser, { productId, alt: "One", image: { base64: one } }));
    const b = await rpcJson<Item>(await attach(browser, { productId, alt: "Two", image: { base64: two } }));
    // The same photo on the second product: one set of files, two rows.
    const shared = await rpcJson<Item>(await attach(browser, { productId: second!.id, alt: "One again", image: { base64: one } }));
    expect(shared.hash).toBe(a.hash);

    // Each change of images moves the catalogue version the storefront's edge cache keys pages by.
    const version = () => withStore(db, store.id, async (tx) => Number((await tx.$client.query<{ version: string }>("select version from storefront_version")).rows[0]!.version));
    const before = await version();
    expect((await rpc(browser, "media/reorder", { productId, ids: [b.id, a.id] })).status).toBe(200);
    expect(await version()).toBeGreaterThan(before);
    const badOrder = await rpc(browser, "media/reorder", { productId, ids: [b.id] });
    expect(badOrder.status).toBe(400);
    const updated = await rpcJson<Item>(await rpc(browser, "media/update", { productId, id: b.id, alt: "Two, side", variantIds: [variantId] }));
    expect(updated).toMatchObject({ alt: "Two, side", variantIds: [variantId] });
    const list = await rpcJson<{ items: Item[] }>(await rpc(browser, "media/list", { productId }));
    expect(list.items.map((i) => i.alt)).toEqual(["Two, side", "One"]);
    // One image to a new place: the others keep their order.
    expect((await rpc(browser, "media/update", { productId, id: a.id, position: 0 })).status).toBe(200);
    const moved = await rpcJson<{ items: Item[] }>(await rpc(browser, "media/list", { productId }));
    expect(moved.items.map((i) => i.alt)).toEqual(["One", "Two, side"]);

    // Removing b: its files go (no other row names its hash); the variant shows no image.
    const removed = await rpc(browser, "media/remove", { productId, id: b.id });
    expect(removed.status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${b.hash}/160.webp`)).toBeNull();
    expect(await MEDIA.head(`${store.id}/${b.hash}/original`)).toBeNull();
    const [variant] = await withStore(db, store.id, (tx) => tx.select({ mediaId: productVariant.mediaId }).from(productVariant).where(eq(productVariant.id, variantId)));
    expect(variant!.mediaId).toBeNull();

    // Deleting the first product keeps a's files: the second product still shows them. Deleting that one deletes them.
    expect((await rpc(browser, "products/delete", { id: productId })).status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${a.hash}/200.webp`)).not.toBeNull();
    expect((await rpc(browser, "products/delete", { id: second!.id })).status).toBe(200);
    expect(await MEDIA.head(`${store.id}/${a.hash}/200.webp`)).toBeNull();
    expect(await MEDIA.head(`${store.id}/${a.hash}/original`)).toBeNull();
  });

  it("over MCP: an attach is proposed, approved by the member, then stored; straight through when approval is off", async () => {
    const { client, browser, store } = await connectMcpClient(db, { areas: ["products:write"] });
    await rpc(browser, "store/update", { mcpAllowChanges: true });
    const [p] = await withStore(db, store.id, (tx) => tx.insert(product).values({ storeId: store.id, title: "Banarasi saree", handle: "banarasi" }).returning({ id: product.id }));
    const image = { base64: base64(await makeJpeg(240, 320, 31)) };
    const proposed = toolResult(await client.callTool({ name: "attachProductImage", arguments: { productId: p!.id, alt: "Banarasi saree, pallu", image } }));
    expect(proposed).toMatchObject({ status: "pending" });
    expect(String(proposed["summary"])).toBe('Add an image to "Banarasi saree": "Banarasi saree, pallu".');
    expect((await rpc(browser, "aiApprovals/approve", { id: proposed["approvalId"] })).status).toBe(200);
    const listed = toolResult(await client.callTool({ name: "listProductImages", arguments: { productId: p!.id } })) as unknown as { items: Item[] };
    expect(listed.items.map((i) => [i.alt, i.widths])).toEqual([["Banarasi saree, pallu", [160, 240]]]);
    expect(await MEDIA.head(`${store.id}/${listed.items[0]!.hash}/240.webp`)).not.toBeNull();

    await rpc(browser, "store/update", { mcpChangesNeedApproval: false });
    const auto = toolResult(await client.callTool({ name: "attachProductImage", arguments: { productId: p!.id, alt: "Banarasi saree, border", image: { base64: base64(await makeJpeg(240, 320, 32)) } } }));
    expect(auto).toMatchObject({ status: "approved", result: { alt: "Banarasi saree, border", widths: [160, 240] } });
    const removed = toolResult(await client.callTool({ name: "removeProductImage", arguments: { productId: p!.id, id: (auto["result"] as Item).id } }));
    expect(removed).toMatchObject({ status: "approved" });
    expect(await MEDIA.head(`${store.id}/${(auto["result"] as Item).hash}/240.webp`)).toBeNull();
  });
});
