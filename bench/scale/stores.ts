import pg from "pg";
import type { StoreContext } from "./items";

/** The stores compared: the big one, a small one from the long tail (s9996, ~25 orders, one API token), the demo store. */
export const COMPARED = { big: "big", small: "s9996", demo: "demo" } as const;

async function one<T>(c: pg.Client, sql: string, params: unknown[], column: string): Promise<T | null> {
  const { rows } = await c.query<Record<string, T>>(sql, params);
  return rows[0]?.[column] ?? null;
}

/** What the items need of a store, read as app_user inside the store (RLS on), as the Workers would. */
async function contextOf(c: pg.Client, label: string, slug: string): Promise<StoreContext> {
  const id = await one<string>(c, "select privileged.store_id_by_slug($1) as id", [slug], "id");
  if (!id) throw new Error(`No store with slug ${slug} in the scale database`);
  await c.query("begin transaction read only");
  try {
    await c.query("select set_config('app.store_id', $1, true)", [id]);
    const hostname = await one<string>(c, "select hostname from store_domain where store_id = $1 and status = 'verified' order by is_primary desc, hostname limit 1", [id], "hostname");
    return {
      label, id, slug,
      hostname: hostname ?? `${slug}.invalid`,
      tokenHash: await one<string>(c, "select secret_hash from api_grant where store_id = $1 and kind = 'token' order by created_at, id limit 1", [id], "secret_hash"),
      variantId: await one<string>(c, "select variant_id from inventory_adjustment where store_id = $1 group by variant_id order by count(*) desc, variant_id limit 1", [id], "variant_id"),
      orderId: await one<string>(c, "select id from shop_order where store_id = $1 order by placed_at desc, number desc limit 1", [id], "id"),
      email: await one<string>(c, "select lower(email) as email from shop_order where store_id = $1 group by 1 order by count(*) desc, 1 limit 1", [id], "email"),
    };
  } finally {
    await c.query("rollback");
  }
}

export async function compareStores(appUrl: string): Promise<{ big: StoreContext; small: StoreContext; demo: StoreContext }> {
  const c = new pg.Client({ connectionString: appUrl });
  await c.connect();
  try {
    return {
      big: await contextOf(c, "big", COMPARED.big),
      small: await contextOf(c, "small", COMPARED.small),
      demo: await contextOf(c, "demo", COMPARED.demo),
    };
  } finally {
    await c.end();
  }
}
