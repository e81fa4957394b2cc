import { describe, expect, it } from "vitest";
import { AppError, ERROR_STATUS, isNoStoreError, noActiveStore, notAMember, storeNotFound } from "./errors";

describe("no-store errors", () => {
  it("are exactly the three of SPEC, with their codes and reason", () => {
    expect([noActiveStore(), notAMember(), storeNotFound()].map((e) => [e.code, e.status, e.data?.reason, isNoStoreError(e)])).toEqual([
      ["PRECONDITION_FAILED", 412, "no_store", true],
      ["FORBIDDEN", 403, "no_store", true],
      ["NOT_FOUND", 404, "no_store", true],
    ]);
    expect(notAMember().message).toBe("Not a member of this store");
  });

  it("isNoStoreError is false for everything else, a missing permission included", () => {
    expect(isNoStoreError(new AppError("FORBIDDEN", "Your role does not allow products.write"))).toBe(false);
    expect(isNoStoreError(new AppError("NOT_FOUND", "Product not found"))).toBe(false);
    expect(isNoStoreError(new AppError("BAD_REQUEST", "x", { reason: "no_store" }))).toBe(false);
    expect(isNoStoreError(new Error("no_store"))).toBe(false);
    expect(isNoStoreError({ code: "NOT_FOUND", data: { reason: "no_store" } })).toBe(false);
    expect(isNoStoreError(undefined)).toBe(false);
  });

  it("every code maps to a 4xx or 5xx status", () => {
    for (const status of Object.values(ERROR_STATUS)) expect(status).toBeGreaterThanOrEqual(400);
  });
});
