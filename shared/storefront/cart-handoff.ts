import { and, eq, isNull, sql } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { cart } from "../db/schema";
import type { Q } from "../db/steps";

/**
 * A cart made elsewhere (by a shopper's AI agent, over the Storefront MCP) handed to the shopper's browser
 * at its checkout link: the cart's token changes to a fresh one, which only the browser gets (its cookie).
 * The old token (the agent's `cart_id`, which the link carries) then names no cart: whoever else holds
 * the link or the id can no longer read or change the cart, nor open the order it becomes (an order's key
 * derives from the token of the cart that became it: shared/orders/access.ts). One statement; an unknown,
 * converted or other store's token changes nothing and answers false.
 */
export function handOverCartPlan(q: Q, tokenHash: string, freshHash: string): Plan<boolean> {
  return plan(
    [
      q
        .update(cart)
        .set({ tokenHash: freshHash, updatedAt: sql`now()` })
        .where(and(eq(cart.storeId, CURRENT_STORE), eq(cart.tokenHash, tokenHash), isNull(cart.convertedOrderId)))
        .returning({ id: cart.id }),
    ] as const,
    ([rows]) => rows.length > 0,
  );
}
