import { and, asc, desc, eq, ilike, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { inventoryLevel, location, product, productVariant, PRODUCT_STATUSES, TAX_CLASSES } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import { constant, plan, thenPlan } from "../db/plan";
import type { Q, StatementClient, Step } from "../db/steps";
import { runPlanOn } from "../db/unit";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import { freeHandlePlan, handleSchema } from "./slug";
import * as out from "./outputs";

const MONEY_MAX = 100_000_000_000;
const money = z.number().int().min(0).max(MONEY_MAX);
const sku = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$/, "Use letters, digits and . _ / - (at most 64)");

const variantFields = {
  title: z.string().trim().min(1).max(255),
  sku: sku.nullable(),
  priceMinor: money.describe("Price in minor units of the store currency (paise for INR)"),
  compareAtMinor: money.nullable(),
  taxClass: z.enum(TAX_CLASSES),
  preorder: z.boolean().describe("Sell while out of stock; the balance is requested later"),
};

const newVariant = z.strictObject({
  title: variantFields.title.default("Default"),
  sku: variantFields.sku.optional(),
  priceMinor: variantFields.priceMinor,
  compareAtMinor: variantFields.compareAtMinor.optional(),
  taxClass: variantFields.taxClass.default("gst_18"),
  preorder: variantFields.preorder.default(false),
});

const productFields = {
  title: z.string().trim().min(1).max(255),
  handle: handleSchema,
  description: z.string().max(20_000),
  status: z.enum(PRODUCT_STATUSES),
  vendor: z.string().trim().max(255).nullable(),
  hsnCode: z.string().regex(/^[0-9]{4}([0-9]{2}){0,2}$/, "An HSN code has 4, 6 or 8 digits").nullable(),
};

// Correlated subqueries need the outer columns qualified; drizzle renders columns bare in a one-table select.
const P_STORE = sql.raw('"product"."store_id"');
const P_ID = sql.raw('"product"."id"');

export const productNotFound = () => new AppError("NOT_FOUND", "Product not found in this store.");

const productColumns = {
  id: product.id,
  title: product.title,
  handle: product.handle,
  description: product.description,
  status: product.status,
  vendor: product.vendor,
  hsnCode: product.hsnCode,
  createdAt: product.createdAt,
  updatedAt: product.updatedAt,
};

const variantColumns = {
  id: productVariant.id,
  title: productVariant.title,
  sku: productVariant.sku,
  priceMinor: productVariant.priceMinor,
  compareAtMinor: productVariant.compareAtMinor,
  taxClass: productVariant.taxClass,
  preorder: productVariant.preorder,
  position: productVariant.position,
};


/** The product exists in the store; it is locked for the rest of the change. */
export const productFound = (q: Q, store: SQL, id: string) =>
  ensure(q, sql`exists (select 1 from ${product} where ${product.storeId} = ${store} and ${product.id} = ${id} for update)`, productNotFound());

/** The product as the change left it, read by the change's own unit. */
export const thenProduct = (q: Q, store: SQL, id: string, change: readonly Step[]) => thenPlan(change, productPlan(q, store, id));

/** A product with its variants and each variant's stock per location: three statements, one unit. */
export function productPlan(q: Q, store: SQL, id: string) {
  return plan(
    [
      q.select(productColumns).from(product).where(and(eq(product.storeId, store), eq(product.id, id))),
      q
        .select(variantColumns)
        .from(productVariant)
        .where(and(eq(productVariant.storeId, store), eq(productVariant.productId, id)))
        .orderBy(asc(productVariant.position), asc(productVariant.createdAt)),
      q
        .select({
          variantId: inventoryLevel.variantId,
          locationId: inventoryLevel.locationId,
          locationName: location.name,
          onHand: inventoryLevel.onHand,
          reserved: inventoryLevel.reserved,
        })
        .from(inventoryLevel)
        .innerJoin(location, and(eq(location.storeId, inventoryLevel.storeId), eq(location.id, inventoryLevel.locationId)))
        .innerJoin(productVariant, and(eq(productVariant.storeId, inventoryLevel.storeId), eq(productVariant.id, inventoryLevel.variantId)))
        .where(and(eq(inventoryLevel.storeId, store), eq(productVariant.productId, id)))
        .orderBy(asc(location.name)),
    ] as const,
    ([[row], variants, levels]) => {
      if (!row) throw productNotFound();
      return {
        ...row,
        variants: variants.map((v) => ({
          ...v,
          inventory: levels
            .filter((l) => l.variantId === v.id)
            .map(({ locationId, locationName, onHand, reserved }) => ({ locationId, locationName, onHand, reserved, available: onHand - reserved })),
        })),
      };
    },
  );
}

/** The same, inside a transaction that is open already (a change answers the product as it now is). */
export function loadProduct(tx: StoreTx, id: string) {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => productPlan(q, sql`${tx.storeId}::uuid`, id));
}

/** A product as its procedures answer it: its variants in order, each with its stock per location. */
export const productOutput = z.object({
  id: out.id,
  title: z.string(),
  handle: z.string(),
  description: z.string(),
  status: z.enum(PRODUCT_STATUSES),
  vendor: z.string().nullable(),
  hsnCode: z.string().nullable(),
  createdAt: out.instant,
  updatedAt: out.instant,
  variants: z.array(
    z.object({
      id: out.id,
      title: z.string(),
      sku: z.string().nullable(),
      priceMinor: out.minor,
      compareAtMinor: out.minor.nullable(),
      taxClass: z.enum(TAX_CLASSES),
      preorder: z.boolean(),
      position: z.number().int(),
      inventory: z.array(z.object({ locationId: out.id, locationName: z.string(), onHand: z.number().int(), reserved: z.number().int(), available: z.number().int() })),
    }),
  ),
});

export const listProducts = storeProcedure({
  router: "products",
  name: "list",
  description: "List the store's products, newest change first, with paging. Filter by status or search title, handle and SKU.",
  access: "products.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, title: z.string(), handle: z.string(), status: z.enum(PRODUCT_STATUSES), vendor: z.string().nullable(), updatedAt: out.instant, variantCount: z.number().int(), priceMinMinor: out.minor.nullable(), priceMaxMinor: out.minor.nullable(), onHand: z.number().int() })),
  input: z.strictObject({
    ...pagingInput,
    query: z.string().trim().max(200).optional(),
    status: productFields.status.optional(),
  }),
  read(q, { store }, input) {
    const conditions: (SQL | undefined)[] = [eq(product.storeId, store)];
    if (input.status) conditions.push(eq(product.status, input.status));
    if (input.query) {
      const pattern = likePattern(input.query);
      conditions.push(
        or(
          ilike(product.title, pattern),
          ilike(product.handle, pattern),
          sql`exists (select 1 from ${productVariant} v where v.store_id = ${P_STORE} and v.product_id = ${P_ID} and v.sku ilike ${pattern})`,
        ),
      );
    }
    const where = and(...conditions);
    return pagePlan(
      q
        .select({
          id: product.id,
          title: product.title,
          handle: product.handle,
          status: product.status,
          vendor: product.vendor,
          updatedAt: product.updatedAt,
          variantCount: sql<number>`(select count(*)::int from ${productVariant} v where v.store_id = ${P_STORE} and v.product_id = ${P_ID})`,
          priceMinMinor: sql<number | null>`(select min(v.price_minor)::float8 from ${productVariant} v where v.store_id = ${P_STORE} and v.product_id = ${P_ID})`,
          priceMaxMinor: sql<number | null>`(select max(v.price_minor)::float8 from ${productVariant} v where v.store_id = ${P_STORE} and v.product_id = ${P_ID})`,
          onHand: sql<number>`(select coalesce(sum(l.on_hand), 0)::int from ${inventoryLevel} l join ${productVariant} v on v.store_id = l.store_id and v.id = l.variant_id where l.store_id = ${P_STORE} and v.product_id = ${P_ID})`,
        })
        .from(product)
        .where(where)
        .orderBy(desc(product.updatedAt), desc(product.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(product).where(where),
      input,
    );
  },
});

export const getProduct = storeProcedure({
  router: "products",
  name: "get",
  description: "One product by id, with its variants (SKU, price in minor units, GST class, pre-order) and stock per location.",
  access: "products.read",
  mutates: false,
  output: productOutput,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, { store }, input) => productPlan(q, store, input.id),
});

export const createProduct = storeProcedure({
  router: "products",
  name: "create",
  description: "Create a product with one or more variants. The handle is derived from the title when not given.",
  access: "products.write",
  mutates: true,
  output: productOutput,
  input: z.strictObject({
    title: productFields.title,
    handle: productFields.handle.optional(),
    description: productFields.description.default(""),
    status: productFields.status.default("draft"),
    vendor: productFields.vendor.optional(),
    hsnCode: productFields.hsnCode.optional(),
    variants: z.array(newVariant).min(1).max(100),
  }),
  write: {
    // A handle derived from the title must be free: the handles in use are read first (one trip), and the
    // change checks that the one chosen is still free (else it runs again with a fresh reading).
    prepare: (q, { store }, input) => (input.handle ? constant(input.handle) : freeHandlePlan(q, product, store, input.title)),
    apply(q, scope, input, handle: string) {
      const { variants, ...fields } = input;
      const id = crypto.randomUUID();
      return thenProduct(q, scope.store, id, [
        // A derived handle taken since it was read is a lost race (read again: the next one is free); a
        // handle the caller chose and another product has is the unique constraint's 409 naming the field.
        ...(input.handle ? [] : [unchanged(q, sql`not exists (select 1 from ${product} where ${product.storeId} = ${scope.store} and ${product.handle} = ${handle})`)]),
        q.insert(product).values({ ...fields, id, handle, storeId: scope.store }),
        q.insert(productVariant).values(variants.map((v, position) => ({ ...v, storeId: scope.store, productId: id, position }))),
        emitStep(q, "product.created", { productId: id }),
      ]);
    },
  },
});

export const updateProduct = storeProcedure({
  router: "products",
  name: "update",
  description:
    "Change a product's fields and its variants. Variants with an id are updated (only the fields given); variants without an id are added.",
  access: "products.write",
  mutates: true,
  output: productOutput,
  input: z.strictObject({
    id: z.uuid(),
    title: productFields.title.optional(),
    handle: productFields.handle.optional(),
    description: productFields.description.optional(),
    status: productFields.status.optional(),
    vendor: productFields.vendor.optional(),
    hsnCode: productFields.hsnCode.optional(),
    variants: z
      .array(
        z.union([
          z.strictObject({
            id: z.uuid(),
            title: variantFields.title.optional(),
            sku: variantFields.sku.optional(),
            priceMinor: variantFields.priceMinor.optional(),
            compareAtMinor: variantFields.compareAtMinor.optional(),
            taxClass: variantFields.taxClass.optional(),
            preorder: variantFields.preorder.optional(),
          }),
          newVariant,
        ]),
      )
      .max(100)
      .optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, variants = [], ...fields } = input;
      const mine = (variantId: string) =>
        ensure(
          q,
          sql`exists (select 1 from ${productVariant} where ${productVariant.storeId} = ${store} and ${productVariant.productId} = ${id} and ${productVariant.id} = ${variantId})`,
          new AppError("NOT_FOUND", `Variant ${variantId} is not a variant of this product.`),
        );
      // New variants go after the others: each insert reads the positions the ones before it left.
      const nextPosition = sql`(select coalesce(max(${productVariant.position}) + 1, 0) from ${productVariant} where ${productVariant.storeId} = ${store} and ${productVariant.productId} = ${id})`;
      return thenProduct(q, store, id, [
        productFound(q, store, id),
        ...variants.flatMap((v) => ("id" in v ? [mine(v.id)] : [])),
        q.update(product).set({ ...fields, updatedAt: sql`now()` }).where(and(eq(product.storeId, store), eq(product.id, id))),
        ...variants.map((v) => {
          if (!("id" in v)) return q.insert(productVariant).values({ ...v, storeId: store, productId: id, position: nextPosition });
          const { id: variantId, ...changes } = v;
          return q
            .update(productVariant)
            .set({ ...changes, updatedAt: sql`now()` })
            .where(and(eq(productVariant.storeId, store), eq(productVariant.productId, id), eq(productVariant.id, variantId)));
        }),
        emitStep(q, "product.updated", { productId: id, fields: Object.keys(fields), variants: variants.length }),
      ]);
    },
  },
});

export const productProcedures = [listProducts, getProduct, createProduct, updateProduct];
