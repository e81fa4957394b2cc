import type { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { placeTestOrder } from "./orders";
import type { ShopStore } from "./storefront";

/**
 * An order an AI agent placed over UCP, as the sessions' completion leaves it (issue 26): placed through
 * checkout's own code, marked channel 'ucp', and its checkout session (made by `agentProfile`) linked to it.
 */
export async function agentOrder(db: Database, shop: ShopStore, agentProfile: string, at?: Date): Promise<{ orderId: string; number: number; sessionId: string }> {
  const placed = await placeTestOrder(db, shop, at ? { at } : {});
  const sessionId = crypto.randomUUID();
  await withStore(db, shop.id, async (tx) => {
    await tx.$client.query("update shop_order set channel = 'ucp' where id = $1", [placed.order.id]);
    await tx.$client.query(
      "insert into ucp_checkout_session (id, store_id, agent_profile, status, order_id, created_at) values ($1, $2, $3, 'completed', $4, coalesce($5::timestamptz, now()))",
      [sessionId, shop.id, agentProfile, placed.order.id, at ?? null],
    );
  });
  return { orderId: placed.order.id, number: placed.order.number, sessionId };
}
