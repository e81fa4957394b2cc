import { z } from "zod";
import type { SQL } from "drizzle-orm";
import { ensure } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import { changeOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { AVAILABLE } from "../storefront/catalog";
import { addSubscription, variantTitles } from "./statements";

/**
 * A shopper's request to hear once when a sold-out variant is back (docs/back-in-stock.md). Only a variant
 * of an active product that is sold out online and not on pre-order can be subscribed to; the same email
 * waiting on the same variant is one subscription; one email waits on at most MAX_WAITING_PER_EMAIL
 * variants of a store, so the form cannot be used to fill someone's inbox.
 */
export const MAX_WAITING_PER_EMAIL = 20;

export const subscribeInput = z.strictObject({
  variantId: z.uuid("choose the one you want"),
  email: z.email("must be an email address such as asha@example.com").max(254),
});
export type SubscribeInput = z.infer<typeof subscribeInput>;

export interface Subscribed {
  productTitle: string;
  variantTitle: string;
  /** False when the email was already waiting for this variant. */
  created: boolean;
}

/**
 * Subscribes `input.email` to the variant (of the product with `handle`, when given: the page's own), in
 * one unit: each refusal is a guard that stops it, the subscription an insert that does nothing for an
 * email already waiting.
 */
export function subscribePlan(q: Q, store: SQL, input: SubscribeInput, handle?: string): Plan<Subscribed> {
  const email = input.email.trim().toLowerCase();
  const variant = sql`from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
    where v.store_id = ${store} and v.id = ${input.variantId} and p.status = 'active' and (${handle ?? null}::text is null or p.handle = ${handle ?? null})`;
  return plan(
    [
      ensure(q, sql`exists (select 1 ${variant})`, new AppError("NOT_FOUND", "This product is not on sale in this store.", { reason: "unknown_variant" })),
      ensure(q, sql`not exists (select 1 ${variant} and (v.preorder or ${sql.raw(AVAILABLE)} > 0))`, new AppError("CONFLICT", "It is in stock now: add it to your cart.", { reason: "in_stock" })),
      addSubscription(q, store, { variantId: input.variantId, email, max: MAX_WAITING_PER_EMAIL }),
      ensure(
        q,
        sql`exists (select 1 from restock_subscription where store_id = ${store} and variant_id = ${input.variantId} and email = ${email} and status = 'waiting')`,
        new AppError("CONFLICT", `This email already waits for ${MAX_WAITING_PER_EMAIL} products of this store; it hears about those first.`, { reason: "too_many" }),
      ),
      variantTitles(q, variant),
    ] as const,
    ([, , inserted, , [titles]]) => ({ productTitle: titles!.product_title, variantTitle: titles!.variant_title, created: inserted.length > 0 }),
  );
}

/** The same inside a transaction that is open already. */
export function subscribeToRestock(tx: StoreTx, input: SubscribeInput, handle?: string): Promise<Subscribed> {
  return changeOn(tx, (q) => subscribePlan(q, sql`${tx.storeId}::uuid`, input, handle));
}
