import { and, asc, eq, inArray, isNull, notExists, sql } from "drizzle-orm";
import type { Logger } from "../core/log";
import type { Database } from "../db/database";
import { storeIdBySlug } from "../db/privileged";
import { collection, collectionProduct, member, product, productMedia, productVariant, storeTheme } from "../db/schema";
import { withStore } from "../db/with-store";
import { base64Of } from "../media/store";
import { bandsPicture, coloursOf, productPicture, storeMark, type Pixels } from "../media/demo-images";
import { setCollectionImage } from "../procedures/collections";
import type { Services, StoreProcedure } from "../procedures/define";
import { attachMedia } from "../procedures/media";
import { publishTheme, setThemeImage } from "../procedures/theme";
import { runProcedure } from "../pipeline/run";
import { readTheme, THEME_DEFAULTS } from "../storefront/theme";

/**
 * Demo photos for `npm run dev` (development and tests only: the door refuses it elsewhere; docs/media.md
 * "Demo photos"). For a seeded store: each product without an image gets a drawn picture in its colours, the
 * theme a logo, favicon and banner image (published at once when the draft was the published look), each
 * collection without an image a cover. Everything goes through the procedures a merchant's uploads use (the
 * store's owner as the caller), so rows, files, events and the storefront's catalogue version are as real.
 * Idempotent: what has an image is skipped. At most `limit` images a call (each is about 0.3 s of CPU);
 * `remaining` says how many are left for the next call.
 */
export interface DemoMediaOutcome {
  products: number;
  theme: boolean;
  collections: number;
  remaining: number;
}

async function pngOf(pixels: Pixels): Promise<{ base64: string }> {
  return { base64: base64Of(await (await import("../media/codec")).encodePixelsPng(pixels)) };
}

/** What is still without an image in the store, read in one unit. */
function workOf(db: Database, storeId: string) {
  return withStore(db, storeId, async (tx) => {
    const [owner] = await tx.select({ userId: member.userId }).from(member).where(and(eq(member.storeId, storeId), eq(member.role, "owner"))).limit(1);
    const products = await tx
      .select({ id: product.id, title: product.title })
      .from(product)
      .where(and(eq(product.storeId, storeId), notExists(tx.select({ one: sql`1` }).from(productMedia).where(and(eq(productMedia.storeId, storeId), eq(productMedia.productId, product.id))))))
      .orderBy(asc(product.createdAt), asc(product.id));
    const ids = products.map((p) => p.id);
    const variants = ids.length ? await tx.select({ productId: productVariant.productId, title: productVariant.title }).from(productVariant).where(and(eq(productVariant.storeId, storeId), inArray(productVariant.productId, ids))) : [];
    const [theme] = await tx.select({ draft: storeTheme.draft, published: storeTheme.published }).from(storeTheme).where(eq(storeTheme.storeId, storeId));
    const collections = await tx
      .select({ id: collection.id, title: collection.title })
      .from(collection)
      .where(and(eq(collection.storeId, storeId), isNull(collection.image)))
      .orderBy(asc(collection.createdAt), asc(collection.id));
    const members = collections.length
      ? await tx
          .select({ collectionId: collectionProduct.collectionId, title: product.title })
          .from(collectionProduct)
          .innerJoin(product, and(eq(product.storeId, collectionProduct.storeId), eq(product.id, collectionProduct.productId)))
          .where(and(eq(collectionProduct.storeId, storeId), inArray(collectionProduct.collectionId, collections.map((c) => c.id))))
      : [];
    return { ownerId: owner?.userId, products, variants, theme, collections, members };
  });
}

/** Null when no store has the slug (or it has no owner to act as). */
export async function seedDemoMedia(db: Database, slug: string, options: { services: Services; log: Logger; limit: number }): Promise<DemoMediaOutcome | null> {
  const storeId = await storeIdBySlug(db, slug);
  if (!storeId) return null;
  const work = await workOf(db, storeId);
  if (!work.ownerId) return null;
  const principal = { kind: "member" as const, userId: work.ownerId, storeId };
  const run = (proc: StoreProcedure, input: unknown) => runProcedure(db, principal, proc, input, { door: "session", log: options.log, services: options.services });
  let budget = options.limit;
  const outcome: DemoMediaOutcome = { products: 0, theme: false, collections: 0, remaining: 0 };

  for (const p of work.products) {
    if (budget <= 0) break;
    const words = work.variants.filter((v) => v.productId === p.id).map((v) => v.title);
    await run(attachMedia, { productId: p.id, alt: `${p.title}, drawn in its colours`, image: await pngOf(productPicture(p.title, words)) });
    outcome.products++;
    budget--;
  }

  const published = readTheme(work.theme?.published);
  const draft = readTheme(work.theme?.draft) ?? published ?? THEME_DEFAULTS;
  const themeDue = !draft.logo;
  if (themeDue && budget > 0) {
    // Published at once only when the draft is the published look: a developer's unpublished draft stays a draft.
    const publish = published !== null && JSON.stringify(published) === JSON.stringify(draft);
    const colours = [draft.brandColour, draft.accentColour, ...coloursOf(work.products.map((p) => p.title)).slice(0, 2)];
    await run(setThemeImage, { slot: "logo", image: await pngOf(storeMark(draft.brandColour, draft.accentColour, 320)) });
    await run(setThemeImage, { slot: "favicon", image: await pngOf(storeMark(draft.brandColour, draft.accentColour, 256)) });
    await run(setThemeImage, { slot: "bannerImage", alt: "", image: await pngOf(bandsPicture(colours, 1280, 480, slug)) });
    if (publish) await run(publishTheme, {});
    outcome.theme = true;
    budget -= 3;
  }

  for (const col of work.collections) {
    if (budget <= 0) break;
    const titles = work.members.filter((m) => m.collectionId === col.id).map((m) => m.title);
    await run(setCollectionImage, { id: col.id, alt: "", image: await pngOf(bandsPicture(coloursOf([...titles, col.title]), 960, 480, col.title)) });
    outcome.collections++;
    budget--;
  }

  outcome.remaining = work.products.length - outcome.products + (themeDue && !outcome.theme ? 3 : 0) + work.collections.length - outcome.collections;
  return outcome;
}
