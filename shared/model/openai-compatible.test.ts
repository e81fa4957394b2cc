import { describe, expect, it } from "vitest";
import { isAppError } from "../core/errors";
import { localChatFetch, LOCAL_MODEL } from "./local";
import { openAICompatibleModel } from "./openai-compatible";

const CONTEXT = { today: "2026-11-26", utcOffset: "+05:30", currency: "INR" };
const TOOLS = [{ type: "function" as const, function: { name: "listProducts", parameters: { type: "object" } } }];

/** A server answering every request with `res`, recording what it was sent. */
function server(res: () => Response | Promise<Response>) {
  const sent: Request[] = [];
  return {
    sent,
    fetch: async (input: Request | string | URL, init?: RequestInit) => {
      sent.push(input instanceof Request ? input : new Request(input, init));
      return res();
    },
  };
}

const failure = (p: Promise<unknown>) => p.then(() => "ok", (e: unknown) => (isAppError(e) ? `${e.code} ${e.message}` : String(e)));

describe("a model behind an OpenAI-compatible endpoint", () => {
  it("speaks the protocol end to end: against the local model's own server it gets tool calls, then words, with usage", async () => {
    const model = openAICompatibleModel({ baseUrl: "http://model.local/v1/", model: LOCAL_MODEL, fetch: localChatFetch(() => CONTEXT) });
    const first = await model([{ role: "user", content: "list products" }], TOOLS);
    expect(first.reply.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "listProducts", arguments: "{}" } }]);
    expect(first.usage.total_tokens).toBeGreaterThan(0);
    const second = await model(
      [
        { role: "user", content: "list products" },
        { role: "assistant", content: null, tool_calls: first.reply.tool_calls! },
        { role: "tool", tool_call_id: "call_1", content: JSON.stringify({ items: [{ title: "Cotton Kurta", status: "active", priceMinMinor: 100, priceMaxMinor: 100 }], total: 1 }) },
      ],
      TOOLS,
    );
    expect(second.reply.content).toBe("One product: Cotton Kurta (₹1.00, active).");
  });

  it("sends the model, the messages, the tools and the key as a bearer token to <base>/chat/completions", async () => {
    const s = server(() => Response.json({ choices: [{ message: { content: "hi" } }] }));
    const model = openAICompatibleModel({ baseUrl: "https://gw.example.com/v1", apiKey: "sk-test", model: "m-1", fetch: s.fetch });
    expect((await model([{ role: "user", content: "hello" }], TOOLS)).reply).toEqual({ content: "hi" });
    const [req] = s.sent;
    expect(req!.url).toBe("https://gw.example.com/v1/chat/completions");
    expect(req!.headers.get("authorization")).toBe("Bearer sk-test");
    expect(await req!.json()).toMatchObject({ model: "m-1", messages: [{ role: "user", content: "hello" }], tools: TOOLS, stream: false });
  });

  it("a failing, unreachable or misbehaving server is a clear 503 with what to check, never the key", async () => {
    const said = await failure(openAICompatibleModel({ baseUrl: "https://gw.example.com/v1", apiKey: "sk-secret", model: "m", fetch: server(() => Response.json({ error: { message: "model m not found" } }, { status: 404 })).fetch })([{ role: "user", content: "x" }], []));
    expect(said).toBe("SERVICE_UNAVAILABLE The assistant's model did not answer: its server answered 404 (model m not found). Try again in a moment; if it keeps failing, check MODEL_BASE_URL and MODEL_NAME.");
    expect(said).not.toContain("sk-secret");
    const down = openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", fetch: () => Promise.reject(new TypeError("fetch failed")) });
    expect(await failure(down([{ role: "user", content: "x" }], []))).toMatch(/could not be reached/);
    const garbage = openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", fetch: server(() => new Response("<html>oops</html>")).fetch });
    expect(await failure(garbage([{ role: "user", content: "x" }], []))).toMatch(/was not a chat completion/);
    const badCalls = openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", fetch: server(() => Response.json({ choices: [{ message: { tool_calls: [{ id: "", type: "function" }] } }] })).fetch });
    expect(await failure(badCalls([{ role: "user", content: "x" }], []))).toMatch(/was not a chat completion/);
    const slow = openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", timeoutMs: 50, fetch: (_i, init) => new Promise((_r, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))) });
    expect(await failure(slow([{ role: "user", content: "x" }], []))).toMatch(/took too long/);
  });
});

describe("a streamed model call", () => {
  it("hands the words on as they arrive from the local model's own server, and answers the whole reply with usage", async () => {
    const model = openAICompatibleModel({ baseUrl: "http://model.local/v1", model: LOCAL_MODEL, fetch: localChatFetch(() => CONTEXT) });
    const pieces: string[] = [];
    const { reply, usage } = await model([{ role: "user", content: "hello" }], TOOLS, { onText: (d) => pieces.push(d) });
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join("")).toBe(reply.content);
    expect(reply.content).toMatch(/^I'm the local development model/);
    expect(usage.total_tokens).toBeGreaterThan(0);
    const called = await model([{ role: "user", content: "list products" }], TOOLS, { onText: () => undefined });
    expect(called.reply.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "listProducts", arguments: "{}" } }]);
  });

  it("gathers a tool call sent in pieces, and refuses a stream that is not chat chunks", async () => {
    const sse = (...events: unknown[]) => () => new Response(events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
    const pieces = server(
      sse(
        { choices: [{ delta: { role: "assistant", content: "Looking" } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "listProducts", arguments: '{"que' } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'ry":"silk"}' } }] } }] },
        { choices: [], usage: { prompt_tokens: 10, completion_tokens: 4 } },
        "[DONE]",
      ),
    );
    const text: string[] = [];
    const { reply, usage } = await openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", fetch: pieces.fetch })([{ role: "user", content: "x" }], TOOLS, { onText: (d) => text.push(d) });
    expect(text).toEqual(["Looking"]);
    expect(reply).toEqual({ content: "Looking", tool_calls: [{ id: "c1", type: "function", function: { name: "listProducts", arguments: '{"query":"silk"}' } }] });
    expect(usage.total_tokens).toBe(14);
    expect(await pieces.sent[0]!.json()).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const broken = openAICompatibleModel({ baseUrl: "https://gw.example.com", model: "m", fetch: server(sse("{not json")).fetch });
    expect(await failure(broken([{ role: "user", content: "x" }], [], { onText: () => undefined }))).toMatch(/was not a chat completion/);
  });
});
