import { DurableObject } from "cloudflare:workers";
import { converse, type ToolEvent, type Transcript, type TranscriptEntry } from "#shared/assistant/conversation";
import { baseEnvSchema, parseEnv } from "#shared/core/env";
import { isAppError } from "#shared/core/errors";
import { createLogger, errorFields } from "#shared/core/log";
import { Database } from "#shared/db/database";
import type { ChatMessage } from "#shared/model/protocol";
import { chatModelFor, modelSettingsFromEnv } from "#shared/model/select";
import type { AiBinding } from "#shared/model/workers-ai";
import { countAssistantMessage } from "#shared/limits/limit";
import type { Principal } from "#shared/pipeline/principal";
import type { RateLimiter } from "#shared/limits/rate-limiter";

/** What the object reads of the admin's bindings (its own type, so the admin's env can name this class). */
type ConversationEnv = { RATE_LIMITER: DurableObjectNamespace<RateLimiter>; AI?: AiBinding } & Record<string, unknown>;

/**
 * One conversation of a member with the store's assistant (issue 24 item 6): a Durable Object per
 * conversation, named `<storeId>:<conversationId>`, holding its transcript in its own SQLite and running one
 * turn at a time (shared/assistant/conversation.ts does the turn; this object keeps the messages and the
 * bindings). The admin's routes call it after the member's session is checked and the conversation found to be
 * theirs; each turn checks the member again in its own first unit. A turn's refusal comes back as a value
 * (RPC keeps only an error's message), the door shows it in the conversation.
 */
export type SendResult = { ok: true; answer: string; cards: ToolEvent[] } | { ok: false; code: string; message: string; data?: Record<string, unknown> };

export const conversationObjectName = (storeId: string, conversationId: string) => `${storeId}:${conversationId}`;

/**
 * The conversation's object, as the admin calls it (typed here once: RPC's types cannot carry the tool
 * results' `unknown` data, which are JSON at run time).
 */
export function conversationObject(ns: DurableObjectNamespace<AssistantConversation>, storeId: string, conversationId: string) {
  const stub = ns.get(ns.idFromName(conversationObjectName(storeId, conversationId))) as unknown as {
    send(input: { principal: Principal; conversationId: string; text: string }): Promise<SendResult>;
    stream(input: { principal: Principal; conversationId: string; text: string }): Promise<ReadableStream<Uint8Array>>;
    transcript(): Promise<TranscriptEntry[]>;
    clear(): Promise<void>;
  };
  return {
    send: (principal: Principal, text: string) => stub.send({ principal, conversationId, text }),
    stream: (principal: Principal, text: string) => stub.stream({ principal, conversationId, text }),
    transcript: () => stub.transcript(),
    clear: () => stub.clear(),
  };
}

export class AssistantConversation extends DurableObject<ConversationEnv> {
  #busy = false;

  constructor(ctx: DurableObjectState, env: ConversationEnv) {
    super(ctx, env);
    this.#schema();
  }

  #schema(): void {
    this.ctx.storage.sql.exec("create table if not exists entry (seq integer primary key autoincrement, message text not null, card text)");
  }

  #store(): Transcript {
    const sql = this.ctx.storage.sql;
    return {
      read: () =>
        sql
          .exec<{ message: string; card: string | null }>("select message, card from entry order by seq")
          .toArray()
          .map((row) => ({ message: JSON.parse(row.message) as ChatMessage, ...(row.card ? { card: JSON.parse(row.card) as ToolEvent } : {}) })),
      append: (entries) => {
        for (const e of entries) sql.exec("insert into entry (message, card) values (?, ?)", JSON.stringify(e.message), e.card ? JSON.stringify(e.card) : null);
      },
    };
  }

  /** The conversation so far, oldest first. */
  transcript(): TranscriptEntry[] {
    return this.#store().read();
  }

  /** One message of the member, answered; one turn at a time. */
  async send(input: { principal: Principal; conversationId: string; text: string }): Promise<SendResult> {
    return this.#turn(input);
  }

  /**
   * The same turn, its words streamed as they are written: server-sent events `text` (a piece of the answer),
   * then `done` (the whole answer) or `error` (the refusal's code and words).
   */
  async stream(input: { principal: Principal; conversationId: string; text: string }): Promise<ReadableStream<Uint8Array>> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const event = (name: string, data: unknown) => writer.write(encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)).catch(() => undefined);
    void this.#turn(input, (delta) => void event("text", delta)).then(async (result) => {
      await (result.ok ? event("done", { answer: result.answer }) : event("error", { code: result.code, message: result.message }));
      await writer.close().catch(() => undefined);
    });
    return readable;
  }

  async #turn(input: { principal: Principal; conversationId: string; text: string }, onText?: (delta: string) => void): Promise<SendResult> {
    if (this.#busy) return { ok: false, code: "CONFLICT", message: "The assistant is still answering your last message here. Wait for its answer, then ask again." };
    this.#busy = true;
    const config = parseEnv(baseEnvSchema, this.env);
    const log = createLogger({ service: "admin", component: "assistant" }, config.LOG_LEVEL);
    const db = new Database({ url: config.DATABASE_URL, wsProxy: config.DB_WS_PROXY, connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS });
    try {
      let settings: ReturnType<typeof modelSettingsFromEnv>;
      try {
        settings = modelSettingsFromEnv(this.env);
      } catch (e) {
        log.error("assistant.model_not_configured", errorFields(e));
        return { ok: false, code: "SERVICE_UNAVAILABLE", message: "The store's assistant is not set up on this deployment yet: its operator chooses its model (MODEL_PROVIDER, docs/assistant.md)." };
      }
      const ai = this.env.AI;
      const done = await converse(
        {
          db,
          principal: input.principal,
          log,
          model: (local) => chatModelFor(settings, { ai, local }),
          countMessage: (storeId, userId) => countAssistantMessage(this.env.RATE_LIMITER, storeId, userId),
          ...(onText ? { onText } : {}),
        },
        input.conversationId,
        input.text,
        this.#store(),
      );
      return { ok: true, ...done };
    } catch (e) {
      if (isAppError(e)) return { ok: false, code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) };
      log.error("assistant.turn_failed", errorFields(e));
      return { ok: false, code: "INTERNAL", message: "Something went wrong on our side; nothing was changed. Try again in a moment." };
    } finally {
      this.#busy = false;
      await db.close();
    }
  }

  /** Forgets the conversation (its row was deleted). */
  async clear(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.#schema();
  }
}
