import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientOf } from "#shared/limits/address";
import { hit } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { withStore } from "#shared/db/with-store";
import { SHOPPER_LIMITS, shopperKeys } from "#shared/limits/shopper";
import { testDb, uniqueSuffix } from "../../test/harness";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";

/**
 * The denial-of-inventory attack of issue 20 (OWASP OAT-021), looped as a script would: put all the stock
 * of a variant in a new cart, apply the store's code, check out by bank transfer (unpaid: it holds the
 * stock for days), again and again. The limits at the door stop the loop while stock is still on sale.
 */
const db = testDb();
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const address = { name: "Bot", line1: "1 Loop Street", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" };
const NO_TOKEN = { "cf-turnstile-response": "" };
const { checkout } = SHOPPER_LIMITS;
const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;

/** A store that takes bank transfers, whose product comes in `sizes` variants of `units` each. */
async function shop(sizes: number, units: number): Promise<{ s: ShopStore; variants: string[] }> {
  const s = await makeShop(db);
  await sql(s, "update store set manual_transfer_enabled = true");
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update inventory_level set on_hand = $1", [units]);
  await sql(
    s,
    `insert into product_variant (store_id, product_id, title, price_minor, position) select store_id, product_id, 'Size ' || g, 1000, g from product_variant, generate_series(1, $1::int) g where id = $2`,
    [sizes - 1, s.variantId],
  );
  await sql(
    s,
    `insert into inventory_level (store_id, variant_id, location_id, on_hand)
       select v.store_id, v.id, (select location_id from inventory_level where variant_id = $2), $1 from product_variant v where v.title like 'Size %'`,
    [units, s.variantId],
  );
  const variants = (await sql(s, "select id from product_variant order by position, created_at")).map((r) => r.id as string);
  return { s, variants };
}

const onSale = async (s: ShopStore) => Number((await sql(s, "select coalesce(sum(on_hand - reserved), 0) as n from inventory_level"))[0].n);

/** The three requests, from `ip`: all of `variantId`'s stock into a new cart, the code, a bank-transfer checkout. */
async function hold(s: ShopStore, variantId: string, quantity: number, ip: string, extra: Record<string, string> = NO_TOKEN): Promise<number> {
  const bot = new Shopper(s.hostname);
  const from = { "cf-connecting-ip": ip, ...extra };
  const add = await bot.send("POST", "/api/cart/lines", { variantId, quantity }, from);
  if (add.status !== 200) return add.status;
  await bot.send("POST", "/api/cart/discount", { code: s.discountCode }, from);
  const res = await bot.send("POST", "/api/checkout", { email: `bot-${uniqueSuffix()}@example.test`, shippingAddress: address, paymentMethod: "manual_transfer" }, from);
  return res.status;
}

describe("the three-request hold, looped", () => {
  it(`from one address: ${checkout.address.challengeAfter} holds, then the check stops it (403), then the limit (429); the other sizes stay on sale`, async () => {
    const { s, variants } = await shop(8, 5);
    expect(await onSale(s)).toBe(40);
    const statuses: number[] = [];
    for (const [i, variantId] of variants.entries()) statuses.push(await hold(s, variantId, 5, "203.0.113.66", i % 2 ? { "cf-turnstile-response": "0.forged" } : NO_TOKEN));
    // The script keeps going on one size until the door shuts for good.
    for (let i = 0; i < checkout.address.limit; i++) statuses.push(await hold(s, variants.at(-1)!, 5, "203.0.113.66"));
    const held = checkout.address.challengeAfter!;
    expect(statuses.slice(0, held)).toEqual(Array(held).fill(201));
    expect(statuses.slice(held, checkout.address.limit)).toEqual(Array(checkout.address.limit - held).fill(403));
    expect(new Set(statuses.slice(checkout.address.limit))).toEqual(new Set([429]));
    expect(await onSale(s)).toBe(40 - 5 * held);
    // A person elsewhere still buys a size the script wanted.
    expect(await hold(s, variants[held]!, 5, "198.51.100.7")).toBe(201);
  });

  it(`from a new address each time: past the store's ${checkout.store!.challengeAfter} checkouts, every further hold needs the check; stock is left`, { timeout: 120_000 }, async () => {
    const { s, variants } = await shop(1, 1000);
    // The store's window holds 50 checkouts of a crowd already (counted as 50 requests would be); the script's
    // holds, each from a new address, fill it to the threshold, and then every one needs the person check.
    const { store } = shopperKeys("checkout", s.hostname, clientOf("198.51.100.9"));
    const earlier = checkout.store!.challengeAfter! - 10;
    await hit(limiter, store!.key, store!.policy, earlier);
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch += 10) {
      statuses.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => hold(s, variants[0]!, 10, `198.18.${batch}.${i + 1}`)))));
    }
    expect(statuses.filter((st) => st === 201)).toHaveLength(10);
    expect(statuses.filter((st) => st === 403)).toHaveLength(10);
    expect(await onSale(s)).toBe(1000 - 10 * 10);
    // A person with the check done buys what is left.
    expect(await hold(s, variants[0]!, 10, "198.51.100.8", { "cf-turnstile-response": "XXXX.DUMMY.TOKEN.XXXX" })).toBe(201);
  });
});
