import { describe, expect, it, vi } from "vitest";
import { call } from "../../test/call";
import worker from "../../workers/worker/index";

describe("app factory", () => {
  it("answers 500 without internals when the Worker's environment is invalid, and logs why", async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    const res = await call(worker, "http://worker.test/health", undefined, { DATABASE_URL: "mysql://root:secret@db/x" });
    spy.mockRestore();
    expect(res.status).toBe(500);
    const body = (await res.json()) as { json: { code: string; message: string; requestId: string } };
    expect(body.json.code).toBe("INTERNAL");
    expect(body.json.message).toContain(body.json.requestId);
    expect(JSON.stringify(body)).not.toContain("secret");
    expect(errors.join("\n")).toContain("DATABASE_URL must be a postgres:// connection string");
    expect(errors.join("\n")).not.toContain("secret");
  });

  it("keeps a well-formed incoming request id and replaces a malformed one", async () => {
    const kept = await call(worker, "http://worker.test/health", { headers: { "x-request-id": "trace-abc-123" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-abc-123");
    const replaced = await call(worker, "http://worker.test/health", { headers: { "x-request-id": "<script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
