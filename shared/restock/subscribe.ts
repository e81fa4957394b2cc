import { z } from "zod";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { AVAILABLE } from "../storefront/catalog";

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

/** Subscribes `input.email` to the variant (of the product with `handle`, when given: the page's own). */
export async function subscribeToRestock(tx: StoreTx, input: SubscribeInput, handle?: string): Promise<Subscribed> {
  const email = input.email.trim().toLowerCase();
  const { rows } = await tx.$client.query<{ product_title: string; variant_title: string; preorder: boolean; available: number; waiting: number }>(
    `select p.title as product_title, v.title as variant_title, v.preorder, ${AVAILABLE} as available,
       (select count(*) from restock_subscription r where r.store_id = v.store_id and r.email = $3 and r.status = 'waiting')::int as waiting
     from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
     where v.store_id = $1 and v.id = $2 and p.status = 'active' and ($4::text is null or p.handle = $4)`,
    [tx.storeId, input.variantId, email, handle ?? null],
  );
  const v = rows[0];
  if (!v) throw new AppError("NOT_FOUND", "This product is not on sale in this store.", { reason: "unknown_variant" });
  if (v.preorder || v.available > 0) throw new AppError("CONFLICT", "It is in stock now: add it to your cart.", { reason: "in_stock" });
  const inserted = await tx.$client.query(
    `insert into restock_subscription (store_id, variant_id, email)
     select $1::uuid, $2::uuid, $3::text where $4::int < $5::int
     on conflict (store_id, variant_id, email) where status = 'waiting' do nothing`,
    [tx.storeId, input.variantId, email, v.waiting, MAX_WAITING_PER_EMAIL],
  );
  if (!inserted.rowCount) {
    const { rows: already } = await tx.$client.query("select 1 from restock_subscription where store_id = $1 and variant_id = $2 and email = $3 and status = 'waiting'", [
      tx.storeId,
      input.variantId,
      email,
    ]);
    if (already.length === 0) {
      throw new AppError("CONFLICT", `This email already waits for ${MAX_WAITING_PER_EMAIL} products of this store; it hears about those first.`, { reason: "too_many" });
    }
  }
  return { productTitle: v.product_title, variantTitle: v.variant_title, created: (inserted.rowCount ?? 0) > 0 };
}
