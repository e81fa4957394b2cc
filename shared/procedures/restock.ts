import { z } from "zod";
import { storeProcedure } from "./define";
import { offsetOf, pagePlan, pagingInput } from "./paging";
import { countWaitingVariants, waitingVariants } from "./statements/store";
import * as out from "./outputs";

/** Back-in-stock subscriptions (docs/back-in-stock.md), for the merchant: who waits for what. */
export const listRestock = storeProcedure({
  router: "backInStock",
  name: "list",
  description:
    "Variants shoppers asked to hear about when back in stock, most waiting first: {variantId, productId, productTitle, variantTitle, waiting, alerted, since}. The emails themselves are not listed.",
  access: "products.read",
  mutates: false,
  output: out.paged(z.object({ variantId: out.id, productId: out.id, productTitle: z.string(), variantTitle: z.string(), waiting: z.number().int(), alerted: z.number().int(), since: out.instant.nullable() })),
  input: z.strictObject({ ...pagingInput, productId: z.uuid().optional() }),
  read(q, { store }, input) {
    return pagePlan(
      waitingVariants(q, store, input.productId, { limit: input.pageSize, offset: offsetOf(input) }),
      countWaitingVariants(q, store, input.productId),
      input,
    );
  },
});

export const restockProcedures = [listRestock];
