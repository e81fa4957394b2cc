import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { unguarded, unsafeRoutes } from "../../test/same-site";
import { http } from "./http";
import worker from "./index";

/**
 * The worker's same-site rule (CSRF): the local courier's page is the one door a browser posts to, and has the
 * guard of shared/http/csrf.ts in front of it; the providers' webhooks come from other sites by design and are
 * signed instead; the local agent platform's order-update receiver (development and tests only) takes the
 * stores' signed server-to-server posts, as a real platform's does. A route added later without a guard fails here.
 */
describe("the worker's same-site guard", () => {
  it("stands in front of every route that changes something, but the signed webhooks", async () => {
    const routes = await unsafeRoutes(http);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain("POST /-courier/track/:ref");
    expect(unguarded(routes).sort()).toEqual(["POST /-agent/orders", "POST /webhooks/payments/:provider/:storeId", "POST /webhooks/shipments/:provider/:storeId"]);
  });

  it("answers a cross-site press on a shipment that does not exist as the page does (404), before reading the form", async () => {
    const res = await call(worker, "http://worker.test/-courier/track/lc1.nothing", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site" },
      body: "status=delivered",
    });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("No such shipment with the local courier.");
  });
});
