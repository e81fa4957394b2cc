import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import { inventoryLevel, location, product, productVariant } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { loadPage, type updatePage } from "../procedures/content";
import type { StoreInfo } from "../procedures/define";
import type { createDiscount } from "../procedures/discounts";
import type { adjustInventory } from "../procedures/inventory";
import { loadProduct, type updateProduct } from "../procedures/products";
import { instant, money, sentence, textChange, textOrValue, valueChange, yesNo, type Change, type Proposal, type Shown } from "./changes";

/**
 * The change tools' describe steps: read what the change would touch and say, before anything
 * changes, every field it would change, before and after, in full.
 */
type Describe<P extends { input: z.ZodType }> = (tx: StoreTx, input: z.output<P["input"]>, store: StoreInfo) => Promise<Proposal>;

const PRODUCT_FIELDS = { title: "Title", handle: "Handle", description: "Description", status: "Status", vendor: "Vendor", hsnCode: "HSN code" } as const;
const VARIANT_FIELDS = { title: "Title", sku: "SKU", priceMinor: "Price", compareAtMinor: "Compare-at price", taxClass: "Tax class", preorder: "Pre-order" } as const;
type VariantField = keyof typeof VARIANT_FIELDS;

/** A variant field's value as the store shows it. */
function variantValue(key: VariantField, value: unknown, currency: string): Shown {
  if (value === null || value === undefined) return null;
  if (key === "priceMinor" || key === "compareAtMinor") return money(value as number, currency);
  if (key === "preorder") return yesNo(value as boolean);
  return value as Shown;
}

/** The fields `wanted` gives that differ from `current`, in the order of `labels`. */
function changedKeys<K extends string>(current: Partial<Record<NoInfer<K>, unknown>>, wanted: Partial<Record<NoInfer<K>, unknown>>, labels: Record<K, string>): K[] {
  return (Object.keys(labels) as K[]).filter((k) => wanted[k] !== undefined && wanted[k] !== (current[k] ?? null));
}

export const describeProductUpdate: Describe<typeof updateProduct> = async (tx, input, store) => {
  const current = await loadProduct(tx, input.id);
  const diff: Change[] = changedKeys(current, input, PRODUCT_FIELDS).map((k) =>
    k === "description" ? textOrValue(k, PRODUCT_FIELDS[k], current[k], input[k] ?? null) : valueChange(k, PRODUCT_FIELDS[k], current[k], input[k] ?? null),
  );
  let added = 0;
  for (const v of input.variants ?? []) {
    if ("id" in v) {
      const was = current.variants.find((x) => x.id === v.id);
      if (!was) throw new AppError("NOT_FOUND", `Variant ${v.id} is not a variant of this product.`);
      const name = was.sku ? `${was.sku} (${was.title})` : was.title;
      for (const k of changedKeys(was, v, VARIANT_FIELDS)) {
        diff.push(valueChange(`variants[${was.sku ?? was.id}].${k}`, `Variant ${name} · ${VARIANT_FIELDS[k]}`, variantValue(k, was[k], store.currency), variantValue(k, v[k], store.currency)));
      }
    } else {
      added++;
      for (const k of Object.keys(VARIANT_FIELDS) as VariantField[]) {
        if (v[k] !== undefined && v[k] !== null) diff.push(valueChange(`newVariants[${added}].${k}`, `New variant ${added} · ${VARIANT_FIELDS[k]}`, null, variantValue(k, v[k], store.currency)));
      }
    }
  }
  return { summary: `Update product "${current.title}": ${sentence(diff)}.`, diff };
};

export const describeInventoryAdjustment: Describe<typeof adjustInventory> = async (tx, input) => {
  const [v] = await tx
    .select({ sku: productVariant.sku, title: productVariant.title, product: product.title })
    .from(productVariant)
    .innerJoin(product, and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId)))
    .where(and(eq(productVariant.storeId, tx.storeId), eq(productVariant.id, input.variantId)));
  const [l] = await tx.select({ name: location.name }).from(location).where(and(eq(location.storeId, tx.storeId), eq(location.id, input.locationId)));
  if (!v) throw new AppError("NOT_FOUND", "Variant not found in this store.");
  if (!l) throw new AppError("NOT_FOUND", "Location not found in this store.");
  const [level] = await tx
    .select({ onHand: inventoryLevel.onHand, reserved: inventoryLevel.reserved })
    .from(inventoryLevel)
    .where(and(eq(inventoryLevel.storeId, tx.storeId), eq(inventoryLevel.variantId, input.variantId), eq(inventoryLevel.locationId, input.locationId)));
  const { onHand, reserved } = level ?? { onHand: 0, reserved: 0 };
  const name = `${v.sku ? `${v.sku} ` : ""}(${v.product} · ${v.title})`;
  const where = `${name} at ${l.name}`;
  const delta = `${input.delta > 0 ? "+" : ""}${input.delta}`;
  const diff: Change[] = [
    valueChange("onHand", `On hand: ${where}`, onHand, onHand + input.delta),
    valueChange("available", `Available: ${where}`, onHand - reserved, onHand + input.delta - reserved),
    valueChange("reason", "Reason", null, input.reason),
  ];
  if (input.note) diff.push(valueChange("note", "Note", null, input.note));
  return { summary: `Adjust stock of ${v.sku ?? v.title} at ${l.name} by ${delta} (${input.reason}): on hand ${onHand} → ${onHand + input.delta}.`, diff };
};

export const describeDiscountCreation: Describe<typeof createDiscount> = async (_tx, input, store) => {
  const value = input.kind === "percentage" ? `${input.value}% off` : `${money(input.value, store.currency)} off`;
  const diff: Change[] = [
    valueChange("code", "Code", null, input.code),
    valueChange("kind", "Kind", null, input.kind === "percentage" ? "percentage" : "fixed amount"),
    valueChange("value", "Value", null, value),
    valueChange("startsAt", "Starts", null, input.startsAt ? instant(input.startsAt) : "when approved"),
    valueChange("endsAt", "Ends", null, input.endsAt ? instant(input.endsAt) : "no end"),
    valueChange("usageLimit", "Usage limit", null, input.usageLimit ? `${input.usageLimit} uses in total` : "unlimited"),
  ];
  const short = input.kind === "percentage" ? `${input.value}% off` : `${money(input.value, store.currency, false)} off`;
  const window = input.endsAt ? ` until ${instant(input.endsAt)}` : "";
  const limit = input.usageLimit ? `, at most ${input.usageLimit} uses` : "";
  return { summary: `Create discount ${input.code}: ${short}${window}${limit}.`, diff };
};

const PAGE_FIELDS = { title: "Title", handle: "Handle", body: "Body" } as const;

export const describePageUpdate: Describe<typeof updatePage> = async (tx, input) => {
  const current = await loadPage(tx, input.id);
  const diff = changedKeys(current, input, PAGE_FIELDS).map((k) =>
    k === "body" ? textChange(k, PAGE_FIELDS[k], current[k], input[k] ?? "") : valueChange(k, PAGE_FIELDS[k], current[k], input[k] ?? null),
  );
  return { summary: `Update page "${current.title}": ${sentence(diff)}.`, diff };
};
