import { and, asc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { product, productMedia, productVariant } from "../db/schema";
import type { Q } from "../db/steps";

/**
 * What a storefront page needs of a product's images (docs/media.md): the hash (the files' name), the alt
 * text, the original's size (the ratio that reserves the space: no layout shift) and the widths made. The
 * files are served by workers/storefront/media.tsx, which also builds `srcset`/`sizes` from these.
 */
export interface ProductImage {
  id: string;
  hash: string;
  alt: string;
  width: number;
  height: number;
  widths: number[];
}

const imageColumns = {
  id: productMedia.id,
  productId: productMedia.productId,
  hash: productMedia.hash,
  alt: productMedia.alt,
  width: productMedia.width,
  height: productMedia.height,
  widths: productMedia.widths,
};

const image = ({ productId: _p, ...r }: { productId: string } & ProductImage): ProductImage => r;

/**
 * The first image (lowest position) of each of these products, one statement: for cards whose ids are known
 * (a collection's, a saved list's). Products without an image are absent from the map.
 */
export function firstImagesPlan(q: Q, productIds: readonly string[]): Plan<Map<string, ProductImage>> {
  return plan(
    [
      q
        .selectDistinctOn([productMedia.productId], imageColumns)
        .from(productMedia)
        .where(and(eq(productMedia.storeId, CURRENT_STORE), inArray(productMedia.productId, productIds.length ? [...productIds] : ["00000000-0000-0000-0000-000000000000"])))
        .orderBy(asc(productMedia.productId), asc(productMedia.position), asc(productMedia.createdAt), asc(productMedia.id)),
    ] as const,
    ([rows]) => new Map(rows.map((r) => [r.productId, image(r)])),
  );
}

/**
 * The first image of the product in a card statement's row, as one column (jsonb, null without an image):
 * `${FIRST_IMAGE_JSON("p")} as image` in a select over `product p`, read back with `imageOfJson`. For the
 * catalogue reads that find their products in the same statement (lists, search), so images cost no trip.
 */
export const FIRST_IMAGE_JSON = (productAlias: string) =>
  `(select jsonb_build_object('id', m.id, 'hash', m.hash, 'alt', m.alt, 'width', m.width, 'height', m.height, 'widths', to_jsonb(m.widths))
     from product_media m where m.store_id = ${productAlias}.store_id and m.product_id = ${productAlias}.id
     order by m.position, m.created_at, m.id limit 1)`;

/** A FIRST_IMAGE_JSON column as read (the driver parses jsonb). */
export const imageOfJson = (value: unknown): ProductImage | null => (value && typeof value === "object" ? (value as ProductImage) : null);

/**
 * An active product's images in order, by handle or id (so it travels in the same unit as the product's own
 * read), and the image each variant shows: the product page's gallery, which switches with the variant.
 */
export function productImagesByHandlePlan(q: Q, handle: string | { id: string }): Plan<{ images: ProductImage[]; variantImage: Record<string, string> }> {
  const named = typeof handle === "string" ? eq(product.handle, handle) : eq(product.id, handle.id);
  const ofProduct = and(eq(product.storeId, CURRENT_STORE), named, eq(product.status, "active"));
  return plan(
    [
      q
        .select(imageColumns)
        .from(productMedia)
        .innerJoin(product, and(eq(product.storeId, productMedia.storeId), eq(product.id, productMedia.productId)))
        .where(and(eq(productMedia.storeId, CURRENT_STORE), ofProduct))
        .orderBy(asc(productMedia.position), asc(productMedia.createdAt), asc(productMedia.id)),
      q
        .select({ variantId: productVariant.id, mediaId: sql<string>`${productVariant.mediaId}` })
        .from(productVariant)
        .innerJoin(product, and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId)))
        .where(and(eq(productVariant.storeId, CURRENT_STORE), ofProduct, isNotNull(productVariant.mediaId))),
    ] as const,
    ([images, variants]) => ({ images: images.map(image), variantImage: Object.fromEntries(variants.map((v) => [v.variantId, v.mediaId])) }),
  );
}
