import type { ChatMessage, ChatModel, ToolCall, ToolSpec, Usage } from "../model/protocol";
import type { ToolAnswer } from "./assistant-calls";
import { MAX_TOOL_CALLS_PER_TURN, toolCapReached } from "./turn";

/**
 * One turn's loop over the chat-model protocol (issue 24): the model answers, its tool calls run (each
 * through the assistant door, `callTool`), their results go back as tool messages, until the model answers
 * in words or the turn's tool calls run out (MAX_TOOL_CALLS_PER_TURN: then it is told to answer with what it
 * has, and a call past the cap is not run). Each model call's usage is reported as it comes, so the runtime
 * records it even when a later call fails. The loop holds no state of its own: the runtime keeps the
 * conversation and decides where the words go (a stream, a stored message).
 */
export interface LoopPorts {
  /** One model call with the conversation so far and the tools offered. */
  model: ChatModel;
  /** One tool call, through the assistant door. */
  callTool: (name: string, args: unknown) => Promise<ToolAnswer>;
  /** After each model call (for the usage record). */
  onModelCall?: (usage: Usage) => Promise<void> | void;
  /** Each tool call and its answer (for the cards). */
  onTool?: (call: ToolCall, answer: ToolAnswer) => Promise<void> | void;
  /** The model's words as they are written (an adapter that streams hands them on; the others do not call it). */
  onText?: (delta: string) => void;
}

export interface LoopResult {
  /** The messages the turn added, in order: the assistant's tool calls, the tool results, the final answer. */
  added: ChatMessage[];
  /** The final answer in words. */
  answer: string;
  toolCalls: number;
}

/** Arguments as the model wrote them: JSON, or the text as is (the tool's input schema then refuses it with its words). */
function argumentsOf(call: ToolCall): unknown {
  try {
    return JSON.parse(call.function.arguments) as unknown;
  } catch {
    return call.function.arguments;
  }
}

export async function runTurnLoop(history: readonly ChatMessage[], tools: readonly ToolSpec[], ports: LoopPorts): Promise<LoopResult> {
  const added: ChatMessage[] = [];
  let toolCalls = 0;
  // One more model call than tool-call rounds at most: the last is told to answer in words.
  for (let round = 0; round <= MAX_TOOL_CALLS_PER_TURN; round++) {
    const capped = toolCalls >= MAX_TOOL_CALLS_PER_TURN;
    const messages = capped ? [...history, ...added, { role: "system" as const, content: toolCapReached }] : [...history, ...added];
    const { reply, usage } = await ports.model(messages, capped ? [] : tools, ports.onText ? { onText: ports.onText } : undefined);
    await ports.onModelCall?.(usage);
    const calls = reply.tool_calls ?? [];
    if (calls.length === 0 || capped) {
      const answer = reply.content?.trim() || "I have nothing to add.";
      added.push({ role: "assistant", content: answer });
      return { added, answer, toolCalls };
    }
    added.push({ role: "assistant", content: reply.content, tool_calls: calls });
    for (const call of calls) {
      const answer: ToolAnswer =
        toolCalls < MAX_TOOL_CALLS_PER_TURN
          ? await ports.callTool(call.function.name, argumentsOf(call))
          : { data: { code: "TOO_MANY_REQUESTS", message: toolCapReached }, isError: true };
      toolCalls++;
      await ports.onTool?.(call, answer);
      added.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(answer.data) });
    }
  }
  // Unreachable: the round after the cap answers in words.
  throw new Error("the turn's loop ended without an answer");
}
