import { z } from "zod";
import { storeProcedure } from "./define";
import { offsetOf, pagingInput, type Paged } from "./paging";

/** Back-in-stock subscriptions (docs/back-in-stock.md), for the merchant: who waits for what. */
interface WaitingVariant {
  variantId: string;
  productId: string;
  productTitle: string;
  variantTitle: string;
  waiting: number;
  alerted: number;
  since: Date;
}

export const listRestock = storeProcedure({
  router: "backInStock",
  name: "list",
  description:
    "Variants shoppers asked to hear about when back in stock, most waiting first: {variantId, productId, productTitle, variantTitle, waiting, alerted, since}. The emails themselves are not listed.",
  access: "products.read",
  mutates: false,
  input: z.strictObject({ ...pagingInput, productId: z.uuid().optional() }),
  async run({ tx }, input): Promise<Paged<WaitingVariant>> {
    const { rows } = await tx.$client.query<WaitingVariant & { total: number }>(
      `select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle",
         count(*) filter (where r.status = 'waiting')::int as waiting, count(*) filter (where r.status = 'sent')::int as alerted,
         min(r.created_at) filter (where r.status = 'waiting') as since, (count(*) over ())::int as total
       from restock_subscription r
       join product_variant v on v.store_id = r.store_id and v.id = r.variant_id
       join product p on p.store_id = v.store_id and p.id = v.product_id
       where r.store_id = $1 and ($2::uuid is null or p.id = $2)
       group by v.id, p.id
       order by waiting desc, since, v.id limit $3 offset $4`,
      [tx.storeId, input.productId ?? null, input.pageSize, offsetOf(input)],
    );
    return { items: rows.map(({ total: _t, ...r }) => r), page: input.page, pageSize: input.pageSize, total: rows[0]?.total ?? 0 };
  },
});

export const restockProcedures = [listRestock];
