import { z } from "zod";
import { raw, sql } from "../db/steps";
import { storeProcedure } from "./define";
import { offsetOf, pagePlan, pagingInput } from "./paging";

/** Back-in-stock subscriptions (docs/back-in-stock.md), for the merchant: who waits for what. */
type WaitingVariant = {
  variantId: string;
  productId: string;
  productTitle: string;
  variantTitle: string;
  waiting: number;
  alerted: number;
  since: Date;
};

export const listRestock = storeProcedure({
  router: "backInStock",
  name: "list",
  description:
    "Variants shoppers asked to hear about when back in stock, most waiting first: {variantId, productId, productTitle, variantTitle, waiting, alerted, since}. The emails themselves are not listed.",
  access: "products.read",
  mutates: false,
  input: z.strictObject({ ...pagingInput, productId: z.uuid().optional() }),
  read(q, { store }, input) {
    const subscriptions = sql`from restock_subscription r
       join product_variant v on v.store_id = r.store_id and v.id = r.variant_id
       join product p on p.store_id = v.store_id and p.id = v.product_id
       where r.store_id = ${store}${input.productId ? sql` and p.id = ${input.productId}` : sql``}`;
    return pagePlan(
      raw<WaitingVariant>(
        q,
        sql`select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle",
           count(*) filter (where r.status = 'waiting')::int as waiting, count(*) filter (where r.status = 'sent')::int as alerted,
           min(r.created_at) filter (where r.status = 'waiting') as since
         ${subscriptions}
         group by v.id, p.id
         order by waiting desc, since, v.id limit ${input.pageSize} offset ${offsetOf(input)}`,
      ),
      raw<{ n: number }>(q, sql`select count(distinct v.id)::int as n ${subscriptions}`),
      input,
    );
  },
});

export const restockProcedures = [listRestock];
