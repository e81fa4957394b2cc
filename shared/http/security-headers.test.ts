import { describe, expect, it, vi } from "vitest";
import { call } from "../../test/call";
import { directive, expectSecureHtml } from "../../test/security";
import worker from "../../workers/worker/index";
import { createApp } from "./app";
import { HSTS, inlineScript } from "./security-headers";

/** The one security-header middleware of createApp (issue 20, item 8). */
const SCRIPT = inlineScript("document.body.dataset.ready = 'yes'");
const app = createApp<Record<string, string>>({ service: "worker", headers: { framing: (path) => (path === "/framed" ? "self" : "none") } });
app.get("/page", (c) => c.html(`<!doctype html><html><body><script>${SCRIPT}</script></body></html>`));
app.get("/framed", (c) => c.html("<!doctype html><p>framed</p>"));
app.get("/json", (c) => c.json({ ok: true }));
app.get("/boom", () => {
  throw new Error("boom");
});

const env = (APP_ENV: string) => ({ APP_ENV, LOG_LEVEL: "error", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });

describe("security headers", () => {
  it("lists a registered inline script by its hash and nothing inline else", async () => {
    const res = await app.request("/page", {}, env("test"));
    await expectSecureHtml(res, "none");
    const csp = res.headers.get("content-security-policy")!;
    expect(directive(csp, "script-src")).toContain("https://challenges.cloudflare.com");
    expect(directive(csp, "frame-src")).toEqual(["https://challenges.cloudflare.com"]);
  });

  it("lets an app name the pages its own site may frame", async () => {
    await expectSecureHtml(await app.request("/framed", {}, env("test")), "self");
  });

  it("dresses JSON and error answers, and sends HSTS only in production", async () => {
    const json = await app.request("/json", {}, env("production"));
    expect(json.headers.get("x-content-type-options")).toBe("nosniff");
    expect(json.headers.get("strict-transport-security")).toBe(HSTS);
    expect(json.headers.get("content-security-policy")).toBeNull();
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const failed = await app.request("/boom", {}, env("production"));
    quiet.mockRestore();
    expect(failed.status).toBe(500);
    expect(failed.headers.get("strict-transport-security")).toBe(HSTS);
    expect(failed.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await app.request("/json", {}, env("development"))).headers.get("strict-transport-security")).toBeNull();
  });

  it("the worker's answers carry them too", async () => {
    const health = await call(worker, "http://worker.test/health");
    expect(health.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
