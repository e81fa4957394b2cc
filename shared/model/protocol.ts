import { z } from "zod";

/**
 * The chat-model protocol every model adapter speaks (issue 24 item 4): the OpenAI chat-completions shape
 * with function tools, the one Workers AI's function-calling models, OpenAI-compatible servers (vLLM,
 * llama.cpp, Ollama, LM Studio, hosted gateways) and the local model share. Only the fields the assistant
 * uses are named; a server's extra fields pass through untouched.
 */

export const toolCallSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1).max(64), arguments: z.string().max(100_000) }),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

export const chatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({ role: z.literal("assistant"), content: z.string().nullable(), tool_calls: z.array(toolCallSchema).optional() }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string().min(1).max(200), content: z.string() }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const toolSpecSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1).max(64), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});
export type ToolSpec = z.infer<typeof toolSpecSchema>;

export const chatRequestSchema = z.object({
  model: z.string().min(1).max(200),
  messages: z.array(chatMessageSchema).min(1).max(500),
  tools: z.array(toolSpecSchema).max(128).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
  max_tokens: z.number().int().positive().optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The assistant's turn: text, or tool calls for the caller to run and answer with `tool` messages. */
export interface Reply {
  content: string | null;
  tool_calls?: ToolCall[];
}

/** One model call's answer and what it cost. */
export interface ModelCall {
  reply: Reply;
  usage: Usage;
}

/**
 * The model port: one call with the conversation so far and the tools offered. With `onText`, an adapter that
 * can streams the reply and hands each piece of its words on as it arrives (the reply still comes whole at the
 * end, with any tool calls); one that cannot simply answers.
 */
export type ChatModel = (messages: readonly ChatMessage[], tools: readonly ToolSpec[], options?: { onText?: (delta: string) => void }) => Promise<ModelCall>;

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: { index: 0; message: { role: "assistant" } & Reply; finish_reason: "stop" | "tool_calls" }[];
  usage: Usage;
}

/** One server-sent chunk of a streamed completion (`data: {...}`), ended by `data: [DONE]`. */
export interface ChatChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: {
    index: 0;
    delta: { role?: "assistant"; content?: string; tool_calls?: ({ index: number } & Partial<ToolCall>)[] };
    finish_reason: "stop" | "tool_calls" | null;
  }[];
  usage?: Usage;
}
