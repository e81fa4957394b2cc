import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import worker from "./index";

describe("GET /health", () => {
  it("answers 200 with db up after a real select 1", async () => {
    const res = await call(worker, "http://worker.test/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, db: "up" });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toMatch(/.{8,}/);
  });

  it("answers 503 with db down when the database is unreachable", async () => {
    // Same code path, pointed at a port where nothing listens.
    const res = await call(worker, "http://worker.test/health", undefined, {
      DATABASE_URL: "postgres://app_user:x@127.0.0.1:9/nowhere",
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, db: "down" });
  });

  it("answers unknown paths with a JSON 404 carrying the request id", async () => {
    const res = await call(worker, "http://worker.test/nope", { headers: { "x-request-id": "req-12345678" } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ json: { code: "NOT_FOUND", message: "Not found", requestId: "req-12345678" } });
  });
});
