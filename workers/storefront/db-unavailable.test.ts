import { describe, expect, inject, it } from "vitest";
import { call } from "../../test/call";
import worker from "./index";

describe("storefront when the database is overloaded", () => {
  it("53300 (no connection slot for the role): an HTML 503 page with Retry-After, not a 500", async () => {
    // A page no earlier file left in the edge cache (the runner is shared: vitest.config.ts).
    const res = await call(worker, `http://storefront.test/?probe=${crypto.randomUUID()}`, { headers: { host: "demo.localhost" } }, { DATABASE_URL: inject("noSlotsDatabaseUrl") });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain("The database is busy; retry in a moment.");
  });
});
