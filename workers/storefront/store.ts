import { eq } from "drizzle-orm";
import type { Database } from "#shared/db/database";
import { store } from "#shared/db/schema";
import { CURRENT_STORE } from "#shared/db/openings";
import { plan } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import type { StoreFacts } from "#shared/storefront/hosts";

/** What every storefront page knows of its store: its held facts (the HOSTS namespace, 60 s). */
export type ShopStore = StoreFacts;

/** The storefront password's hash, read only where a password is checked (null while it is off). */
export function loadPasswordHash(db: Database, storeId: string): Promise<string | null> {
  return sendStoreUnit(db, storeId, (q) =>
    plan([q.select({ hash: store.storefrontPasswordHash }).from(store).where(eq(store.id, CURRENT_STORE))] as const, ([[row]]) => row?.hash ?? null),
  );
}
