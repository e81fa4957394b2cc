import { eq } from "drizzle-orm";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { plan, together } from "../db/plan";
import { store } from "../db/schema";
import { sendStoreUnit } from "../db/unit";
import { businessProfile, type BusinessProfile } from "./profile";
import { publishedKeysPlan } from "./store-keys";

/**
 * The profile a store publishes at `/.well-known/ucp` (docs/ucp.md): the switch and the published keys in one
 * unit, one round trip. Null while the store's agentic checkout is off (the door answers 404): a store that
 * does not sell to agents publishes nothing.
 */
export async function publishedProfile(db: Database, storeId: string, origin: string): Promise<BusinessProfile | null> {
  const { on, keys } = await sendStoreUnit(db, storeId, (q) =>
    together({
      on: plan([q.select({ on: store.agenticCheckout }).from(store).where(eq(store.id, CURRENT_STORE))] as const, ([[row]]) => row?.on === true),
      keys: publishedKeysPlan(q),
    }),
  );
  return on ? businessProfile(origin, keys) : null;
}
