import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../core/crypto";
import { hashPassword, PBKDF2_ITERATIONS, verifyPassword } from "./password";

describe("password hashing", () => {
  it("hashes with PBKDF2-SHA256 at 100,000 iterations and a per-hash salt", async () => {
    const [a, b] = await Promise.all([hashPassword("demo-password"), hashPassword("demo-password")]);
    expect(a).toMatch(new RegExp(`^pbkdf2_sha256\\$${PBKDF2_ITERATIONS}\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`));
    expect(a).not.toBe(b);
  });

  it("verifies the right password and refuses a wrong or tampered one", async () => {
    const stored = await hashPassword("correct horse");
    expect(await verifyPassword("correct horse", stored)).toBe(true);
    expect(await verifyPassword("correct horsf", stored)).toBe(false);
    const parts = stored.split("$");
    const tampered = [parts[0], parts[1], parts[2], parts[3]!.replace(/^./, (c) => (c === "A" ? "B" : "A"))].join("$");
    expect(await verifyPassword("correct horse", tampered)).toBe(false);
    expect(await verifyPassword("correct horse", "plain")).toBe(false);
    expect(await verifyPassword("correct horse", "pbkdf2_sha256$999999999$x$y")).toBe(false);
  });

  it("compares bytes without stopping at the first difference", () => {
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false);
  });
});
