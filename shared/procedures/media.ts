import { and, asc, eq, inArray, isNotNull, notInArray, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { collection, MEDIA_TYPES, product, productMedia, productVariant, storeTheme } from "../db/schema";
import { AppError, type ErrorCode } from "../core/errors";
import { constant, plan } from "../db/plan";
import type { Q } from "../db/steps";
import { MediaRefused } from "../media/header";
import { MAX_MEDIA_BYTES, mediaPath } from "../media/limits";
import { fetchImage, mediaKeys, storeUpload, type MediaBucket, type StoredMedia } from "../media/store";
import { deleteMediaFiles } from "../media/sweep";
import { storeProcedure, type Services } from "./define";
import * as out from "./outputs";

// As products.ts words it (imported from there it would be a cycle: products.delete uses this file).
const productNotFound = () => new AppError("NOT_FOUND", "Product not found in this store.");

/**
 * Product images (docs/media.md): listed, attached (uploaded as base64 or fetched from a URL), their alt
 * text and variants changed, reordered and removed. The files are made and written before the row (in
 * `prepare`, outside the unit), per store and content hash, so a repeated attach costs no second resize.
 */

/**
 * Base64 of the largest upload. The JSON doors read at most 1 MB (/api/rpc, /api/v1) or 256 KB (MCP), which
 * is the real limit there (413): larger images go by URL or through the admin's upload form.
 */
const BASE64_MAX = Math.ceil(MAX_MEDIA_BYTES / 3) * 4;

const alt = z
  .string()
  .trim()
  .min(1, "Describe the image for people who cannot see it (alt text), e.g. the product and its colour")
  .max(500)
  .describe("Alt text: what the image shows, for screen readers and search engines");
const variantIds = z.array(z.uuid()).max(100).describe("Variants that show this image (each shows one image; others keep theirs)");

export const imageSource = z
  .union([
    z.strictObject({ base64: z.base64().min(4).max(BASE64_MAX).describe("The file's bytes in base64 (JPEG, PNG, WebP or AVIF; a JSON body holds at most 1 MB, so about 700 KB this way)") }),
    z.strictObject({ url: z.url().max(2048).describe("An https URL of the image on a public host (redirects are not followed; at most 10 MB)") }),
  ])
  .describe("The image: its bytes in base64, or a URL to fetch it from");

const mediaColumns = {
  id: productMedia.id,
  productId: productMedia.productId,
  position: productMedia.position,
  alt: productMedia.alt,
  hash: productMedia.hash,
  originalType: productMedia.originalType,
  width: productMedia.width,
  height: productMedia.height,
  widths: productMedia.widths,
};

type MediaRow = { [K in keyof typeof mediaColumns]: (typeof mediaColumns)[K]["_"]["data"] };

/** An image as the API answers it: with the storefront paths of its files (under the store's own hostnames). */
function mediaItem(row: MediaRow, variants: readonly { id: string; mediaId: string | null }[]) {
  return {
    ...row,
    variantIds: variants.filter((v) => v.mediaId === row.id).map((v) => v.id),
    files: row.widths.map((w) => ({ width: w, webp: mediaPath(row.hash, w, "webp"), jpeg: mediaPath(row.hash, w, "jpg") })),
  };
}

/** A product's images in order: by position, then as they came. */
const mediaOrder = [asc(productMedia.position), asc(productMedia.createdAt), asc(productMedia.id)];

const ofProduct = (store: SQL, productId: string) => and(eq(productMedia.storeId, store), eq(productMedia.productId, productId));

const productExists = (q: Q, store: SQL, productId: string) =>
  ensure(q, sql`exists (select 1 from ${product} where ${product.storeId} = ${store} and ${product.id} = ${productId} for update)`, productNotFound());

/** Every variant named is one of the product's. */
const variantsOfProduct = (q: Q, store: SQL, productId: string, ids: readonly string[]) =>
  ensure(
    q,
    sql`(select count(*) from ${productVariant} where ${productVariant.storeId} = ${store} and ${productVariant.productId} = ${productId} and ${inArray(productVariant.id, [...ids])}) = ${ids.length}`,
    new AppError("BAD_REQUEST", "A variant named is not a variant of this product.", { issues: [{ path: "variantIds", message: "not a variant of this product" }] }),
  );

/** The variants named show this image; those that showed it and are not named show none. */
function chooseVariants(q: Q, store: SQL, productId: string, mediaId: string, ids: readonly string[]) {
  const ofThis = and(eq(productVariant.storeId, store), eq(productVariant.productId, productId));
  return [
    variantsOfProduct(q, store, productId, ids),
    q
      .update(productVariant)
      .set({ mediaId: null, updatedAt: sql`now()` })
      .where(and(ofThis, eq(productVariant.mediaId, mediaId), ids.length ? notInArray(productVariant.id, [...ids]) : undefined)),
    ...(ids.length ? [q.update(productVariant).set({ mediaId, updatedAt: sql`now()` }).where(and(ofThis, inArray(productVariant.id, [...ids])))] : []),
  ];
}

const REFUSAL_CODE: Record<MediaRefused["reason"], ErrorCode> = {
  too_large: "PAYLOAD_TOO_LARGE",
  not_an_image: "UNSUPPORTED_MEDIA_TYPE",
  unreadable: "BAD_REQUEST",
  too_many_pixels: "BAD_REQUEST",
  unreachable: "BAD_REQUEST",
};

/** A refused upload as a 4xx naming the field. */
export function mediaRefusal(e: MediaRefused, path: string): AppError {
  return new AppError(REFUSAL_CODE[e.reason], e.message, { reason: e.reason, issues: [{ path, message: e.message }] });
}

const noStorage = () => new AppError("SERVICE_UNAVAILABLE", "Image storage is not available at this door; attach the image from the admin or the token API (/api/v1).");

/**
 * The image's bytes (decoded or fetched), checked, then stored under the store's prefix by `store`
 * (resized: storeUpload; a favicon's PNGs: storeIcon). A refusal is a 4xx naming `image.base64` or `image.url`.
 */
export async function upload<T = StoredMedia>(
  services: Services,
  storeId: string,
  source: z.output<typeof imageSource>,
  store: (bucket: MediaBucket, storeId: string, bytes: Uint8Array) => Promise<T> = storeUpload as never,
): Promise<T> {
  const media = services.media?.();
  if (!media) throw noStorage();
  const path = "base64" in source ? "image.base64" : "image.url";
  try {
    const bytes = "base64" in source ? Uint8Array.from(atob(source.base64), (ch) => ch.charCodeAt(0)) : await fetchImage(source.url, media.allowLocalUrls);
    return await store(media.bucket, storeId, bytes);
  } catch (e) {
    throw e instanceof MediaRefused ? mediaRefusal(e, path) : e;
  }
}

/** A product image as the media procedures answer it, with its files' paths per width. */
const mediaOutput = z.object({
  id: out.id,
  productId: out.id,
  position: z.number().int(),
  alt: z.string(),
  hash: z.string(),
  originalType: z.enum(MEDIA_TYPES),
  width: z.number().int(),
  height: z.number().int(),
  widths: z.array(z.number().int()),
  variantIds: z.array(out.id),
  files: z.array(z.object({ width: z.number().int(), webp: z.string(), jpeg: z.string() })),
});

export const listMedia = storeProcedure({
  router: "media",
  name: "list",
  description: "List a product's images in order, with alt text, size, the variants that show each and the storefront paths of each width (WebP and JPEG).",
  access: "products.read",
  mutates: false,
  output: z.object({ items: z.array(mediaOutput) }),
  input: z.strictObject({ productId: z.uuid() }),
  read: (q, { store }, input) =>
    plan(
      [
        q.select({ id: product.id }).from(product).where(and(eq(product.storeId, store), eq(product.id, input.productId))),
        q.select(mediaColumns).from(productMedia).where(ofProduct(store, input.productId)).orderBy(...mediaOrder),
        q
          .select({ id: productVariant.id, mediaId: productVariant.mediaId })
          .from(productVariant)
          .where(and(eq(productVariant.storeId, store), eq(productVariant.productId, input.productId), isNotNull(productVariant.mediaId))),
      ] as const,
      ([[found], rows, variants]) => {
        if (!found) throw productNotFound();
        return { items: rows.map((r) => mediaItem(r, variants)) };
      },
    ),
});

export const attachMedia = storeProcedure({
  router: "media",
  name: "attach",
  description: `Attach an image to a product: JPEG, PNG, WebP or AVIF (checked by content), at most ${MAX_MEDIA_BYTES / 1048576} MB and 12 MP, resized once to widths from 160 to 1920 px in WebP and JPEG. Give the bytes in base64 (small files) or an https URL. It goes last; alt text is required.`,
  access: "products.write",
  mutates: true,
  output: mediaOutput,
  input: z.strictObject({ productId: z.uuid(), alt, image: imageSource, variantIds: variantIds.optional() }),
  write: {
    prepare: (q, { store }, input, services) =>
      plan([q.select({ storeId: product.storeId }).from(product).where(and(eq(product.storeId, store), eq(product.id, input.productId)))] as const, ([[row]]) => {
        if (!row) throw productNotFound();
        return upload(services, row.storeId, input.image);
      }),
    apply(q, { store }, input, stored: StoredMedia) {
      const id = crypto.randomUUID();
      const chosen = input.variantIds ?? [];
      return plan(
        [
          productExists(q, store, input.productId),
          ensure(
            q,
            sql`not exists (select 1 from ${productMedia} where ${ofProduct(store, input.productId)} and ${productMedia.hash} = ${stored.hash})`,
            new AppError("CONFLICT", "This image is on the product already.", { reason: "duplicate_image", issues: [{ path: "image", message: "already on this product" }] }),
          ),
          q
            .insert(productMedia)
            .values({
              id,
              storeId: store,
              productId: input.productId,
              position: sql`(select coalesce(max(${productMedia.position}) + 1, 0) from ${productMedia} where ${ofProduct(store, input.productId)})`,
              alt: input.alt,
              hash: stored.hash,
              originalType: stored.originalType,
              originalBytes: stored.originalBytes,
              width: stored.width,
              height: stored.height,
              widths: stored.widths,
            })
            .returning(mediaColumns),
          ...chooseVariants(q, store, input.productId, id, chosen),
          emitStep(q, "product.updated", { productId: input.productId, fields: ["media"], variants: chosen.length }),
        ] as const,
        ([, , [row]]) => mediaItem(row!, chosen.map((v) => ({ id: v, mediaId: id }))),
      );
    },
  },
});

/** Each image at its index in `ids`. */
const positionSteps = (q: Q, store: SQL, productId: string, ids: readonly string[]) =>
  ids.map((id, position) => q.update(productMedia).set({ position, updatedAt: sql`now()` }).where(and(ofProduct(store, productId), eq(productMedia.id, id))));

const mediaFound = (q: Q, store: SQL, productId: string, id: string) =>
  ensure(
    q,
    sql`exists (select 1 from ${productMedia} where ${ofProduct(store, productId)} and ${productMedia.id} = ${id} for update)`,
    new AppError("NOT_FOUND", "Image not found on this product."),
  );

export const updateMedia = storeProcedure({
  router: "media",
  name: "update",
  description:
    "Change an image's alt text, its place in the product's order (`position`, 0 for the main image; the others keep their order), or which of the product's variants show it (each variant shows one image).",
  access: "products.write",
  mutates: true,
  output: mediaOutput,
  input: z.strictObject({ productId: z.uuid(), id: z.uuid(), alt: alt.optional(), position: z.number().int().min(0).max(99).optional(), variantIds: variantIds.optional() }),
  write: {
    // A new position needs the order as it is (read first; nothing is read otherwise).
    prepare: (q, { store }, input) =>
      input.position === undefined
        ? constant(undefined)
        : plan([q.select({ id: productMedia.id }).from(productMedia).where(ofProduct(store, input.productId)).orderBy(...mediaOrder)] as const, ([rows]) => rows.map((r) => r.id)),
    apply(q, { store }, input, order: string[] | undefined) {
      const where = and(ofProduct(store, input.productId), eq(productMedia.id, input.id));
      const moved = order?.includes(input.id) ? order.filter((id) => id !== input.id) : undefined;
      moved?.splice(Math.min(input.position ?? 0, moved.length), 0, input.id);
      return plan(
        [
          mediaFound(q, store, input.productId, input.id),
          ...(input.alt !== undefined ? [q.update(productMedia).set({ alt: input.alt, updatedAt: sql`now()` }).where(where)] : []),
          // The order read first still holds (else the pipeline reads it again), then every image's new place.
          ...(moved ? [unchanged(q, sql`(select count(*) from ${productMedia} where ${ofProduct(store, input.productId)}) = ${moved.length}`), ...positionSteps(q, store, input.productId, moved)] : []),
          ...(input.variantIds ? chooseVariants(q, store, input.productId, input.id, input.variantIds) : []),
          emitStep(q, "product.updated", { productId: input.productId, fields: ["media"], variants: input.variantIds?.length ?? 0 }),
          q.select(mediaColumns).from(productMedia).where(where),
          q
            .select({ id: productVariant.id, mediaId: productVariant.mediaId })
            .from(productVariant)
            .where(and(eq(productVariant.storeId, store), eq(productVariant.productId, input.productId), eq(productVariant.mediaId, input.id))),
        ] as const,
        (answers) => {
          const variants = answers[answers.length - 1] as { id: string; mediaId: string | null }[];
          const [row] = answers[answers.length - 2] as MediaRow[];
          return mediaItem(row!, variants);
        },
      );
    },
  },
});

export const reorderMedia = storeProcedure({
  router: "media",
  name: "reorder",
  description: "Put a product's images in a new order: give every image's id, first (the product's main image) to last.",
  access: "products.write",
  mutates: true,
  output: z.object({ productId: out.id, ids: z.array(out.id) }),
  input: z.strictObject({ productId: z.uuid(), ids: z.array(z.uuid()).min(1).max(100).refine((ids) => new Set(ids).size === ids.length, "each image once") }),
  write: {
    apply: (q, { store }, input) =>
      plan(
        [
          productExists(q, store, input.productId),
          ensure(
            q,
            sql`(select count(*) from ${productMedia} where ${ofProduct(store, input.productId)}) = ${input.ids.length}
                and (select count(*) from ${productMedia} where ${ofProduct(store, input.productId)} and ${inArray(productMedia.id, input.ids)}) = ${input.ids.length}`,
            new AppError("BAD_REQUEST", "Give every image of the product once, and only its images.", { issues: [{ path: "ids", message: "not exactly the product's images" }] }),
          ),
          ...positionSteps(q, store, input.productId, input.ids),
          emitStep(q, "product.updated", { productId: input.productId, fields: ["media"], variants: 0 }),
        ],
        () => ({ productId: input.productId, ids: input.ids }),
      ),
  },
});

/**
 * The files to delete once the rows going (a product's images, or one of them) are deleted: of each image
 * whose hash no other row of the store names (`others` counts the rows that stay). Read by the change's
 * own unit, before its delete.
 */
export function unusedFilesPlan(q: Q, store: SQL, going: { productId: string; id?: string }) {
  const goes = (alias: string) => {
    const col = (name: string) => sql.raw(`"${alias}"."${name}"`);
    return going.id === undefined ? sql`${col("product_id")} = ${going.productId}` : sql`(${col("product_id")} = ${going.productId} and ${col("id")} = ${going.id})`;
  };
  return q
    .select({
      storeId: productMedia.storeId,
      hash: productMedia.hash,
      widths: productMedia.widths,
      others: sql<number>`(select count(*)::int from ${productMedia} "other" where "other"."store_id" = "product_media"."store_id" and "other"."hash" = "product_media"."hash" and not ${goes("other")})
        + ${storeImagesNaming(sql`"product_media"."store_id"`, sql`"product_media"."hash"`)}`,
    })
    .from(productMedia)
    .where(and(eq(productMedia.storeId, store), goes("product_media")));
}

/**
 * How many of the store's other images name the hash: the theme's logo, favicon or banner image (its draft or
 * published copy) and collections' images. The same photo as a product's image and the banner is one set of
 * files (docs/storefront-theme.md, docs/collections.md), kept while any of them shows it.
 */
export const storeImagesNaming = (storeId: SQL, hash: SQL) =>
  sql`((select count(*)::int from ${storeTheme} "t" where "t"."store_id" = ${storeId} and ${hash} in (
        "t"."draft"->'logo'->>'hash', "t"."draft"->'favicon'->>'hash', "t"."draft"->'bannerImage'->>'hash',
        "t"."published"->'logo'->>'hash', "t"."published"->'favicon'->>'hash', "t"."published"->'bannerImage'->>'hash'))
      + (select count(*)::int from ${collection} "c" where "c"."store_id" = ${storeId} and "c"."image"->>'hash' = ${hash}))`;

/** Whether any row of the store names the hash (a product's image, or one of storeImagesNaming's): its files are kept. */
export const hashNamed = (storeId: SQL, hash: SQL) =>
  sql`(exists (select 1 from ${productMedia} "m" where "m"."store_id" = ${storeId} and "m"."hash" = ${hash}) or ${storeImagesNaming(storeId, hash)} > 0)`;

/** The keys of the files no row names any more (one set per hash). */
export function unusedKeys(rows: readonly { storeId: string; hash: string; widths: number[]; others: number }[]): string[] {
  const seen = new Set<string>();
  return rows.flatMap((r) => (r.others > 0 || seen.has(r.hash) || !seen.add(r.hash) ? [] : mediaKeys(r.storeId, r.hash, r.widths)));
}

/** After the commit: the files no row names any more. A failure is logged by the pipeline and leaves the files (no row points at them: the media sweep deletes them a day later). */
export async function deleteUnusedFiles(keys: readonly string[], services: Services): Promise<void> {
  const media = services.media?.();
  if (!media || keys.length === 0) return;
  await deleteMediaFiles(media.bucket, keys);
}

export const removeMedia = storeProcedure({
  router: "media",
  name: "remove",
  description: "Remove an image from a product. Its variants show no image until another is chosen; its files are deleted unless another product of the store uses the same image.",
  access: "products.write",
  mutates: true,
  output: z.object({ id: out.id, removed: z.literal(true), deletedFiles: z.array(z.string()) }),
  input: z.strictObject({ productId: z.uuid(), id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      return plan(
        [
          mediaFound(q, store, input.productId, input.id),
          unusedFilesPlan(q, store, { productId: input.productId, id: input.id }),
          emitStep(q, "product.updated", { productId: input.productId, fields: ["media"], variants: 0 }),
          q.delete(productMedia).where(and(ofProduct(store, input.productId), eq(productMedia.id, input.id))),
        ] as const,
        ([, rows]) => ({ id: input.id, removed: true as const, deletedFiles: unusedKeys(rows) }),
      );
    },
    after: (output, services) => deleteUnusedFiles(output.deletedFiles, services),
  },
});

export const mediaProcedures = [listMedia, attachMedia, updateMedia, reorderMedia, removeMedia];
