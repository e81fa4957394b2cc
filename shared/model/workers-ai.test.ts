import { describe, expect, it } from "vitest";
import { isAppError } from "../core/errors";
import { DEFAULT_WORKERS_AI_MODEL, workersAIModel, type AiBinding } from "./workers-ai";

const TOOLS = [{ type: "function" as const, function: { name: "listProducts", parameters: { type: "object" } } }];

/** A binding answering `answer`, recording what it was asked (Workers AI itself is not reachable from tests). */
function binding(answer: unknown | (() => Promise<unknown>)) {
  const asked: { model: string; input: Record<string, unknown> }[] = [];
  const ai: AiBinding = {
    run: (model, input) => {
      asked.push({ model, input });
      return typeof answer === "function" ? (answer as () => Promise<unknown>)() : Promise.resolve(answer);
    },
  };
  return { ai, asked };
}

const failure = (p: Promise<unknown>) => p.then(() => "ok", (e: unknown) => (isAppError(e) ? `${e.code} ${e.message}` : String(e)));

describe("a model on Workers AI through the AI binding", () => {
  it("sends the chat-completions input to the default model and reads a chat completion with tool calls and usage", async () => {
    const { ai, asked } = binding({
      choices: [{ message: { content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "listProducts", arguments: '{"query":"kurta"}' } }] } }],
      usage: { prompt_tokens: 120, completion_tokens: 9 },
    });
    const { reply, usage } = await workersAIModel(ai)([{ role: "user", content: "find kurta" }], TOOLS);
    expect(asked).toEqual([{ model: DEFAULT_WORKERS_AI_MODEL, input: { messages: [{ role: "user", content: "find kurta" }], tools: TOOLS, tool_choice: "auto" } }]);
    expect(reply.tool_calls).toEqual([{ id: "call_a", type: "function", function: { name: "listProducts", arguments: '{"query":"kurta"}' } }]);
    expect(usage).toEqual({ prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 });
  });

  it("reads Workers AI's own shape too: words, or calls given ids and JSON arguments", async () => {
    const words = await workersAIModel(binding({ response: "Two products.", usage: { prompt_tokens: 5, completion_tokens: 3 } }).ai, "@cf/meta/llama-4-scout-17b-16e-instruct")([{ role: "user", content: "x" }], []);
    expect(words.reply).toEqual({ content: "Two products." });
    const calls = await workersAIModel(binding({ tool_calls: [{ name: "listProducts", arguments: { query: "silk" } }, { name: "getProduct", arguments: '{"id":"p"}' }] }).ai)([{ role: "user", content: "x" }], TOOLS);
    expect(calls.reply.tool_calls!.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ["listProducts", '{"query":"silk"}'],
      ["getProduct", '{"id":"p"}'],
    ]);
    expect(new Set(calls.reply.tool_calls!.map((c) => c.id)).size).toBe(2);
    expect(calls.usage.total_tokens).toBe(0);
  });

  it("a refused call or an answer of another shape is a 503 saying what to check", async () => {
    expect(await failure(workersAIModel(binding(() => Promise.reject(new Error("5018: quota exceeded"))).ai)([{ role: "user", content: "x" }], []))).toMatch(
      /^SERVICE_UNAVAILABLE The assistant's model did not answer: Workers AI refused the call \(5018: quota exceeded\)\..*MODEL_NAME/,
    );
    expect(await failure(workersAIModel(binding({ image: "..." }).ai)([{ role: "user", content: "x" }], []))).toMatch(/was not a chat reply/);
    expect(await failure(workersAIModel(binding({ tool_calls: [{ name: "" }] }).ai)([{ role: "user", content: "x" }], []))).toMatch(/was not a chat reply/);
  });
});
