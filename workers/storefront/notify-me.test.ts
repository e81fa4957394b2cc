import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { testDb, type TestStore } from "../../test/harness";
import { makeShop } from "../../test/storefront";
import worker from "./index";

/** "Email me when it is back" on a sold-out product page, through the real storefront Worker (issue 12). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

async function soldOut() {
  const s = await makeShop(db);
  await sql(s, "update inventory_level set on_hand = 0");
  return s;
}

const get = async (host: string, path: string) => {
  const res = await call(worker, `http://storefront.test${path}`, { headers: { host } });
  return { status: res.status, headers: res.headers, html: await res.text() };
};
const post = async (host: string, path: string, fields: Record<string, string>, site = "same-origin") => {
  const res = await call(worker, `http://storefront.test${path}`, {
    method: "POST",
    headers: { host, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": site },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
};
const waiting = (s: TestStore) => sql<{ email: string }>(s, "select email from restock_subscription where status = 'waiting' order by email");

describe("Email me when it is back", () => {
  it("a sold-out page offers it; a post subscribes once, says so on a page no cache keeps", async () => {
    const s = await soldOut();
    const page = await get(s.hostname, "/products/fixture");
    expect(page.html).toContain('<form method="post" action="/products/fixture/notify" class="card" id="notify">');
    expect(page.html).toContain(`<input type="hidden" name="variantId" value="${s.variantId}"/>`);
    for (let i = 0; i < 2; i++) {
      const done = await post(s.hostname, "/products/fixture/notify", { variantId: s.variantId, email: " Asha@Example.test " });
      expect(done.status).toBe(200);
      expect(done.headers.get("cache-control")).toBe("no-store");
      expect(done.html).toContain("We will email asha@example.test once when Fixture is back.");
    }
    expect(await waiting(s)).toEqual([{ email: "asha@example.test" }]);
    // The product page itself stays the same for everyone (no email in it).
    expect((await get(s.hostname, "/products/fixture")).html).not.toContain("asha@example.test");
  });

  it("a page with the variant in stock has no form; posting for it anyway is 409 with the reason", async () => {
    const s = await makeShop(db);
    expect((await get(s.hostname, "/products/fixture")).html).not.toContain('id="notify"');
    const refused = await post(s.hostname, "/products/fixture/notify", { variantId: s.variantId, email: "a@example.test" });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain("It is in stock now: add it to your cart.");
    expect(await waiting(s)).toEqual([]);
  });

  it("mistakes come back with what was typed and the message by the field; foreign variants and cross-site posts write nothing", async () => {
    const s = await soldOut();
    const other = await soldOut();
    const bad = await post(s.hostname, "/products/fixture/notify", { variantId: s.variantId, email: "asha@" });
    expect(bad.status).toBe(400);
    expect(bad.html).toMatch(/id="notify-email" name="email" type="email" autocomplete="email" required="" value="asha@" aria-invalid="true" aria-describedby="notify-email-error"/);
    expect(bad.html).toContain('<p class="field-error" id="notify-email-error">must be an email address such as asha@example.com</p>');
    expect((await post(s.hostname, "/products/fixture/notify", { variantId: other.variantId, email: "a@example.test" })).status).toBe(404);
    expect((await post(s.hostname, "/products/fixture/notify", { variantId: "not-an-id", email: "a@example.test" })).status).toBe(400);
    const forged = await post(s.hostname, "/products/fixture/notify", { variantId: s.variantId, email: "victim@example.test" }, "cross-site");
    expect(forged.status).toBe(400);
    expect(forged.html).toContain("This form must be sent from the store&#39;s own page.");
    expect(await waiting(s)).toEqual([]);
    expect(await waiting(other)).toEqual([]);
    expect((await get(s.hostname, "/products/no-such/notify")).status).toBe(404);
  });

  it("more than 10 posts in 10 minutes from one address are refused (429, Retry-After) before anything is written", async () => {
    const s = await soldOut();
    const headers = { "cf-connecting-ip": "203.0.113.9" };
    const send = (i: number) =>
      call(worker, "http://storefront.test/products/fixture/notify", {
        method: "POST",
        headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", ...headers },
        body: new URLSearchParams({ variantId: s.variantId, email: `p${i}@example.test` }).toString(),
      });
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await send(i)).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
    const refused = await send(99);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await waiting(s)).length).toBe(10);
  });
});
