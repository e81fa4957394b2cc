import { and, eq } from "drizzle-orm";
import { plan } from "../db/plan";
import { product, productMedia } from "../db/schema";
import { AppError } from "../core/errors";
import type { attachMedia, removeMedia } from "../procedures/media";
import { valueChange, type Change } from "./changes";
import type { DescribePlan } from "./describe";

/** What an AI client's image change would do, in the approver's words (tools.ts). */

const productNotFound = () => new AppError("NOT_FOUND", "Product not found in this store.");

export const describeMediaAttach: DescribePlan<typeof attachMedia> = (q, { store }, input) =>
  plan([q.select({ title: product.title }).from(product).where(and(eq(product.storeId, store), eq(product.id, input.productId)))] as const, ([[p]]) => {
    if (!p) throw productNotFound();
    const source = "url" in input.image ? input.image.url : `an uploaded file (${Math.round((input.image.base64.length * 3) / 4 / 1024)} KB)`;
    const diff: Change[] = [
      valueChange("image", "Image", null, source),
      valueChange("alt", "Alt text", null, input.alt),
      ...(input.variantIds?.length ? [valueChange("variantIds", "Shown for variants", null, input.variantIds.length)] : []),
    ];
    return { summary: `Add an image to "${p.title}": "${input.alt}".`, diff };
  });

export const describeMediaRemoval: DescribePlan<typeof removeMedia> = (q, { store }, input) =>
  plan(
    [
      q
        .select({ title: product.title, alt: productMedia.alt })
        .from(productMedia)
        .innerJoin(product, and(eq(product.storeId, productMedia.storeId), eq(product.id, productMedia.productId)))
        .where(and(eq(productMedia.storeId, store), eq(productMedia.productId, input.productId), eq(productMedia.id, input.id))),
    ] as const,
    ([[m]]) => {
      if (!m) throw new AppError("NOT_FOUND", "Image not found on this product.");
      return { summary: `Remove the image "${m.alt}" from "${m.title}".`, diff: [valueChange("image", "Image", m.alt, null)] };
    },
  );
