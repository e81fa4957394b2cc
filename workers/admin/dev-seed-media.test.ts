import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { readMediaHeader } from "#shared/media/header";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { ADMIN } from "../../test/admin";
import worker from "./index";

/** POST /-dev/seed-media (npm run dev's demo photos): development and tests only, idempotent, through the real pipeline. */
const db = testDb();
const { MEDIA } = env as Cloudflare.AdminEnv;

const seed = (body: unknown, overrides: Record<string, string> = {}, contentType = "application/json") =>
  call(worker, `${ADMIN}/-dev/seed-media`, { method: "POST", headers: { "content-type": contentType }, body: JSON.stringify(body) }, overrides);

const rows = (store: TestStore, text: string) => withStore(db, store.id, async (tx) => (await tx.$client.query(text, [store.id])).rows);

describe("demo photos (POST /-dev/seed-media)", () => {
  it("is not there outside development and tests, and takes JSON only", async () => {
    const store = await makeStore(db);
    const production = await seed({ store: store.slug }, { APP_ENV: "production", APP_WEBHOOK_ROOT_SECRET: "a-production-root-secret-of-32-characters" });
    expect(production.status).toBe(404);
    await production.arrayBuffer();
    const form = await seed({ store: store.slug }, {}, "application/x-www-form-urlencoded");
    expect(form.status).toBe(415);
    await form.arrayBuffer();
    const unknown = await seed({ store: "no-such-store-here" });
    expect(unknown.status).toBe(404);
    await unknown.arrayBuffer();
    expect(await rows(store, "select count(*)::int as n from product_media where store_id = $1")).toEqual([{ n: 1 }]);
  });

  it("gives products without images a drawn picture, the theme its logo, favicon and banner, collections a cover; a second call does nothing", async () => {
    const store = await makeStore(db);
    const [kurta] = await rows(store, "insert into product (store_id, title, handle, status) values ($1, 'Indigo Cotton Kurta', 'indigo-kurta', 'active') returning id");
    await rows(store, `insert into product_variant (store_id, product_id, title, price_minor) values ($1, '${kurta.id}', 'Indigo', 99900)`);

    // One image a call at most: the rest is left for the next call, and said so.
    const first = await seed({ store: store.slug, limit: 1 });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ products: 1, theme: false, collections: 0, remaining: 4 });
    const [media] = await rows(store, `select hash, alt, width, height, widths from product_media where store_id = $1 and product_id = '${kurta.id}'`);
    expect(media).toMatchObject({ alt: "Indigo Cotton Kurta, drawn in its colours", width: 720, height: 900, widths: [160, 320, 640, 720] });
    const file = await MEDIA.get(`${store.id}/${media.hash}/320.webp`);
    expect(readMediaHeader(new Uint8Array(await file!.arrayBuffer()))).toEqual({ format: "webp", width: 320, height: 400 });

    const rest = await seed({ store: store.slug, limit: 20 });
    expect(await rest.json()).toEqual({ products: 0, theme: true, collections: 1, remaining: 0 });
    const [theme] = await rows(store, "select draft, published from store_theme where store_id = $1");
    expect(theme.draft.logo).toMatchObject({ width: 320, height: 320 });
    expect(theme.draft.favicon.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(theme.draft.bannerImage).toMatchObject({ width: 1280, height: 480, alt: "" });
    // The fixture's theme was never published: its draft stays a draft.
    expect(theme.published).toBeNull();
    const [shelf] = await rows(store, "select image from collection where store_id = $1");
    expect(shelf.image).toMatchObject({ width: 960, height: 480 });

    const again = await seed({ store: store.slug });
    expect(await again.json()).toEqual({ products: 0, theme: false, collections: 0, remaining: 0 });
    expect(await rows(store, "select count(*)::int as n from product_media where store_id = $1")).toEqual([{ n: 2 }]);
  });
});
