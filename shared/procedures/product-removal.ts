import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure } from "../db/changes";
import { product, productVariant, PRODUCT_STATUSES } from "../db/schema";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import { plan } from "../db/plan";
import { deleteUnusedFiles, unusedFilesPlan, unusedKeys } from "./media";
import * as out from "./outputs";
import { productFound, productOutput, thenProduct } from "./products";

/**
 * Taking a product, or one of its variants, off the store (./products.ts creates and changes them): archive
 * (off the storefront, history kept), delete for good with its images' unused files, remove one variant.
 */
export const archiveProduct = storeProcedure({
  router: "products",
  name: "archive",
  description: "Archive a product: it leaves the storefront but keeps its history. Undo by updating its status.",
  access: "products.write",
  mutates: true,
  output: z.object({ id: out.id, status: z.enum(PRODUCT_STATUSES) }),
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply: (q, { store }, input) =>
      plan(
        [
          productFound(q, store, input.id),
          q
            .update(product)
            .set({ status: "archived", updatedAt: sql`now()` })
            .where(and(eq(product.storeId, store), eq(product.id, input.id)))
            .returning({ id: product.id, status: product.status }),
          emitStep(q, "product.archived", { productId: input.id }),
        ] as const,
        ([, [row]]) => row!,
      ),
  },
});

export const deleteProduct = storeProcedure({
  router: "products",
  name: "delete",
  description: "Delete a product, its variants and their stock records for good.",
  access: "records.delete",
  mutates: true,
  output: z.object({ id: out.id, deleted: z.boolean(), deletedFiles: z.array(z.string()) }),
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply: (q, { store }, input) => {
      const where = and(eq(product.storeId, store), eq(product.id, input.id));
      return plan(
        [
          productFound(q, store, input.id),
          // The event names the product as it was: written before the row goes.
          emitStep(q, "product.deleted", sql`(select jsonb_build_object('productId', ${product.id}, 'title', ${product.title}) from ${product} where ${where})`),
          // Its images' files that no other product of the store uses: deleted from R2 once this commits.
          unusedFilesPlan(q, store, { productId: input.id }),
          q.delete(product).where(where),
        ] as const,
        ([, , media]) => ({ id: input.id, deleted: true, deletedFiles: unusedKeys(media) }),
      );
    },
    after: (output, services) => deleteUnusedFiles(output.deletedFiles, services),
  },
});

export const removeVariant = storeProcedure({
  router: "products",
  name: "removeVariant",
  description:
    "Delete one variant of a product for good, with its stock records. A product keeps at least one variant (delete the product instead). Orders already placed keep their lines.",
  access: "records.delete",
  mutates: true,
  output: productOutput,
  input: z.strictObject({ productId: z.uuid(), variantId: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const ofProduct = and(eq(productVariant.storeId, store), eq(productVariant.productId, input.productId));
      const gone = and(ofProduct, eq(productVariant.id, input.variantId));
      // The product row is locked first, so two removals of its last two variants cannot both pass the count.
      return thenProduct(q, store, input.productId, [
        productFound(q, store, input.productId),
        ensure(q, sql`exists (select 1 from ${productVariant} where ${gone})`, new AppError("NOT_FOUND", `Variant ${input.variantId} is not a variant of this product.`)),
        ensure(
          q,
          sql`(select count(*) from ${productVariant} where ${ofProduct}) > 1`,
          new AppError("CONFLICT", "A product keeps at least one variant: delete the product instead, or add another variant first.", {
            reason: "last_variant",
            issues: [{ path: "variantId", message: "the product's only variant" }],
          }),
        ),
        emitStep(
          q,
          "product.updated",
          sql`(select jsonb_build_object('productId', ${input.productId}::uuid, 'fields', '[]'::jsonb, 'variants', 0,
                 'removedVariant', jsonb_build_object('id', ${productVariant.id}, 'title', ${productVariant.title}, 'sku', ${productVariant.sku}))
               from ${productVariant} where ${gone})`,
        ),
        q.delete(productVariant).where(gone),
      ]);
    },
  },
});

export const productRemovalProcedures = [archiveProduct, deleteProduct, removeVariant];
