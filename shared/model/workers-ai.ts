import { z } from "zod";
import { AppError } from "../core/errors";
import { toolCallSchema, type ChatModel, type Reply, type ToolCall } from "./protocol";

/**
 * A chat model on Workers AI through the Worker's `AI` binding (issue 24 item 4). The binding takes the
 * chat-completions input (`messages`, `tools`) and, for the models that speak it natively (OpenAI's
 * gpt-oss on Workers AI), answers a chat completion; older function-calling models answer Workers AI's
 * own shape (`response`, `tool_calls` as `{ name, arguments }`, `usage`). Both are read; anything else is a
 * 503 the conversation shows, never acted on. The default model is DEFAULT_WORKERS_AI_MODEL (docs/assistant.md
 * "The model" says why). `wrangler dev` cannot reach the binding offline: development uses the local model.
 */
export const DEFAULT_WORKERS_AI_MODEL = "@cf/openai/gpt-oss-120b";

/** The binding as this adapter uses it (the runtime's `Ai` has more). */
export interface AiBinding {
  run(model: string, input: Record<string, unknown>): Promise<unknown>;
}

const usageSchema = z.object({ prompt_tokens: z.number().nonnegative(), completion_tokens: z.number().nonnegative() }).partial().nullish();

const chatCompletion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullish(), tool_calls: z.array(toolCallSchema).nullish() }) })).min(1),
  usage: usageSchema,
});

const workersAiShape = z.object({
  response: z.string().nullish(),
  tool_calls: z.array(z.object({ name: z.string().min(1).max(64), arguments: z.unknown() })).nullish(),
  usage: usageSchema,
});

const unavailable = (message: string) =>
  new AppError("SERVICE_UNAVAILABLE", `The assistant's model did not answer: ${message} Try again in a moment; if it keeps failing, check MODEL_NAME and the Worker's AI binding.`, {
    reason: "model_unavailable",
  });

export function workersAIModel(ai: AiBinding, model: string = DEFAULT_WORKERS_AI_MODEL): ChatModel {
  return async (messages, tools) => {
    let answer: unknown;
    try {
      answer = await ai.run(model, { messages, ...(tools.length ? { tools, tool_choice: "auto" } : {}) });
    } catch (e) {
      throw unavailable(`Workers AI refused the call (${e instanceof Error ? e.message.slice(0, 200) : "an error"}).`);
    }
    const completion = chatCompletion.safeParse(answer);
    let reply: Reply;
    let usage: z.infer<typeof usageSchema>;
    if (completion.success) {
      const message = completion.data.choices[0]!.message;
      reply = { content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) };
      usage = completion.data.usage;
    } else {
      const own = workersAiShape.safeParse(answer);
      if (!own.success || (own.data.response == null && !own.data.tool_calls?.length)) throw unavailable("its answer was not a chat reply.");
      // Workers AI's own shape names no call ids: each gets one, unique within the reply, for the tool messages to answer.
      const calls: ToolCall[] = (own.data.tool_calls ?? []).map((c, i) => ({
        id: `call_${crypto.randomUUID().slice(0, 8)}_${i}`,
        type: "function",
        function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}) },
      }));
      reply = { content: own.data.response ?? null, ...(calls.length ? { tool_calls: calls } : {}) };
      usage = own.data.usage;
    }
    const prompt = Math.round(usage?.prompt_tokens ?? 0);
    const completionTokens = Math.round(usage?.completion_tokens ?? 0);
    return { reply, usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens } };
  };
}
