import { eq } from "drizzle-orm";
import type { Database } from "#shared/db/database";
import { store } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import type { StoreFacts } from "#shared/storefront/hosts";

/** What every storefront page knows of its store: its held facts (the HOSTS namespace, 60 s). */
export type ShopStore = StoreFacts;

/** The storefront password's hash, read only where a password is checked (null while it is off). */
export async function loadPasswordHash(db: Database, storeId: string): Promise<string | null> {
  return withStore(
    db,
    storeId,
    async (tx) => {
      const [row] = await tx.select({ hash: store.storefrontPasswordHash }).from(store).where(eq(store.id, tx.storeId));
      return row?.hash ?? null;
    },
    { readOnly: true },
  );
}
