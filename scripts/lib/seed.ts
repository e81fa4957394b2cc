import pg from "pg";
import { hashPassword } from "#shared/auth/password";
import { checkGstin } from "#shared/rules/gstin";
import { isMenuUrl } from "#shared/storefront/menu";
import { THEME_DEFAULTS, themeSchema } from "#shared/storefront/theme";
import { seedCounts, STORE_SEEDS, type StoreSeed } from "./seed-data";

export { seedCounts, STORE_SEEDS } from "./seed-data";
export type { SeedCounts, StoreSeed } from "./seed-data";

/**
 * The demo seed: a fixed contract that the README, the tests and later work rely on. Idempotent:
 * rows that exist are left as they are. Runs as the owner role, which RLS also binds (FORCE), so it
 * sets app.store_id for each store exactly as the Workers do.
 */
export const DEMO_PASSWORD = "demo-password";

/** `bankTransfer`: the demo store offers bank transfer at checkout (a new store does not: decision 0020). */
export const DEMO_STORES = [
  { slug: "demo", name: "Demo Store", currency: "INR", domains: ["demo.localhost", "shop.demo.test"], bankTransfer: true },
  { slug: "other", name: "Other Store", currency: "INR", domains: ["other.localhost"], bankTransfer: false },
] as const;

export const DEMO_PEOPLE = [
  { email: "owner@demo.test", name: "Dana Owner", store: "demo", role: "owner" },
  { email: "admin@demo.test", name: "Arun Admin", store: "demo", role: "admin" },
  { email: "staff@demo.test", name: "Sam Staff", store: "demo", role: "staff" },
  { email: "owner@other.test", name: "Olive Owner", store: "other", role: "owner" },
] as const;

/** Refuses data the seed could not write whole: a variant without stock for every location, a repeated key. */
function checkStoreSeed(slug: string, data: StoreSeed): void {
  const unique = (what: string, keys: string[]) => {
    const seen = new Set<string>();
    for (const k of keys) {
      if (seen.has(k)) throw new Error(`seed data of store ${slug}: ${what} ${k} appears twice`);
      seen.add(k);
    }
  };
  unique("product handle", data.products.map((p) => p.handle));
  unique("SKU", data.products.flatMap((p) => p.variants.map((v) => v.sku)));
  unique("location", data.locations.map((l) => l.name));
  unique("customer email", data.customers.map((c) => c.email.toLowerCase()));
  unique("discount code", data.discounts.map((d) => d.code));
  unique("page handle", data.pages.map((p) => p.handle));
  unique("collection handle", (data.collections ?? []).map((c) => c.handle));
  const products = new Set(data.products.map((p) => p.handle));
  for (const c of data.collections ?? []) {
    unique(`product of collection ${c.handle}:`, c.products);
    for (const h of c.products) if (!products.has(h)) throw new Error(`seed data of store ${slug}: collection ${c.handle} lists product ${h}, which the seed has not`);
  }
  for (const m of data.menu ?? []) {
    const found =
      "collection" in m ? (data.collections ?? []).some((c) => c.handle === m.collection) : "page" in m ? data.pages.some((p) => p.handle === m.page) : isMenuUrl(m.url);
    if (!found) throw new Error(`seed data of store ${slug}: menu item ${m.label} points at nothing the seed has (or a link that is not https or a path)`);
  }
  const theme = data.theme && themeSchema.safeParse({ ...THEME_DEFAULTS, ...data.theme });
  if (theme && !theme.success) throw new Error(`seed data of store ${slug}: theme: ${theme.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  for (const l of data.locations) {
    const gstin = l.tax && checkGstin(l.tax.gstin);
    if (gstin && !gstin.ok) throw new Error(`seed data of store ${slug}: location ${l.name}: GSTIN ${l.tax!.gstin} ${gstin.reason}`);
    if (gstin && gstin.ok && gstin.state !== l.state) throw new Error(`seed data of store ${slug}: location ${l.name}: GSTIN ${gstin.gstin} is not of ${l.state}`);
  }
  const keys = data.locations.map((l) => l.key);
  for (const p of data.products) {
    for (const v of p.variants) {
      const listed = Object.keys(v.stock);
      if (listed.length !== keys.length || !keys.every((k) => listed.includes(k))) {
        throw new Error(`seed data of store ${slug}: SKU ${v.sku} must list stock for exactly the locations ${keys.join(", ")}`);
      }
    }
  }
}

/**
 * Catalogue, locations and stock, customers, discounts and pages of one store, inside the caller's
 * transaction (app.store_id already set). One statement per table, each `on conflict do nothing` on the
 * row's natural key, so existing rows (and any edits made to them since) are left alone. Products get
 * staggered timestamps so lists sorted by "recently updated" show them in the data's order. Opening stock
 * is recorded as a `received` adjustment, only for stock levels this run created. Returns rows inserted.
 */
async function seedStoreData(client: pg.Client, storeId: string, data: StoreSeed): Promise<number> {
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const run = async (sql: string, rows: unknown[]) =>
    rows.length === 0 ? 0 : ((await client.query(sql, [storeId, json(rows)])).rowCount ?? 0);
  let inserted = 0;

  inserted += await run(
    `insert into location (store_id, name, sells_online, city, state)
     select $1::uuid, l.name, l.sells_online, l.city, l.state
     from jsonb_to_recordset($2::jsonb) as l(name text, sells_online boolean, city text, state text)
     on conflict (store_id, name) do nothing`,
    data.locations.map((l) => ({ name: l.name, sells_online: l.sellsOnline, city: l.city, state: l.state })),
  );
  // Databases seeded before locations had a state (migration 0009) get it once; not counted as new data.
  await client.query(
    `update location l set state = s.state from jsonb_to_recordset($2::jsonb) as s(name text, state text)
     where l.store_id = $1::uuid and l.name = s.name and l.state is null`,
    [storeId, json(data.locations.map((l) => ({ name: l.name, state: l.state })))],
  );
  // The tax identity (migration 0036), also once on databases seeded before it; the GSTIN's state is the seed's.
  await client.query(
    `update location l set gstin = t.gstin, legal_name = t.legal_name, address_line1 = t.address_line1,
            address_line2 = t.address_line2, postal_code = t.postal_code
     from jsonb_to_recordset($2::jsonb) as t(name text, gstin text, legal_name text, address_line1 text, address_line2 text, postal_code text)
     where l.store_id = $1::uuid and l.name = t.name and l.gstin is null`,
    [
      storeId,
      json(data.locations.flatMap((l) => (l.tax ? [{ name: l.name, gstin: l.tax.gstin, legal_name: l.tax.legalName, address_line1: l.tax.addressLine1, address_line2: l.tax.addressLine2 ?? null, postal_code: l.tax.postalCode }] : []))),
    ],
  );

  inserted += await run(
    `insert into product (store_id, handle, title, description, status, vendor, hsn_code, created_at, updated_at)
     select $1::uuid, p.handle, p.title, p.description, p.status, p.vendor, p.hsn_code,
            now() - p.pos * interval '1 minute', now() - p.pos * interval '1 minute'
     from jsonb_to_recordset($2::jsonb) as p(handle text, title text, description text, status text, vendor text, hsn_code text, pos int)
     on conflict (store_id, handle) do nothing`,
    data.products.map((p, pos) => ({
      handle: p.handle, title: p.title, description: p.description, status: p.status,
      vendor: p.vendor ?? null, hsn_code: p.hsnCode ?? null, pos,
    })),
  );

  inserted += await run(
    `insert into product_variant (store_id, product_id, title, sku, price_minor, compare_at_minor, tax_class, preorder, position)
     select $1::uuid, p.id, v.title, v.sku, v.price_minor, v.compare_at_minor, v.tax_class, v.preorder, v.position
     from jsonb_to_recordset($2::jsonb) as v(handle text, title text, sku text, price_minor bigint, compare_at_minor bigint, tax_class text, preorder boolean, position int)
     join product p on p.store_id = $1::uuid and p.handle = v.handle
     on conflict (store_id, sku) where sku is not null do nothing`,
    data.products.flatMap((p) =>
      p.variants.map((v, position) => ({
        handle: p.handle, title: v.title, sku: v.sku, price_minor: v.priceMinor, compare_at_minor: v.compareAtMinor ?? null,
        tax_class: v.taxClass, preorder: v.preorder ?? false, position,
      })),
    ),
  );

  const names = new Map(data.locations.map((l) => [l.key, l.name]));
  const levels = data.products.flatMap((p) =>
    p.variants.flatMap((v) => Object.entries(v.stock).map(([key, onHand]) => ({ sku: v.sku, location: names.get(key), on_hand: onHand }))),
  );
  inserted += await run(
    `with level as (
       insert into inventory_level (store_id, variant_id, location_id, on_hand)
       select $1::uuid, pv.id, l.id, s.on_hand
       from jsonb_to_recordset($2::jsonb) as s(sku text, location text, on_hand int)
       join product_variant pv on pv.store_id = $1::uuid and pv.sku = s.sku
       join location l on l.store_id = $1::uuid and l.name = s.location
       on conflict (store_id, variant_id, location_id) do nothing
       returning variant_id, location_id, on_hand
     ), opening as (
       insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note)
       select $1::uuid, variant_id, location_id, on_hand, on_hand, 'received', 'Opening stock (demo seed)'
       from level where on_hand > 0
     )
     select 1 from level`,
    levels,
  );

  inserted += await run(
    `insert into customer (store_id, email, first_name, last_name, phone, city, accepts_marketing)
     select $1::uuid, c.email, c.first_name, c.last_name, c.phone, c.city, c.accepts_marketing
     from jsonb_to_recordset($2::jsonb) as c(email text, first_name text, last_name text, phone text, city text, accepts_marketing boolean)
     on conflict (store_id, lower(email)) where email is not null do nothing`,
    data.customers.map((c) => ({
      email: c.email, first_name: c.firstName, last_name: c.lastName, phone: c.phone, city: c.city, accepts_marketing: c.acceptsMarketing,
    })),
  );

  inserted += await run(
    `insert into discount (store_id, code, kind, value, usage_limit)
     select $1::uuid, d.code, d.kind, d.value, d.usage_limit
     from jsonb_to_recordset($2::jsonb) as d(code text, kind text, value bigint, usage_limit int)
     on conflict (store_id, code) do nothing`,
    data.discounts.map((d) => ({ code: d.code, kind: d.kind, value: d.value, usage_limit: d.usageLimit ?? null })),
  );

  inserted += await run(
    `insert into page (store_id, handle, title, body, status, published_at)
     select $1::uuid, p.handle, p.title, p.body, p.status, case when p.status = 'published' then now() end
     from jsonb_to_recordset($2::jsonb) as p(handle text, title text, body text, status text)
     on conflict (store_id, handle) do nothing`,
    data.pages.map((p) => ({ handle: p.handle, title: p.title, body: p.body, status: p.status })),
  );

  // Collections with their products, only for the collections this run makes (one curated since keeps its own).
  inserted += await run(
    `with made as (
       insert into collection (store_id, handle, title, description, published)
       select $1::uuid, c.handle, c.title, c.description, c.published
       from jsonb_to_recordset($2::jsonb) as c(handle text, title text, description text, published boolean)
       on conflict (store_id, handle) do nothing
       returning id, handle
     ), listed as (
       insert into collection_product (store_id, collection_id, product_id, position)
       select $1::uuid, made.id, p.id, x.position - 1
       from jsonb_to_recordset($2::jsonb) as c(handle text, products jsonb)
       join made on made.handle = c.handle
       cross join lateral jsonb_array_elements_text(c.products) with ordinality as x(handle, position)
       join product p on p.store_id = $1::uuid and p.handle = x.handle
     )
     select 1 from made`,
    (data.collections ?? []).map((c) => ({ handle: c.handle, title: c.title, description: c.description, published: c.published, products: c.products })),
  );
  // The menu, only while the store has none.
  inserted += await run(
    `insert into menu_item (store_id, position, label, kind, collection_id, page_id, url)
     select $1::uuid, m.position, m.label, m.kind, c.id, pg.id, m.url
     from jsonb_to_recordset($2::jsonb) as m(position int, label text, kind text, collection text, page text, url text)
     left join collection c on c.store_id = $1::uuid and c.handle = m.collection
     left join page pg on pg.store_id = $1::uuid and pg.handle = m.page
     where not exists (select 1 from menu_item where store_id = $1::uuid)`,
    (data.menu ?? []).map((m, position) => ({
      position,
      label: m.label,
      kind: "collection" in m ? "collection" : "page" in m ? "page" : "link",
      collection: "collection" in m ? m.collection : null,
      page: "page" in m ? m.page : null,
      url: "url" in m ? m.url : null,
    })),
  );

  // The look, published as seeded (a store whose look was edited since keeps its own).
  if (data.theme) {
    const theme = JSON.stringify({ ...THEME_DEFAULTS, ...data.theme });
    inserted += (await client.query(
      `insert into store_theme (store_id, draft, published, published_at) values ($1::uuid, $2::jsonb, $2::jsonb, now()) on conflict (store_id) do nothing`,
      [storeId, theme],
    )).rowCount ?? 0;
  }

  return inserted;
}

function describeStore(slug: string, data: StoreSeed): string {
  const c = seedCounts(data);
  const parts = [
    `${c.products} products (${c.activeProducts} active, ${c.variants} variants)`,
    `${c.locations} location${c.locations === 1 ? "" : "s"} with stock`,
    `${c.customers} customers`,
    ...(c.discounts ? [`${c.discounts} discounts`] : []),
    ...(c.pages ? [`${c.pages} pages`] : []),
  ];
  return `${slug}: ${parts.join(", ")}`;
}

export async function seedDemo(ownerUrl: string, log: (m: string) => void = () => {}): Promise<void> {
  for (const s of DEMO_STORES) checkStoreSeed(s.slug, STORE_SEEDS[s.slug]);
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    let insertedRows = 0;
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
          "insert into store (id, slug, name, currency, manual_transfer_enabled) values ($1, $2, $3, $4, $5) on conflict (id) do nothing",
          [storeId, s.slug, s.name, s.currency, s.bankTransfer],
        );
        for (const [i, hostname] of s.domains.entries()) {
          await client.query(
            `insert into store_domain (store_id, hostname, status, is_primary, verified_at)
             values ($1, $2, 'verified', $3, now()) on conflict (hostname) where status = 'verified' do nothing`,
            [storeId, hostname, i === 0],
          );
        }
        for (const person of DEMO_PEOPLE.filter((p) => p.store === s.slug)) {
          await client.query(
            "insert into member (store_id, user_id, role) values ($1, $2, $3) on conflict (store_id, user_id) do nothing",
            [storeId, userIds.get(person.email), person.role],
          );
        }
        insertedRows += await seedStoreData(client, storeId, STORE_SEEDS[s.slug]);
        await client.query("commit");
      } catch (e) {
        await client.query("rollback");
        throw e;
      }
    }
    log(
      `Demo data ready: ${DEMO_PEOPLE.length} people; ${DEMO_STORES.map((s) => describeStore(s.slug, STORE_SEEDS[s.slug])).join("; ")}` +
        ` (${insertedRows === 0 ? "nothing new" : `${insertedRows} catalogue/customer rows added`}).`,
    );
  } finally {
    await client.end();
  }
}
