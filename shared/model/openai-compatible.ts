import { z } from "zod";
import { AppError } from "../core/errors";
import { toolCallSchema, type ChatModel, type ModelCall, type Reply } from "./protocol";

/**
 * A chat model behind an OpenAI-compatible chat-completions endpoint (issue 24 item 4): a hosted gateway, or
 * a developer's own server (vLLM, llama.cpp, Ollama, LM Studio) named by MODEL_BASE_URL; the local model
 * answers the same shape (./local.ts localChatFetch). One POST per model call, bounded in time; with `onText`
 * the call is streamed (server-sent chunks): its words are handed on as they arrive, its tool calls gathered
 * from their pieces, and the whole reply answered at the end as without streaming. A failure is an AppError the conversation shows
 * (the provider's status and its own words, never the key); a reply that is not the protocol's shape is one
 * too, so a misbehaving server cannot make the loop act on garbage.
 */
export interface OpenAICompatibleOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** The network (tests and the local model hand their own). */
  fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
  /** How long one model call may take (default 60 s). */
  timeoutMs?: number;
}

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).partial().nullish(),
});

const unavailable = (message: string, data: Record<string, unknown> = {}) =>
  new AppError("SERVICE_UNAVAILABLE", `The assistant's model did not answer: ${message} Try again in a moment; if it keeps failing, check MODEL_BASE_URL and MODEL_NAME.`, {
    reason: "model_unavailable",
    ...data,
  });

export function openAICompatibleModel(options: OpenAICompatibleOptions): ChatModel {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return async (messages, tools, callOptions) => {
    const streamed = Boolean(callOptions?.onText);
    let res: Response;
    try {
      res = await send(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({
          model: options.model,
          messages,
          ...(tools.length ? { tools, tool_choice: "auto" } : {}),
          stream: streamed,
          ...(streamed ? { stream_options: { include_usage: true } } : {}),
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
      });
    } catch (e) {
      const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
      throw unavailable(timedOut ? "it took too long." : "its server could not be reached.");
    }
    if (res.ok && streamed) {
      try {
        return await readStream(res, callOptions!.onText!);
      } catch (e) {
        if (e instanceof AppError) throw e;
        const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
        throw unavailable(timedOut ? "it took too long." : "its answer was not a chat completion.");
      }
    }
    const text = await res.text();
    if (!res.ok) {
      // The provider's own words, shortened: they say what is wrong (a model name, a quota); the key is never in them.
      let said = "";
      try {
        const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
        said = typeof body.error === "string" ? body.error : typeof body.error?.message === "string" ? body.error.message : typeof body.message === "string" ? body.message : "";
      } catch {
        said = "";
      }
      throw unavailable(`its server answered ${res.status}${said ? ` (${said.slice(0, 200)})` : ""}.`, { status: res.status });
    }
    let parsed: z.infer<typeof completionSchema>;
    try {
      parsed = completionSchema.parse(JSON.parse(text));
    } catch {
      throw unavailable("its answer was not a chat completion.");
    }
    const message = parsed.choices[0]!.message;
    const reply: Reply = { content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) };
    const prompt = parsed.usage?.prompt_tokens ?? 0;
    const completion = parsed.usage?.completion_tokens ?? 0;
    return { reply, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
  };
}

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(z.object({ index: z.number().int().min(0).max(127), id: z.string().nullish(), function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).partial().nullish() }))
              .nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).partial().nullish(),
});

/** A streamed completion (`data: {chunk}` events, ending `data: [DONE]`): words handed on, tool calls gathered by index. */
async function readStream(res: Response, onText: (delta: string) => void): Promise<ModelCall> {
  if (!res.body) throw unavailable("its answer was not a chat completion.");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let content = "";
  let done = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const usage = { prompt: 0, completion: 0 };
  const take = (event: string) => {
    const data = event
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (!data) return;
    if (data === "[DONE]") {
      done = true;
      return;
    }
    const chunk = chunkSchema.parse(JSON.parse(data));
    if (chunk.usage) {
      usage.prompt = chunk.usage.prompt_tokens ?? usage.prompt;
      usage.completion = chunk.usage.completion_tokens ?? usage.completion;
    }
    const delta = chunk.choices?.[0]?.delta;
    if (delta?.content) {
      content += delta.content;
      onText(delta.content);
    }
    for (const part of delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name = part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(part.index, call);
    }
  };
  while (!done) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    buffer += value;
    let at: number;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      take(buffer.slice(0, at));
      buffer = buffer.slice(at + 2);
    }
  }
  if (buffer.trim()) take(buffer);
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => toolCallSchema.parse({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  const reply: Reply = { content: content || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
  return { reply, usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion } };
}
