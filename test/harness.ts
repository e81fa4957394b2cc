import { env } from "cloudflare:workers";
import { afterAll } from "vitest";
import { Database } from "#shared/db/database";
import { emit } from "#shared/db/outbox";
import { member, store, storeDomain, userAccount } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";

/** A database for this test file, as the runtime role (app_user), closed when the file is done. */
export function testDb(): Database {
  const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY?: string };
  const db = new Database({ url: bindings.DATABASE_URL, wsProxy: bindings.DB_WS_PROXY || undefined });
  afterAll(() => db.close());
  return db;
}

export const uniqueSuffix = () => crypto.randomUUID().slice(0, 8);

export interface TestStore {
  id: string;
  slug: string;
  name: string;
  hostname: string;
  pendingHostname: string;
  ownerUserId: string;
  ownerEmail: string;
  memberId: string;
  outboxEventId: string;
}

/**
 * A fresh store with a row in every store-scoped table (member, store_domain, outbox_event), made the
 * way the application makes rows: as app_user, inside withStore. Tests never share stores, so they do
 * not depend on order and never truncate anything.
 */
export async function makeStore(db: Database, options: { name?: string } = {}): Promise<TestStore> {
  const id = crypto.randomUUID();
  const suffix = uniqueSuffix();
  const slug = `t-${suffix}`;
  const name = options.name ?? `Test Store ${suffix}`;
  const hostname = `${slug}.shop.test`;
  const pendingHostname = `pending-${slug}.shop.test`;
  const ownerEmail = `owner-${suffix}@example.test`;
  const [user] = await db.orm
    .insert(userAccount)
    .values({ email: ownerEmail, passwordHash: "pbkdf2_sha256$1$x$y" })
    .returning({ id: userAccount.id });
  return withStore(db, id, async (tx) => {
    await tx.insert(store).values({ id, slug, name, currency: "INR" });
    await tx.insert(storeDomain).values([
      { storeId: id, hostname, status: "verified", isPrimary: true, verifiedAt: new Date() },
      { storeId: id, hostname: pendingHostname, status: "pending" },
    ]);
    const [m] = await tx.insert(member).values({ storeId: id, userId: user!.id, role: "owner" }).returning({ id: member.id });
    const outboxEventId = await emit(tx, "store.created", { slug });
    return { id, slug, name, hostname, pendingHostname, ownerUserId: user!.id, ownerEmail, memberId: m!.id, outboxEventId };
  });
}

/** Runs raw SQL on one pooled connection and returns the Postgres error code if it failed. */
export async function sqlErrorCode(db: Database, text: string, values: unknown[] = []): Promise<string | undefined> {
  const client = await db.connect();
  try {
    await client.query(text, values);
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code ?? "unknown";
  } finally {
    client.release();
  }
}
