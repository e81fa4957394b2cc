import { describe, expect, it } from "vitest";
import { localReply, type LocalContext } from "../model/local";
import type { ChatMessage } from "../model/protocol";
import { TOOLS } from "./tools";

const CONTEXT: LocalContext = { today: "2026-11-26", utcOffset: "+05:30", currency: "INR" };
const ID = () => crypto.randomUUID();

/** Every tool call the local model makes for `message`, each answered by `answer`, with the tools MCP lists. */
function callsFor(message: string, answer: (name: string) => unknown) {
  const tools = TOOLS.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: {} } }));
  const messages: ChatMessage[] = [{ role: "user", content: message }];
  const calls: { name: string; args: unknown }[] = [];
  for (let turn = 0; turn < 8; turn++) {
    const reply = localReply({ messages, tools }, CONTEXT);
    messages.push({ role: "assistant", content: reply.content, ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) });
    if (!reply.tool_calls) return calls;
    for (const call of reply.tool_calls) {
      calls.push({ name: call.function.name, args: JSON.parse(call.function.arguments) });
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(answer(call.function.name)) });
    }
  }
  return calls;
}

describe("the local model against the assistant's real tools", () => {
  it("every call it makes names a tool MCP lists, with arguments that tool's own input schema accepts", () => {
    const product = ID();
    const order = ID();
    const answers: Record<string, unknown> = {
      listProducts: { items: [{ id: product, title: "Cotton Kurta", priceMinMinor: 100, priceMaxMinor: 100 }], total: 1 },
      getProduct: { id: product, title: "Cotton Kurta", variants: [{ id: ID() }, { id: ID() }] },
      listOrders: { items: [{ id: order, number: 1002 }], total: 1 },
      inventoryLevels: { items: [{ variantId: ID(), locationId: ID(), sku: "KURTA-M" }], total: 1 },
    };
    const requests = ["list products", "find silk", "show order #1002", "what sold today?", "change the price of Cotton Kurta to ₹899", "add 5 units of KURTA-M", "create code DIWALI10 for 10% off", "create code FLAT100 for ₹100 off"];
    const made = requests.flatMap((r) => callsFor(r, (name) => answers[name] ?? { approvalId: ID(), status: "pending", summary: "s" }));
    expect(new Set(made.map((c) => c.name))).toEqual(new Set(["listProducts", "getProduct", "updateProduct", "listOrders", "getOrder", "salesSummary", "inventoryLevels", "adjustInventory", "createDiscount"]));
    for (const call of made) {
      const tool = TOOLS.find((t) => t.name === call.name);
      expect(tool, call.name).toBeDefined();
      const parsed = tool!.procedure.input.safeParse(call.args);
      expect(parsed.success ? "ok" : `${call.name}: ${JSON.stringify(parsed.error.issues)}`).toBe("ok");
    }
  });
});
