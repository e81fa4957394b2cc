import { describe, expect, it } from "vitest";
import { generateSigningKey } from "./keys";
import { ucpSchemas } from "../../test/node/ucp-schemas";
import { businessProfile } from "./profile";

/**
 * The store's UCP profile against the specification's own JSON Schemas (test/fixtures/ucp/2026-08-25,
 * copied from the protocol's repository with their source): every schema loaded by its $id, the profile
 * validated as a business profile.
 */
const validator = ucpSchemas;

describe("the store's UCP business profile", () => {
  it("validates against the specification's business profile schema, with the store's keys", async () => {
    const ajv = validator();
    const validate = ajv.getSchema("https://ucp.dev/schemas/profile.json#/$defs/business_schema")!;
    const keys = [(await generateSigningKey()).publicJwk, (await generateSigningKey()).publicJwk];
    const profile = businessProfile("https://kurta.example.in", keys);
    expect(validate(profile), JSON.stringify(validate.errors)).toBe(true);
    expect(profile.ucp.version).toBe("2026-08-25");
    expect(profile.ucp.services["dev.ucp.shopping"]!.map((s) => [s.transport, s.endpoint])).toEqual([
      ["rest", "https://kurta.example.in/api/ucp"],
      ["mcp", "https://kurta.example.in/api/mcp"],
    ]);
    expect(JSON.stringify(profile)).not.toMatch(/"d":/);
  });

  it("the schema refuses what a profile must not be: a private key, no services, a bad version", async () => {
    const validate = validator().getSchema("https://ucp.dev/schemas/profile.json#/$defs/business_schema")!;
    const { publicJwk, privateJwk } = await generateSigningKey();
    const good = businessProfile("https://kurta.example.in", [publicJwk]);
    expect(validate({ ...good, keys: [{ ...publicJwk, d: privateJwk.d }] })).toBe(false);
    expect(validate({ ucp: { ...good.ucp, services: undefined } })).toBe(false);
    expect(validate({ ucp: { ...good.ucp, version: "26-08-25" } })).toBe(false);
  });
});
