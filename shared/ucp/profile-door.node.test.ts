import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ucpSchemas } from "../../test/node/ucp-schemas";

/**
 * The store's profile as the storefront Worker served it at `/.well-known/ucp` (workers/storefront/ucp-profile.ts),
 * recorded in test/fixtures/ucp/recorded/profile.json (workers/storefront/ucp-profile.test.ts checks that live
 * answers keep its shape), against the specification's business profile schema: with two keys during a
 * rotation's grace, endpoints on the hostname asked, cacheable at least 60 s, its ETag the body's hash.
 */
type Json = Record<string, any>;
const recorded = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../test/fixtures/ucp/recorded/profile.json"), "utf8")) as {
  host: string;
  status: number;
  headers: Record<string, string>;
  body: Json;
};
const validate = ucpSchemas().getSchema("https://ucp.dev/schemas/profile.json#/$defs/business_schema")!;

describe("the profile the Worker served, against the specification's schema", () => {
  it("is a valid business profile with the store's two published keys and its endpoints on the hostname asked", () => {
    expect(recorded.status).toBe(200);
    expect(validate(recorded.body), JSON.stringify(validate.errors)).toBe(true);
    expect(recorded.body["keys"]).toHaveLength(2);
    for (const key of recorded.body["keys"]) expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
    const endpoints = recorded.body["ucp"]["services"]["dev.ucp.shopping"].map((s: Json) => s["endpoint"]);
    expect(endpoints).toEqual([`https://${recorded.host}/api/ucp`, `https://${recorded.host}/api/mcp`]);
  });

  it("is cacheable for at least 60 s by anyone, as JSON, its strong ETag the body's SHA-256", () => {
    const h = recorded.headers;
    expect(h["content-type"]).toMatch(/^application\/json/);
    expect(Number(/^public, max-age=(\d+)$/.exec(h["cache-control"]!)?.[1])).toBeGreaterThanOrEqual(60);
    expect(h["access-control-allow-origin"]).toBe("*");
    const digest = createHash("sha256").update(JSON.stringify(recorded.body)).digest("base64url");
    expect(h["etag"]).toBe(`"${digest}"`);
  });

  it("the schema can refuse: keys with a private part, or none of the protocol's metadata", () => {
    expect(validate({ ...recorded.body, keys: [{ ...recorded.body["keys"][0], d: "secret" }] })).toBe(false);
    expect(validate({ keys: recorded.body["keys"] })).toBe(false);
  });
});
