import { readFileSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "#shared/registry/openapi";
import { ROOT } from "./lib/config";
import { OPENAPI_FILES, openApiFiles } from "./lib/openapi-files";

// The token API's OpenAPI document against the official OpenAPI 3.1 JSON Schema (the validator reads it from
// disk, so this runs in Node), and the committed document and client types against a fresh generation.

describe("npm run openapi", () => {
  it("makes a document the official OpenAPI 3.1 schema accepts", async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument("https://admin.example.com") as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("refuses a broken document (the validator is not a rubber stamp)", async () => {
    const broken = structuredClone(openApiDocument("https://admin.example.com")) as unknown as { paths: Record<string, { post: Record<string, unknown> }> };
    delete (broken.paths["/api/v1/products/list"]!.post.responses as Record<string, Record<string, unknown>>)["200"]!.description;
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it("has committed the document and the generated client types as they are generated now (run npm run openapi)", async () => {
    const fresh = await openApiFiles();
    for (const [name, file] of Object.entries(OPENAPI_FILES)) {
      expect(readFileSync(path.join(ROOT, file), "utf8"), `${file} is stale: run npm run openapi`).toBe(fresh[name as keyof typeof fresh]);
    }
  });
});
