import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { page, PASSWORD, person, postForm, sessionFor, signIn } from "../../test/admin";

const db = testDb();
// One store and one person for the whole table: each case signs in or gets a session of its own, and
// no case changes either (successful sign-ins never count against the email's limit).
let shared: ReturnType<typeof makeStore> | undefined;
const store = () => (shared ??= makeStore(db));
let someone: ReturnType<typeof person> | undefined;
const member = () => (someone ??= person(db, 0));

const LONGEST = `/${"a".repeat(2047)}`;

/** `next` values that must never leave the admin: each one sends the member to `/`. */
const REFUSED: [string, string][] = [
  ["tab", "/\t/evil.example"],
  ["newline", "/\n/evil.example"],
  ["carriage return", "/\r/evil.example"],
  ["leading tab", "\t/products"],
  ["leading space", " /products"],
  ["trailing space", "/products "],
  ["backslash", "/\\evil.example"],
  ["backslash then t", "/\\t/evil.example"],
  ["backslash then tab", "/\\\t/evil.example"],
  ["encoded tab", "/%09/evil.example"],
  ["encoded newline", "/%0a/evil.example"],
  ["encoded slash", "/%2F/evil.example"],
  ["encoded slash, lower case", "/%2f/evil.example"],
  ["both slashes encoded", "%2F%2Fevil.example"],
  ["protocol-relative", "//evil.example"],
  ["three slashes", "///evil.example"],
  ["encoded backslash", "/%5Cevil.example"],
  ["encoded backslash, lower case", "/%5cevil.example"],
  ["double-encoded backslash", "/%255Cevil.example"],
  ["double-encoded tab", "/%2509/evil.example"],
  ["double-encoded slash", "/%252F/evil.example"],
  ["triple-encoded slash", "/%25252F/evil.example"],
  ["dot segment to //", "/.//evil.example"],
  ["dot-dot segment to //", "/..//evil.example"],
  ["encoded dot-dot segment to //", "/%2e%2e//evil.example"],
  ["javascript:", "javascript:alert(1)"],
  ["absolute http", "http://evil.example"],
  ["absolute https", "https://evil.example/x"],
  ["scheme without slashes", "https:evil.example"],
  ["header injection", "/%0d%0aSet-Cookie:x=1"],
  ["header injection in the query", "/products?q=%0d%0aSet-Cookie:x=1"],
  ["encoded NUL", "/products%00"],
  ["NUL", "/products\u0000"],
  ["full-width solidus", "/\uFF0Fevil.example"],
  ["encoded full-width solidus", "/%EF%BC%8Fevil.example"],
  ["relative path", "products"],
  ["empty", ""],
];

/** Good paths: followed, normalised (dot segments resolved, fragment dropped). */
const ACCEPTED: [string, string, string][] = [
  ["a list page", "/products?page=2", "/products?page=2"],
  ["settings", "/settings/api", "/settings/api"],
  ["home", "/", "/"],
  [
    "the OAuth consent with its request",
    "/oauth/authorize?response_type=code&client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A33418%2Fcallback&scope=products%3Aread%20orders%3Aread&state=x%2By",
    "/oauth/authorize?response_type=code&client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A33418%2Fcallback&scope=products%3Aread%20orders%3Aread&state=x%2By",
  ],
  ["a search with an encoded non-ASCII letter", "/products?query=caf%C3%A9", "/products?query=caf%C3%A9"],
  ["a search with a literal percent sign", "/products?query=50%25", "/products?query=50%25"],
  ["dot segments", "/products/../settings", "/settings"],
  ["a fragment", "/settings#top", "/settings"],
  ["the longest allowed", LONGEST, LONGEST],
];

const CASES: [string, string, string][] = [...REFUSED.map(([name, raw]): [string, string, string] => [name, raw, "/"]), ...ACCEPTED];

const hiddenNext = (html: string) => /<input type="hidden" name="next" value="([^"]*)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");

describe("where a member may be sent (next)", () => {
  it.each(CASES)("POST /login, %s", async (_name, raw, expected) => {
    const res = await signIn((await member()).email, PASSWORD, { next: raw });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(expected);
  });

  it.each(CASES)("GET /login signed in, %s", async (_name, raw, expected) => {
    const s = await store();
    const res = await page(await sessionFor(db, s.ownerUserId, s.id), `/login?next=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(expected);
  });

  it.each(CASES)("GET /login signed out keeps only the safe path in the form, %s", async (_name, raw, expected) => {
    const res = await page(null, `/login?next=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(200);
    expect(hiddenNext(await res.text())).toBe(expected);
  });

  it.each(CASES)("GET /select-store keeps only the safe path in the form, %s", async (_name, raw, expected) => {
    const s = await store();
    const res = await page(await sessionFor(db, s.ownerUserId, null), `/select-store?next=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(200);
    expect(hiddenNext(await res.text())).toBe(expected);
  });

  it.each(CASES)("POST /select-store, %s", async (_name, raw, expected) => {
    const s = await store();
    const browser = await sessionFor(db, s.ownerUserId, null);
    const res = await postForm(browser, "/select-store", { storeId: s.id, next: raw, csrf: browser.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(expected);
  });

  it("a next longer than 2048 characters: a 400 naming it on the pages, home after a sign-in or a store choice", async () => {
    const tooLong = `${LONGEST}a`;
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, null);
    for (const path of ["/login", "/select-store"]) {
      const res = await page(browser, `${path}?next=${encodeURIComponent(tooLong)}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("next");
    }
    const p = await person(db);
    const signedIn = await signIn(p.email, PASSWORD, { next: tooLong });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/");
    const chosen = await postForm(browser, "/select-store", { storeId: s.id, next: tooLong, csrf: browser.csrf });
    expect(chosen.headers.get("location")).toBe("/");
  });
});
