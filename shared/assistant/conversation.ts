import { errorFields, type Logger } from "../core/log";
import type { Database } from "../db/database";
import type { LocalContext } from "../model/local";
import type { ChatMessage, ChatModel } from "../model/protocol";
import type { Principal } from "../pipeline/principal";
import type { Services } from "../procedures/define";
import { callAssistantTool } from "./assistant-calls";
import { runTurnLoop } from "./loop";
import { openTurn, recordCall } from "./turn";

/**
 * One message of a member to their conversation with the store's assistant, start to end (issue 24): the turn
 * opened (the member, their own conversation, the budget; nothing before), the loop run with the tools they
 * may use, the messages stored in the conversation's transcript (its runtime's storage), the turn's tokens and
 * messages recorded in one unit at the end, also when the model failed part way. The model's instructions are
 * built fresh each turn (the member's role and the store's settings as they are now) and never stored.
 */

/** What a tool call answered, for the member's cards (the model reads the same data in the transcript). */
export interface ToolEvent {
  tool: string;
  output: unknown;
  isError: boolean;
}

/** One stored message, and the card of the tool call it answers. */
export interface TranscriptEntry {
  message: ChatMessage;
  card?: ToolEvent;
}

/** The conversation's storage (a Durable Object's SQLite in the admin). */
export interface Transcript {
  read(): TranscriptEntry[];
  append(entries: readonly TranscriptEntry[]): void;
}

export interface ConverseDeps {
  db: Database;
  principal: Principal;
  log: Logger;
  /** The model port for this turn; `local` is the store's day and currency, for the local model. */
  model: (local: () => LocalContext) => ChatModel;
  /** The model's words as they are written, for a runtime that streams them to the member. */
  onText?: (delta: string) => void;
  /** Counts the member's message before any model call (the per-member limit); throws its refusal. */
  countMessage?: (storeId: string, userId: string) => Promise<unknown>;
  services?: Services;
}

/** The store's day (YYYY-MM-DD) and offset for "today", India's as the admin's. */
export function indiaToday(now = new Date()): Pick<LocalContext, "today" | "utcOffset"> {
  return { today: new Date(now.getTime() + 330 * 60_000).toISOString().slice(0, 10), utcOffset: "+05:30" };
}

export async function converse(deps: ConverseDeps, conversationId: string, text: string, transcript: Transcript): Promise<{ answer: string; cards: ToolEvent[] }> {
  const opened = await openTurn(deps.db, deps.principal, conversationId);
  await deps.countMessage?.(opened.caller.store.id, opened.caller.member.userId);
  const stored = transcript.read().map((e) => e.message);
  const user: ChatMessage = { role: "user", content: text };
  const history: ChatMessage[] = [{ role: "system", content: opened.instructions }, ...stored, user];
  const model = deps.model(() => ({ ...indiaToday(), currency: opened.caller.store.currency }));
  const used = { inputTokens: 0, outputTokens: 0, modelCalls: 0 };
  const cards = new Map<string, ToolEvent>();
  let added: ChatMessage[] = [];
  try {
    const result = await runTurnLoop(history, opened.tools, {
      model,
      callTool: (name, args) => callAssistantTool({ db: deps.db, principal: deps.principal, log: deps.log, ...(deps.services ? { services: deps.services } : {}) }, opened.caller, name, args),
      onModelCall: (usage) => {
        used.inputTokens += usage.prompt_tokens;
        used.outputTokens += usage.completion_tokens;
        used.modelCalls++;
      },
      onTool: (call, answer) => void cards.set(call.id, { tool: call.function.name, output: answer.data, isError: answer.isError }),
      ...(deps.onText ? { onText: deps.onText } : {}),
    });
    added = result.added;
    transcript.append([{ message: user }, ...added.map((message) => ({ message, ...(message.role === "tool" && cards.has(message.tool_call_id) ? { card: cards.get(message.tool_call_id)! } : {}) }))]);
    return { answer: result.answer, cards: [...cards.values()] };
  } finally {
    // What the model used is counted even when a later call failed; the messages only when the turn was stored.
    if (used.modelCalls > 0) {
      await recordCall(deps.db, deps.principal, conversationId, { ...used, messagesAdded: added.length ? added.length + 1 : 0 }).catch((e: unknown) =>
        deps.log.error("assistant.usage_not_recorded", { conversationId, ...used, ...errorFields(e) }),
      );
    }
  }
}
