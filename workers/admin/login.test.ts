import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import worker from "./index";

describe("GET /login", () => {
  it("renders the sign-in form with email, password and a hidden next", async () => {
    const res = await call(worker, "http://admin.test/login?next=/products");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toMatch(/<form method="post" action="\/login">/);
    expect(html).toMatch(/<input[^>]*name="email"[^>]*type="email"/);
    expect(html).toMatch(/<input[^>]*name="password"[^>]*type="password"/);
    expect(html).toMatch(/<input type="hidden" name="next" value="\/products"/);
  });

  it("never carries an off-site next into the form", async () => {
    for (const next of ["//evil.example", "https://evil.example/x", "/\\evil.example", "javascript:alert(1)"]) {
      const html = await (await call(worker, `http://admin.test/login?next=${encodeURIComponent(next)}`)).text();
      expect(html).toMatch(/<input type="hidden" name="next" value="\/"/);
    }
  });

  it("answers a query that is too long with a 400 naming the field", async () => {
    const res = await call(worker, `http://admin.test/login?next=/${"a".repeat(3000)}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("next");
  });

  it("sends a visitor without a session from a page to sign in, and back afterwards", async () => {
    const res = await call(worker, "http://admin.test/", { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?next=%2F");
  });

  it("renders unknown pages as an HTML 404 and unknown API paths as JSON", async () => {
    const page = await call(worker, "http://admin.test/nowhere");
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const api = await call(worker, "http://admin.test/api/nowhere");
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ json: { code: "NOT_FOUND" } });
  });
});
