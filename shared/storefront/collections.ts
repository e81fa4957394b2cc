import { and, asc, eq } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { collection } from "../db/schema";
import type { Q } from "../db/steps";
import { productsPlan, type ProductCard } from "./catalog";

/**
 * Collections as shoppers see them (issue 23 item 3; docs/collections.md): published ones only, each with
 * its active products in the merchant's order, as the same cards as every list (./catalog.ts
 * productsPlan). Each is a plan for the page's one unit of the store (one round trip).
 */

export interface CollectionView {
  title: string;
  handle: string;
  description: string;
  /** Its image (migration 0044), or null. */
  image: { hash: string; width: number; height: number; widths: number[]; alt: string } | null;
}

const viewColumns = { title: collection.title, handle: collection.handle, description: collection.description, image: collection.image };

/** A published collection by handle and one page of its active products (null: no such collection shown). */
export function collectionPagePlan(
  q: Q,
  handle: string,
  paging: { page: number; pageSize: number },
): Plan<{ collection: CollectionView; items: ProductCard[]; total: number } | null> {
  const found = plan(
    [
      q
        .select(viewColumns)
        .from(collection)
        .where(and(eq(collection.storeId, CURRENT_STORE), eq(collection.handle, handle), eq(collection.published, true))),
    ] as const,
    ([rows]) => rows[0] ?? null,
  );
  return mapPlan(together({ found, products: productsPlan(q, { ...paging, sort: "newest", collection: handle }) }), ({ found, products }) =>
    found ? { collection: found, ...products } : null,
  );
}

/** Every published collection, by title (the /collections index). */
export function publishedCollectionsPlan(q: Q): Plan<CollectionView[]> {
  return plan(
    [
      q
        .select(viewColumns)
        .from(collection)
        .where(and(eq(collection.storeId, CURRENT_STORE), eq(collection.published, true)))
        .orderBy(asc(collection.title), asc(collection.handle))
        .limit(500),
    ] as const,
    ([rows]) => rows,
  );
}
