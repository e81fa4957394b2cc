import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ucpSchemas } from "../../test/node/ucp-schemas";

/**
 * The checkout tools' answers on the Storefront MCP (workers/storefront/storefront-mcp-ucp.ts), as the Worker
 * sent them (test/fixtures/ucp/recorded/mcp-checkout-tools.json, recorded from the flows of
 * storefront-mcp-ucp.test.ts, which checks that live answers still have the recorded shape), against the
 * specification's own schemas: each request and answer is the MCP tool-call envelope; a result's
 * structuredContent is the checkout with the fulfillment and discount extensions, or the protocol's error
 * response, and its text the same JSON; an error is JSON-RPC's with the binding's codes and `{code, content}`.
 */
type Json = Record<string, any>;
const ajv = ucpSchemas();
const recorded = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../test/fixtures/ucp/recorded/mcp-checkout-tools.json"), "utf8")) as { calls: Json[] };
const CHECKOUT = ["shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout", "shopping/discount.json#/$defs/dev.ucp.shopping.checkout"];

function expectValid(value: unknown, id: string, note: string) {
  const validate = ajv.getSchema(`https://ucp.dev/schemas/${id}`)!;
  expect(validate(value), `${note}: ${id}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe("UCP checkout tools over MCP, as recorded, against the specification's schemas", () => {
  it("covers every tool, every status a checkout takes, not_found and the binding's errors", () => {
    const tools = new Set(recorded.calls.map((c) => c.request.params.name));
    expect([...tools].sort()).toEqual(["cancel_checkout", "complete_checkout", "create_checkout", "get_checkout", "update_checkout"]);
    const statuses = recorded.calls.flatMap((c) => (c.response.result?.structuredContent?.status ? [c.response.result.structuredContent.status] : []));
    expect(new Set(statuses)).toEqual(new Set(["incomplete", "ready_for_complete", "requires_escalation", "completed", "canceled"]));
    const errors = recorded.calls.flatMap((c) => (c.response.error ? [c.response.error.data.code] : []));
    expect(errors).toEqual(expect.arrayContaining(["invalid_profile_url", "invalid_request", "idempotency_conflict", "invalid_state", "password_protected"]));
  });

  it.each(recorded.calls.map((c) => [c.note, c] as const))("%s", (note, c) => {
    expectValid(c.request, "transports/mcp_tool_call.json", note);
    expectValid(c.response, "transports/mcp_tool_call.json", note);
    expect(c.response.id).toBe(c.request.id);
    if (c.response.error) {
      expectValid(c.response, "transports/jsonrpc.json", note);
      expect(c.status).toBeGreaterThanOrEqual(400);
      expect([-32000, -32001, -32600, -32602]).toContain(c.response.error.code);
      expect(c.response.error.data).toEqual({ code: expect.any(String), content: expect.any(String) });
      return;
    }
    expect(c.status).toBe(200);
    const answer = c.response.result.structuredContent as Json;
    expect(JSON.parse(c.response.result.content[0].text)).toEqual(answer);
    if (answer["ucp"]["status"] === "error") expectValid(answer, "common/types/error_response.json", note);
    else for (const id of CHECKOUT) expectValid(answer, id, note);
  });

  it("the schemas can refuse: a checkout without its status, an error without its code", () => {
    const ok = recorded.calls.find((c) => c.response.result?.structuredContent?.status === "requires_escalation")!;
    const validate = ajv.getSchema(`https://ucp.dev/schemas/${CHECKOUT[0]}`)!;
    expect(validate({ ...ok.response.result.structuredContent, status: undefined })).toBe(false);
    const envelope = ajv.getSchema("https://ucp.dev/schemas/transports/jsonrpc.json")!;
    expect(envelope({ jsonrpc: "2.0", id: 1, error: { message: "no code" } })).toBe(false);
  });
});
