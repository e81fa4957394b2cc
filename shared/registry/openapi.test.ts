import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_STATUS } from "../core/errors";
import { procedureKey } from "../procedures/define";
import { componentSchemas, jsonSchemaOptions, openApiDocument, operationId, requiredArea, schemaName, tokenProcedures } from "./openapi";
import { PROCEDURES } from "./procedures";

const doc = openApiDocument("https://admin.example.test");
type Json = Record<string, unknown>;

/** The value a local `$ref` points at, or undefined. */
function resolve(pointer: string): unknown {
  return pointer
    .slice(2)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((at, key) => (at && typeof at === "object" ? (at as Json)[key] : undefined), doc);
}

function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsOf(v, out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) k === "$ref" && typeof v === "string" ? out.push(v) : refsOf(v, out);
  return out;
}

describe("the token API's OpenAPI document", () => {
  // Validation against the official OpenAPI 3.1 schema runs in Node (the validator reads its schemas from
  // disk): scripts/openapi.test.ts.
  it("has every $ref resolving inside the document", () => {
    const dangling = refsOf(doc).filter((r) => !r.startsWith("#/") || resolve(r) === undefined);
    expect(dangling).toEqual([]);
  });

  it("has one POST per procedure a token may call, and none of the session, member-only or reserved ones", () => {
    const callable = tokenProcedures();
    expect(Object.keys(doc.paths).sort()).toEqual(callable.map((p) => `/api/v1/${p.router}/${p.name}`).sort());
    for (const key of ["products.list", "products.create", "inventory.adjust", "orders.list"]) expect(callable.map(procedureKey)).toContain(key);
    for (const p of PROCEDURES.filter((p) => !callable.includes(p as never))) {
      expect(doc.paths, `${procedureKey(p)} (${p.access}) must not be listed`).not.toHaveProperty([`/api/v1/${p.router}/${p.name}`]);
    }
    const absent = PROCEDURES.filter((p) => p.access === "session" || p.access === "none" || p.access === "orders.refund").map(procedureKey);
    expect(absent).toEqual(expect.arrayContaining(["store.switch", "staff.me", "orders.refund"]));
  });

  it("states each operation's id, area, security and the errors of the closed set", () => {
    const list = doc.paths["/api/v1/products/list"]!.post;
    expect(list).toMatchObject({ operationId: "products_list", tags: ["products"], "x-required-area": "products:read", security: [{ bearer: [] }] });
    expect(Object.keys(list.responses).sort()).toEqual(["200", "400", "401", "403", "404", "413", "415", "429", "500", "503"]);
    expect(list).not.toHaveProperty("parameters");
    const create = doc.paths["/api/v1/products/create"]!.post;
    expect(create).toMatchObject({ "x-required-area": "products:write", parameters: [{ $ref: "#/components/parameters/Idempotency-Key" }] });
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["200", "202", "409", "422"]));
    expect(resolve(create.responses["422"]!.$ref)).toMatchObject({ description: expect.stringContaining("idempotency_key_reused") });
    expect(resolve(create.responses["409"]!.$ref)).toMatchObject({ description: expect.stringContaining("idempotency_key_in_use") });
    expect(create.responses["200"]).toMatchObject({ headers: { "Idempotent-Replayed": {}, RateLimit: {}, "RateLimit-Policy": {} } });
    expect(resolve("#/components/responses/TOO_MANY_REQUESTS")).toMatchObject({ headers: { "Retry-After": {}, RateLimit: {}, "RateLimit-Policy": {} } });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    for (const [status, response] of Object.entries(create.responses).filter(([status]) => Number(status) >= 400)) {
      const named = resolve((response as { $ref: string }).$ref) as { content: { "application/json": { schema: { allOf: [unknown, { properties: { json: { properties: { code: { const: string } } } } }] } } } };
      const narrowed = named.content["application/json"].schema.allOf[1].properties.json.properties.code.const;
      expect(ERROR_STATUS[narrowed as keyof typeof ERROR_STATUS], `${status} → ${narrowed}`).toBe(Number(status));
    }
    const code = (resolve("#/components/schemas/Error/properties/json/properties/code") as { enum: string[] }).enum;
    expect(code).toContain("UNPROCESSABLE_CONTENT");
    expect(code).toEqual(Object.keys(ERROR_STATUS));
    for (const p of tokenProcedures()) expect(doc.paths[`/api/v1/${p.router}/${p.name}` as "/api/v1/products/list"]!.post["x-required-area"]).toBe(requiredArea(p));
  });

  it("carries each request and answer as zod's own JSON Schema of the procedure", () => {
    for (const p of tokenProcedures()) {
      const op = doc.paths[`/api/v1/${p.router}/${p.name}` as "/api/v1/products/list"]!.post;
      expect(op.operationId).toBe(operationId(p));
      const body = op.requestBody.content["application/json"].schema as { properties: { json: { $ref: string } } };
      expect(body.properties.json.$ref).toBe(`#/components/schemas/${schemaName(p, "input")}`);
      const input = componentSchemas(schemaName(p, "input"), z.toJSONSchema(p.input, jsonSchemaOptions("input")) as Json);
      for (const [name, schema] of Object.entries(input)) expect(doc.components.schemas[name as "Error"], name).toEqual(schema);
      const ok = op.responses["200"].content["application/json"].schema as { properties: { json: { $ref: string } } };
      expect(ok.properties.json.$ref).toBe(`#/components/schemas/${schemaName(p, "output")}`);
      const output = componentSchemas(schemaName(p, "output"), z.toJSONSchema(p.output, jsonSchemaOptions("output")) as Json);
      for (const [name, schema] of Object.entries(output)) expect(doc.components.schemas[name as "Error"], name).toEqual(schema);
    }
  });

  it("hoists a recursive schema's $defs beside it, refs rewritten", () => {
    interface Node { name: string; children: Node[] }
    const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(node) }));
    const out = componentSchemas("tree", z.toJSONSchema(z.object({ root: node }), jsonSchemaOptions("input")) as Json);
    const text = JSON.stringify(out);
    expect(text).not.toContain("#/$defs/");
    expect(text).not.toContain("$schema");
    for (const r of refsOf(out)) expect(Object.keys(out)).toContain(r.replace("#/components/schemas/", ""));
  });
});
