import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import { mapPlan, plan, type Plan } from "../db/plan";
import { inventoryLevel, location, product, productVariant } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { getPage, type updatePage } from "../procedures/content";
import type { StoreProcedure } from "../procedures/define";
import type { createDiscount } from "../procedures/discounts";
import type { adjustInventory } from "../procedures/inventory";
import { productPlan, type updateProduct } from "../procedures/products";
import type { Scope } from "../procedures/scope";
import { instant, money, sentence, textChange, textOrValue, valueChange, yesNo, type Change, type Proposal, type Shown } from "./changes";

/**
 * The change tools' describe steps: read what the change would touch and say, before anything
 * changes, every field it would change, before and after, in full. Each is a plan (its reads go with
 * the caller's opening in one round trip); the store's currency comes from the caller in `finish`.
 */
export type DescribePlan<P extends { input: z.ZodType }> = (q: Q, scope: Scope, input: z.output<P["input"]>) => Plan<Proposal>;

/** A read procedure's plan (the same statements its door sends). */
function readPlan<I extends z.ZodType, O>(proc: StoreProcedure<I, O>, q: Q, scope: Scope, input: z.output<I>): Plan<O> {
  if (!proc.read) throw new TypeError(`${proc.router}.${proc.name} has no read plan`);
  return proc.read(q, scope, input);
}

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

export const describeProductUpdate: DescribePlan<typeof updateProduct> = (q, scope, input) =>
  mapPlan(productPlan(q, scope.store, input.id), (current) => {
    const { currency } = scope.caller().store;
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
          diff.push(valueChange(`variants[${was.sku ?? was.id}].${k}`, `Variant ${name} · ${VARIANT_FIELDS[k]}`, variantValue(k, was[k], currency), variantValue(k, v[k], currency)));
        }
      } else {
        added++;
        for (const k of Object.keys(VARIANT_FIELDS) as VariantField[]) {
          if (v[k] !== undefined && v[k] !== null) diff.push(valueChange(`newVariants[${added}].${k}`, `New variant ${added} · ${VARIANT_FIELDS[k]}`, null, variantValue(k, v[k], currency)));
        }
      }
    }
    return { summary: `Update product "${current.title}": ${sentence(diff)}.`, diff };
  });

export const describeInventoryAdjustment: DescribePlan<typeof adjustInventory> = (q, { store }, input) =>
  plan(
    [
      q
        .select({ sku: productVariant.sku, title: productVariant.title, product: product.title })
        .from(productVariant)
        .innerJoin(product, and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId)))
        .where(and(eq(productVariant.storeId, store), eq(productVariant.id, input.variantId))),
      q.select({ name: location.name }).from(location).where(and(eq(location.storeId, store), eq(location.id, input.locationId))),
      q
        .select({ onHand: inventoryLevel.onHand, reserved: inventoryLevel.reserved })
        .from(inventoryLevel)
        .where(and(eq(inventoryLevel.storeId, store), eq(inventoryLevel.variantId, input.variantId), eq(inventoryLevel.locationId, input.locationId))),
    ] as const,
    ([[v], [l], [level]]) => {
      if (!v) throw new AppError("NOT_FOUND", "Variant not found in this store.");
      if (!l) throw new AppError("NOT_FOUND", "Location not found in this store.");
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
    },
  );

// Nothing to read: its words need only the store's currency, known once the caller's opening came back.
export const describeDiscountCreation: DescribePlan<typeof createDiscount> = (_q, scope, input) =>
  plan([] as const, () => {
    const { currency } = scope.caller().store;
    const value = input.kind === "percentage" ? `${input.value}% off` : `${money(input.value, currency)} off`;
    const diff: Change[] = [
      valueChange("code", "Code", null, input.code),
      valueChange("kind", "Kind", null, input.kind === "percentage" ? "percentage" : "fixed amount"),
      valueChange("value", "Value", null, value),
      valueChange("startsAt", "Starts", null, input.startsAt ? instant(input.startsAt) : "when approved"),
      valueChange("endsAt", "Ends", null, input.endsAt ? instant(input.endsAt) : "no end"),
      valueChange("usageLimit", "Usage limit", null, input.usageLimit ? `${input.usageLimit} uses in total` : "unlimited"),
    ];
    const short = input.kind === "percentage" ? `${input.value}% off` : `${money(input.value, currency, false)} off`;
    const window = input.endsAt ? ` until ${instant(input.endsAt)}` : "";
    const limit = input.usageLimit ? `, at most ${input.usageLimit} uses` : "";
    return { summary: `Create discount ${input.code}: ${short}${window}${limit}.`, diff };
  });

const PAGE_FIELDS = { title: "Title", handle: "Handle", body: "Body" } as const;

export const describePageUpdate: DescribePlan<typeof updatePage> = (q, scope, input) =>
  mapPlan(readPlan(getPage, q, scope, { id: input.id }), (current) => {
    const diff = changedKeys(current, input, PAGE_FIELDS).map((k) =>
      k === "body" ? textChange(k, PAGE_FIELDS[k], current[k], input[k] ?? "") : valueChange(k, PAGE_FIELDS[k], current[k], input[k] ?? null),
    );
    return { summary: `Update page "${current.title}": ${sentence(diff)}.`, diff };
  });
