import { and, asc, desc, eq, ilike, inArray, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { constant, plan, thenPlan } from "../db/plan";
import { collection, collectionProduct, product, PRODUCT_STATUSES } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import type { StoredMedia } from "../media/store";
import { imageSource, upload } from "./media";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import { freeHandlePlan, handleSchema } from "./slug";
import * as out from "./outputs";

/**
 * Collections (issue 23 item 3; docs/collections.md): a merchant's own ordered lists of products, shown at
 * /collections/<handle> while published. Curating them is catalogue work (products.read / products.write,
 * as staff may); deleting one is a delete (records.delete), as a product's is. Its optional image goes
 * through the product-media pipeline (collections.setImage: checked by content, resized, stored under the
 * store's prefix in R2).
 */

/** At most this many products in one collection (one form, one change). */
export const COLLECTION_PRODUCTS_MAX = 500;

const collectionFields = {
  title: z.string().trim().min(1).max(255),
  handle: handleSchema.describe("The collection's URL path segment, e.g. summer-kurtas (/collections/summer-kurtas)"),
  description: z.string().max(20_000).describe("Shown above the products on the collection's page (at most 20000 characters)"),
  published: z.boolean().describe("Shown on the storefront (true) or kept as a draft (false)"),
};

export const collectionNotFound = () => new AppError("NOT_FOUND", "Collection not found in this store.");

const summaryColumns = {
  id: collection.id,
  title: collection.title,
  handle: collection.handle,
  published: collection.published,
  createdAt: collection.createdAt,
  updatedAt: collection.updatedAt,
};

// The outer row of a correlated count (drizzle renders columns bare in a one-table select).
const C_STORE = sql.raw('"collection"."store_id"');
const C_ID = sql.raw('"collection"."id"');
const productCount = sql<number>`(select count(*)::int from ${collectionProduct} cp where cp.store_id = ${C_STORE} and cp.collection_id = ${C_ID})`;

const ofCollection = (store: SQL, id: string) => and(eq(collection.storeId, store), eq(collection.id, id));

/** The collection exists in the store; it is locked for the rest of the change. */
const collectionFound = (q: Q, store: SQL, id: string) =>
  ensure(q, sql`exists (select 1 from ${collection} where ${ofCollection(store, id)} for update)`, collectionNotFound());


/** One collection with its description and its products in order (every status: the admin's view). */
export function collectionPlan(q: Q, store: SQL, id: string) {
  return plan(
    [
      q
        .select({ ...summaryColumns, description: collection.description, image: collection.image })
        .from(collection)
        .where(ofCollection(store, id)),
      q
        .select({ id: product.id, title: product.title, handle: product.handle, status: product.status, position: collectionProduct.position })
        .from(collectionProduct)
        .innerJoin(product, and(eq(product.storeId, collectionProduct.storeId), eq(product.id, collectionProduct.productId)))
        .where(and(eq(collectionProduct.storeId, store), eq(collectionProduct.collectionId, id)))
        .orderBy(asc(collectionProduct.position)),
    ] as const,
    ([[row], products]) => {
      if (!row) throw collectionNotFound();
      return { ...row, products: products.map(({ position: _, ...p }) => p) };
    },
  );
}

const collectionRow = z.object({ id: out.id, title: z.string(), handle: z.string(), published: z.boolean(), createdAt: out.instant, updatedAt: out.instant });
/** A collection as its procedures answer it: with its description, image and products in order. */
const collectionOutput = collectionRow.extend({
  description: z.string(),
  image: out.imageOutput.nullable(),
  products: z.array(z.object({ id: out.id, title: z.string(), handle: z.string(), status: z.enum(PRODUCT_STATUSES) })),
});

export const listCollections = storeProcedure({
  router: "collections",
  name: "list",
  description:
    "List the store's collections, most recently changed first, with paging and how many products each holds. Filter by published or search title and handle.",
  access: "products.read",
  mutates: false,
  output: out.paged(collectionRow.extend({ productCount: z.number().int() })),
  input: z.strictObject({
    ...pagingInput,
    published: z.boolean().optional(),
    query: z.string().trim().max(200).optional(),
  }),
  read(q, { store }, input) {
    const conditions: (SQL | undefined)[] = [eq(collection.storeId, store)];
    if (input.published !== undefined) conditions.push(eq(collection.published, input.published));
    if (input.query) {
      const pattern = likePattern(input.query);
      conditions.push(or(ilike(collection.title, pattern), ilike(collection.handle, pattern)));
    }
    const where = and(...conditions);
    return pagePlan(
      q
        .select({ ...summaryColumns, productCount })
        .from(collection)
        .where(where)
        .orderBy(desc(collection.updatedAt), desc(collection.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(collection).where(where),
      input,
    );
  },
});

export const getCollection = storeProcedure({
  router: "collections",
  name: "get",
  description: "One collection by id, with its description and its products in the collection's order.",
  access: "products.read",
  mutates: false,
  output: collectionOutput,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, { store }, input) => collectionPlan(q, store, input.id),
});

export const createCollection = storeProcedure({
  router: "collections",
  name: "create",
  description:
    "Create a collection (unpublished unless published: true). The handle is derived from the title when not given. Add its products with collections.setProducts.",
  access: "products.write",
  mutates: true,
  output: collectionOutput,
  input: z.strictObject({
    title: collectionFields.title,
    handle: collectionFields.handle.optional(),
    description: collectionFields.description.default(""),
    published: collectionFields.published.default(false),
  }),
  write: {
    // As a page's: a derived handle is checked still free by the change (else it runs again); a handle given
    // is left to the unique key (409).
    prepare: (q, { store }, input) => (input.handle ? constant(input.handle) : freeHandlePlan(q, collection, store, input.title)),
    apply(q, { store }, input, handle: string) {
      const id = crypto.randomUUID();
      return thenPlan(
        [
          ...(input.handle
            ? []
            : [unchanged(q, sql`not exists (select 1 from ${collection} where ${collection.storeId} = ${store} and ${collection.handle} = ${handle})`)]),
          q.insert(collection).values({ ...input, id, handle, storeId: store }),
          emitStep(q, "collection.created", { collectionId: id }),
        ],
        collectionPlan(q, store, id),
      );
    },
  },
});

export const updateCollection = storeProcedure({
  router: "collections",
  name: "update",
  description: "Change a collection's title, handle, description or whether it is published. Its products change with collections.setProducts.",
  access: "products.write",
  mutates: true,
  output: collectionOutput,
  input: z.strictObject({
    id: z.uuid(),
    title: collectionFields.title.optional(),
    handle: collectionFields.handle.optional(),
    description: collectionFields.description.optional(),
    published: collectionFields.published.optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, ...fields } = input;
      return thenPlan(
        [
          collectionFound(q, store, id),
          q.update(collection).set({ ...fields, updatedAt: sql`now()` }).where(ofCollection(store, id)),
          emitStep(q, "collection.updated", { collectionId: id, fields: Object.keys(fields) }),
        ],
        collectionPlan(q, store, id),
      );
    },
  },
});

export const setCollectionProducts = storeProcedure({
  router: "collections",
  name: "setProducts",
  description: `Replace a collection's products with these, in this order (the first is shown first). Every id must be a product of this store; at most ${COLLECTION_PRODUCTS_MAX}, each once. Drafts may be listed: shoppers see only active products.`,
  access: "products.write",
  mutates: true,
  output: collectionOutput,
  input: z.strictObject({
    id: z.uuid(),
    productIds: z
      .array(z.uuid())
      .max(COLLECTION_PRODUCTS_MAX)
      .refine((ids) => new Set(ids.map((i) => i.toLowerCase())).size === ids.length, "List each product once"),
  }),
  write: {
    apply(q, { store }, input) {
      const ids = input.productIds.map((i) => i.toLowerCase());
      const where = and(eq(collectionProduct.storeId, store), eq(collectionProduct.collectionId, input.id));
      return thenPlan(
        [
          collectionFound(q, store, input.id),
          // Another store's product is not found here (RLS hides it; the filter names the store as well).
          ...(ids.length
            ? [
                ensure(
                  q,
                  sql`(select count(*) from ${product} where ${and(eq(product.storeId, store), inArray(product.id, ids))}) = ${ids.length}`,
                  new AppError("NOT_FOUND", "A product of the list is not a product of this store.", {
                    issues: [{ path: "productIds", message: "not a product of this store" }],
                  }),
                ),
              ]
            : []),
          q.delete(collectionProduct).where(where),
          ...(ids.length ? [q.insert(collectionProduct).values(ids.map((productId, position) => ({ storeId: store, collectionId: input.id, productId, position })))] : []),
          q.update(collection).set({ updatedAt: sql`now()` }).where(ofCollection(store, input.id)),
          emitStep(q, "collection.updated", { collectionId: input.id, fields: ["products"], products: ids.length }),
        ],
        collectionPlan(q, store, input.id),
      );
    },
  },
});

export const deleteCollection = storeProcedure({
  router: "collections",
  name: "delete",
  description: "Delete a collection for good, and its menu items. Its products stay.",
  access: "records.delete",
  mutates: true,
  output: out.deleted,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply: (q, { store }, input) => {
      const where = ofCollection(store, input.id);
      return plan(
        [
          collectionFound(q, store, input.id),
          // The event names the collection as it was: written before the row goes.
          emitStep(q, "collection.deleted", sql`(select jsonb_build_object('collectionId', ${collection.id}, 'title', ${collection.title}) from ${collection} where ${where})`),
          q.delete(collection).where(where),
        ] as const,
        () => ({ id: input.id, deleted: true }),
      );
    },
  },
});

/** The collection's image set (or taken off: null), answering the collection. */
function imagePlan(q: Q, store: SQL, id: string, image: (typeof collection.$inferInsert)["image"]) {
  return thenPlan(
    [
      collectionFound(q, store, id),
      q.update(collection).set({ image, updatedAt: sql`now()` }).where(ofCollection(store, id)),
      emitStep(q, "collection.updated", { collectionId: id, fields: ["image"] }),
    ],
    collectionPlan(q, store, id),
  );
}

export const setCollectionImage = storeProcedure({
  router: "collections",
  name: "setImage",
  description:
    "Give a collection its image (replacing any): JPEG, PNG, WebP or AVIF, checked by content, at most 10 MB and 12 MP, resized once to widths up to 1920 px in WebP and JPEG. Give the bytes in base64 (small files) or an https URL. Shown on /collections and above the collection's products.",
  access: "products.write",
  mutates: true,
  output: collectionOutput,
  input: z.strictObject({
    id: z.uuid(),
    image: imageSource,
    alt: z.string().trim().max(500).optional().describe("What the image shows; empty when the collection's title beside it says it all (decoration)"),
  }),
  write: {
    // The collection is found before anything is uploaded; the files are made outside the unit.
    prepare: (q, { store }, input, services) =>
      plan([q.select({ storeId: collection.storeId }).from(collection).where(ofCollection(store, input.id))] as const, ([[row]]) => {
        if (!row) throw collectionNotFound();
        return upload(services, row.storeId, input.image);
      }),
    apply(q, { store }, input, stored: StoredMedia) {
      return imagePlan(q, store, input.id, { hash: stored.hash, width: stored.width, height: stored.height, widths: stored.widths, alt: input.alt ?? "" });
    },
  },
});

export const removeCollectionImage = storeProcedure({
  router: "collections",
  name: "removeImage",
  description: "Take a collection's image off (its page and the collections list show none).",
  access: "products.write",
  mutates: true,
  output: collectionOutput,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply: (q, { store }, input) => imagePlan(q, store, input.id, null),
  },
});

export const collectionProcedures = [listCollections, getCollection, createCollection, updateCollection, setCollectionProducts, setCollectionImage, removeCollectionImage, deleteCollection];
