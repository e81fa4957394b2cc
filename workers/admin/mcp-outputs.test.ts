import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { toolOutput, toolText } from "#shared/assistant/mcp";
import { TOOLS, type Tool } from "#shared/assistant/tools";
import { listAutomations } from "#shared/procedures/marketing";
import { rpc } from "../../test/admin";
import { testDb } from "../../test/harness";
import { connectMcpClient, toolResult, type ConnectedClient } from "../../test/oauth";

const db = testDb();

type Listed = Awaited<ReturnType<ConnectedClient["client"]["listTools"]>>["tools"][number];
type Called = { content: unknown; structuredContent?: Record<string, unknown>; isError?: boolean };

/** The tool's answer checked against the outputSchema it was listed with, by the SDK's own JSON Schema validator. */
function validates(tool: Listed | undefined, res: Called): void {
  expect(tool?.outputSchema, `${tool?.name} lists an outputSchema`).toMatchObject({ type: "object" });
  const check = new AjvJsonSchemaValidator().getValidator(tool!.outputSchema!);
  expect(check({}).valid, `${tool!.name}'s outputSchema refuses an empty answer`).toBe(false);
  const verdict = check(res.structuredContent);
  expect(verdict.errorMessage, tool!.name).toBeUndefined();
  expect(verdict.valid).toBe(true);
  // The text content stays the same JSON, for clients that read only text.
  expect(res.structuredContent).toEqual(toolResult(res));
}

describe("MCP tools' outputSchema and structuredContent", () => {
  it("every tool lists an object outputSchema; a read tool's answer carries structuredContent that validates against it", async () => {
    const { client } = await connectMcpClient(db, { areas: ["products:read", "orders:read", "inventory:read", "analytics:read"] });
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(4);
    for (const t of tools) expect(t.outputSchema, t.name).toMatchObject({ type: "object" });
    const find = (name: string) => tools.find((t) => t.name === name);
    const products = (await client.callTool({ name: "listProducts", arguments: {} })) as Called;
    validates(find("listProducts"), products);
    const id = (products.structuredContent!["items"] as { id: string }[])[0]!.id;
    const product = (await client.callTool({ name: "getProduct", arguments: { id } })) as Called;
    validates(find("getProduct"), product);
    // Instants are ISO 8601 text in both.
    expect(product.structuredContent!["updatedAt"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    validates(find("inventoryLevels"), (await client.callTool({ name: "inventoryLevels", arguments: {} })) as Called);
    validates(find("salesSummary"), (await client.callTool({ name: "salesSummary", arguments: { from: "2026-01-01", to: "2026-01-31" } })) as Called);
  });

  it("a change tool answers its proposal as structuredContent, pending and approved at once alike; an error has none", async () => {
    const { client, browser } = await connectMcpClient(db, { areas: ["products:write"] });
    await rpc(browser, "store/update", { mcpAllowChanges: true });
    const { tools } = await client.listTools();
    const update = tools.find((t) => t.name === "updateProduct");
    expect(update?.outputSchema).toMatchObject({ type: "object", required: expect.arrayContaining(["approvalId", "status", "summary", "diff"]) });
    const id = ((await client.callTool({ name: "listProducts", arguments: {} })) as Called).structuredContent!["items"] as { id: string }[];
    const pending = (await client.callTool({ name: "updateProduct", arguments: { id: id[0]!.id, title: "Proposed" } })) as Called;
    validates(update, pending);
    expect(pending.structuredContent).toMatchObject({ status: "pending", diff: [{ kind: "value", field: "title", to: "Proposed" }] });

    await rpc(browser, "store/update", { mcpChangesNeedApproval: false });
    const approved = (await client.callTool({ name: "updateProduct", arguments: { id: id[0]!.id, title: "Straight through" } })) as Called;
    validates(update, approved);
    expect(approved.structuredContent).toMatchObject({ status: "approved", result: { title: "Straight through" } });
    // The approved change's result is described as the procedure's own output (products.update: the product).
    const result = (update!.outputSchema as { properties: Record<string, { required?: string[] }> }).properties["result"];
    expect(result?.required).toEqual(expect.arrayContaining(["id", "title", "variants", "updatedAt"]));

    const refused = (await client.callTool({ name: "updateProduct", arguments: { id: crypto.randomUUID(), title: "Nobody" } })) as Called;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toBeUndefined();
  });

  it("every tool's outputSchema converts to a JSON Schema object (the SDK lists it so)", () => {
    for (const t of TOOLS) expect(z.toJSONSchema(toolOutput(t).schema, { io: "output" }), t.name).toMatchObject({ type: "object" });
  });

  it("an answer that is not an object (a list) is wrapped as { result }, in the schema and the answer", () => {
    const tool: Tool = { kind: "read", name: "listAutomations", description: "", procedure: listAutomations };
    const { schema, wrapped } = toolOutput(tool);
    expect(wrapped).toBe(true);
    const answer = toolText([{ kind: "abandoned_checkout" }], false, tool);
    expect(answer.structuredContent).toEqual({ result: [{ kind: "abandoned_checkout" }] });
    expect(schema.shape).toHaveProperty("result");
  });
});
