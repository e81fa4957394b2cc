import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { isAppError } from "../core/errors";
import * as csrf from "./csrf";
import { sameSiteOnly, sameSiteRoutes } from "./csrf";

/** The same-site guard (CSRF) as every door mounts it: the check is private, the middleware is the door's only way in. */
const ORIGIN = "https://shop.test";

function appWith(mount: (app: Hono) => void): Hono {
  const app = new Hono();
  app.onError((e, c) => (isAppError(e) ? c.json({ code: e.code, message: e.message, reason: e.data?.["reason"] }, e.status as 403) : c.text("boom", 500)));
  mount(app);
  return app;
}

const send = (app: Hono, method: string, path: string, headers: Record<string, string> = {}) => app.request(`${ORIGIN}${path}`, { method, headers });

describe("sameSiteOnly", () => {
  const app = appWith((a) => {
    a.use("/forms/*", sameSiteOnly("the shop"));
    a.on(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"], "/forms/x", (c) => c.text("done"));
  });

  it("refuses every method but GET and HEAD from another site, with the 403 that names where to go", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const foreign: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { "sec-fetch-site": "none" }, { origin: "https://evil.example" }, { origin: "null" }];
      for (const headers of foreign) {
        const res = await send(app, method, "/forms/x", headers);
        expect(res.status, `${method} ${JSON.stringify(headers)}`).toBe(403);
        expect(await res.json()).toEqual({ code: "FORBIDDEN", message: "Cross-site request refused. Use the shop from its own address.", reason: "csrf" });
      }
    }
    for (const method of ["GET", "HEAD"]) expect((await send(app, method, "/forms/x", { "sec-fetch-site": "cross-site" })).status).toBe(200);
  });

  it("lets the site's own requests through: same-origin, the site's Origin, no marks at all (not a browser), null vouched for", async () => {
    const own: Record<string, string>[] = [{ "sec-fetch-site": "same-origin" }, { origin: ORIGIN }, {}, { origin: "null", "sec-fetch-site": "same-origin" }];
    for (const headers of own) {
      const res = await send(app, "POST", "/forms/x", headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(await res.text()).toBe("done");
    }
  });

  it("a refusal of the mount's own answers instead, and the handler never runs", async () => {
    let ran = 0;
    const own = appWith((a) => {
      a.use("/page", sameSiteOnly((c) => c.html("<p>This form must be sent from the store's own page.</p>", 400)));
      a.post("/page", (c) => {
        ran++;
        return c.text("done");
      });
    });
    const refused = await send(own, "POST", "/page", { "sec-fetch-site": "cross-site" });
    expect([refused.status, await refused.text()]).toEqual([400, "<p>This form must be sent from the store's own page.</p>"]);
    expect(ran).toBe(0);
    expect((await send(own, "POST", "/page", { "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect(ran).toBe(1);
  });

  it("the check itself is not exported: a door can only mount the guard", () => {
    expect(Object.keys(csrf).sort()).toEqual(["crossSiteRefused", "isSameSiteGuard", "sameSiteOnly", "sameSiteRoutes"]);
  });
});

describe("sameSiteRoutes", () => {
  const doors = new Hono();
  doors.get("/settings", (c) => c.text("page"));
  doors.post("/settings", (c) => c.text("saved"));
  doors.delete("/settings/:id", (c) => c.text("deleted"));
  doors.all("/settings/:id", (c) => c.text("use DELETE", 405));
  const open = new Hono();
  open.post("/api/token", (c) => c.text("token"));
  const app = appWith((a) => {
    a.route("/", sameSiteRoutes(doors));
    a.route("/", open);
  });

  it("guards each of the sub-app's routes but a GET, with the admin's 403 unless told otherwise", async () => {
    const post = await send(app, "POST", "/settings", { "sec-fetch-site": "cross-site" });
    expect([post.status, ((await post.json()) as { message: string }).message]).toEqual([403, "Cross-site request refused. Use the admin from its own address."]);
    expect((await send(app, "DELETE", "/settings/1", { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await send(app, "GET", "/settings", { "sec-fetch-site": "cross-site" })).status).toBe(200);
    expect(await (await send(app, "POST", "/settings", { "sec-fetch-site": "same-origin" })).text()).toBe("saved");
  });

  it("leaves alone what the sub-app does not answer: another sub-app's door, a method it has no route for, an unknown path", async () => {
    expect(await (await send(app, "POST", "/api/token", { "sec-fetch-site": "cross-site" })).text()).toBe("token");
    expect((await send(app, "PUT", "/settings/1", { "sec-fetch-site": "cross-site" })).status).toBe(405);
    expect((await send(app, "POST", "/nothing", { "sec-fetch-site": "cross-site" })).status).toBe(404);
  });
});

// Every source file of the Workers, as text (tests aside).
const doors = import.meta.glob(["../../workers/**/*.{ts,tsx}", "!../../workers/**/*.test.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;

describe("no door checks the site itself", () => {
  it("no Worker source reads Sec-Fetch-Site or has a cross-site check of its own: the guard of shared/http/csrf.ts does", () => {
    expect(Object.keys(doors).length).toBeGreaterThan(50);
    const readers = Object.entries(doors)
      .filter(([, text]) => /sec-fetch-site|isCrossSite/i.test(text))
      .map(([path]) => path);
    expect(readers).toEqual([]);
  });
});
