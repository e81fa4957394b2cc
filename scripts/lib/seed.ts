import pg from "pg";
import { hashPassword } from "#shared/auth/password";

/**
 * The demo seed: a fixed contract that the README, the tests and later work rely on. Idempotent:
 * rows that exist are left as they are. Runs as the owner role, which RLS also binds (FORCE), so it
 * sets app.store_id for each store exactly as the Workers do.
 */
export const DEMO_PASSWORD = "demo-password";

export const DEMO_STORES = [
  { slug: "demo", name: "Demo Store", currency: "INR", domains: ["demo.localhost", "shop.demo.test"] },
  { slug: "other", name: "Other Store", currency: "INR", domains: ["other.localhost"] },
] as const;

export const DEMO_PEOPLE = [
  { email: "owner@demo.test", name: "Dana Owner", store: "demo", role: "owner" },
  { email: "admin@demo.test", name: "Arun Admin", store: "demo", role: "admin" },
  { email: "staff@demo.test", name: "Sam Staff", store: "demo", role: "staff" },
  { email: "owner@other.test", name: "Olive Owner", store: "other", role: "owner" },
] as const;

export async function seedDemo(ownerUrl: string, log: (m: string) => void = () => {}): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const userIds = new Map<string, string>();
    for (const person of DEMO_PEOPLE) {
      const found = await client.query<{ id: string }>("select id from user_account where lower(email) = lower($1)", [person.email]);
      if (found.rows[0]) {
        userIds.set(person.email, found.rows[0].id);
        continue;
      }
      const inserted = await client.query<{ id: string }>(
        "insert into user_account (email, name, password_hash) values ($1, $2, $3) returning id",
        [person.email, person.name, await hashPassword(DEMO_PASSWORD)],
      );
      userIds.set(person.email, inserted.rows[0]!.id);
    }

    for (const s of DEMO_STORES) {
      const existing = await client.query<{ id: string | null }>("select privileged.store_id_by_slug($1) as id", [s.slug]);
      const storeId = existing.rows[0]?.id ?? crypto.randomUUID();
      await client.query("begin");
      try {
        await client.query("select set_config('app.store_id', $1, true)", [storeId]);
        await client.query(
          "insert into store (id, slug, name, currency) values ($1, $2, $3, $4) on conflict (id) do nothing",
          [storeId, s.slug, s.name, s.currency],
        );
        for (const [i, hostname] of s.domains.entries()) {
          await client.query(
            `insert into store_domain (store_id, hostname, status, is_primary, verified_at)
             values ($1, $2, 'verified', $3, now()) on conflict (hostname) do nothing`,
            [storeId, hostname, i === 0],
          );
        }
        for (const person of DEMO_PEOPLE.filter((p) => p.store === s.slug)) {
          await client.query(
            "insert into member (store_id, user_id, role) values ($1, $2, $3) on conflict (store_id, user_id) do nothing",
            [storeId, userIds.get(person.email), person.role],
          );
        }
        await client.query("commit");
      } catch (e) {
        await client.query("rollback");
        throw e;
      }
    }
    log(`Demo data ready: stores ${DEMO_STORES.map((s) => s.slug).join(", ")}; ${DEMO_PEOPLE.length} people.`);
  } finally {
    await client.end();
  }
}
