import { eq } from "drizzle-orm";
import type { Database } from "#shared/db/database";
import { store } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { AppError } from "#shared/http/errors";

/** What every storefront page needs of its store, read in one read-only unit. */
export interface ShopStore {
  id: string;
  name: string;
  currency: string;
  /** Null while the storefront password is off. */
  passwordHash: string | null;
}

export async function loadShopStore(db: Database, storeId: string): Promise<ShopStore> {
  const row = await withStore(
    db,
    storeId,
    async (tx) => {
      const [found] = await tx
        .select({ id: store.id, name: store.name, currency: store.currency, passwordHash: store.storefrontPasswordHash })
        .from(store)
        .where(eq(store.id, tx.storeId));
      return found;
    },
    { readOnly: true },
  );
  if (!row) throw new AppError("NOT_FOUND", "This store is no longer open.");
  return row;
}
