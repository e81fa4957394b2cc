import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { AppError } from "../core/errors";
import { ensure } from "../db/changes";
import { plan } from "../db/plan";
import { assistantConversation } from "../db/schema";
import type { Q } from "../db/steps";
import type { Scope } from "../procedures/scope";
import { storeProcedure } from "../procedures/define";
import * as out from "../procedures/outputs";

/**
 * A member's conversations with the store's assistant (issue 24 item 1; migration 0050): each member sees,
 * resumes and deletes only their own, in the store they are working in. Member-only (a token never reaches
 * them: the pipeline refuses `access: "none"` to grants). The rows are the index; a conversation's
 * messages are held by its Durable Object, which the door clears when the row is deleted.
 */

/** The title a conversation gets from its first message: its first line, at most 80 characters, cut at a word. */
export function titleFrom(message: string): string {
  const line = message.trim().split(/\r?\n/, 1)[0]!.replace(/\s+/g, " ").trim();
  if (line.length <= 80) return line || "New conversation";
  const cut = line.slice(0, 80);
  const space = cut.lastIndexOf(" ");
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const notFound = () => new AppError("NOT_FOUND", "Conversation not found: it was deleted, or it is not yours.");

const VIEW = {
  id: assistantConversation.id,
  /** The store, which names the conversation's runtime object. */
  storeId: assistantConversation.storeId,
  title: assistantConversation.title,
  messages: assistantConversation.messages,
  createdAt: assistantConversation.createdAt,
  updatedAt: assistantConversation.updatedAt,
};

/** The caller's own conversation `id` in this store (the row condition). */
const own = (scope: Scope, id: string) => and(eq(assistantConversation.storeId, scope.store), eq(assistantConversation.id, id), eq(assistantConversation.memberId, scope.memberId));

/** A conversation as its procedures answer it (its messages counted; the transcript lives in its Durable Object). */
const conversationOutput = z.object({ id: out.id, storeId: out.id, title: z.string(), messages: z.number().int(), createdAt: out.instant, updatedAt: out.instant });

export const listConversations = storeProcedure({
  router: "assistant",
  name: "conversations",
  description: "Your conversations with the store's assistant in this store, the most recently active first (at most 100): title, how many messages, when started and last active.",
  access: "none",
  mutates: false,
  output: z.object({ items: z.array(conversationOutput) }),
  input: z.strictObject({}),
  read: (q, scope) =>
    plan(
      [
        q
          .select(VIEW)
          .from(assistantConversation)
          .where(and(eq(assistantConversation.storeId, scope.store), eq(assistantConversation.memberId, scope.memberId)))
          .orderBy(desc(assistantConversation.updatedAt), desc(assistantConversation.id))
          .limit(100),
      ] as const,
      ([items]) => ({ items }),
    ),
});

export const getConversation = storeProcedure({
  router: "assistant",
  name: "conversation",
  description: "One of your conversations with the store's assistant: its title, how many messages, when started and last active (its messages are shown on its page).",
  access: "none",
  mutates: false,
  output: conversationOutput,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, scope, input) =>
    plan([q.select(VIEW).from(assistantConversation).where(own(scope, input.id))] as const, ([[row]]) => {
      if (!row) throw notFound();
      return row;
    }),
});

export const startConversation = storeProcedure({
  router: "assistant",
  name: "start",
  description: "Start a conversation with the store's assistant; its title comes from the first message.",
  access: "none",
  mutates: true,
  output: conversationOutput,
  input: z.strictObject({ firstMessage: z.string().trim().min(1, "must say something").max(4000, "must be at most 4,000 characters") }),
  write: {
    apply: (q, scope, input) =>
      plan(
        [q.insert(assistantConversation).values({ storeId: scope.store, memberId: scope.memberId, title: titleFrom(input.firstMessage) }).returning(VIEW)] as const,
        ([[row]]) => row!,
      ),
  },
});

export const deleteConversation = storeProcedure({
  router: "assistant",
  name: "delete",
  description: "Delete one of your conversations with the store's assistant, with its messages.",
  access: "none",
  mutates: true,
  output: z.object({ id: out.id, deleted: z.boolean(), storeId: out.id }),
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply: (q, scope, input) =>
      plan(
        [
          ensure(q, sql`exists (select 1 from ${assistantConversation} where ${own(scope, input.id)} for update)`, notFound()),
          q.delete(assistantConversation).where(own(scope, input.id)).returning({ storeId: assistantConversation.storeId }),
        ] as const,
        // The store names the conversation's runtime object, which the door clears.
        ([, [row]]) => ({ id: input.id, deleted: true, storeId: row!.storeId }),
      ),
  },
});

/**
 * The conversation's row as its turn reads it (the caller's own, or nothing) and the step that records a
 * turn's messages on it: for the door's units.
 */
export function conversationOf(q: Q, scope: Scope, id: string) {
  return plan([q.select(VIEW).from(assistantConversation).where(own(scope, id))] as const, ([[row]]) => row ?? null);
}

export function recordMessages(q: Q, scope: Scope, id: string, added: number) {
  return q
    .update(assistantConversation)
    .set({ messages: sql`${assistantConversation.messages} + ${added}`, updatedAt: sql`now()` })
    .where(own(scope, id));
}

export const conversationProcedures = [listConversations, getConversation, startConversation, deleteConversation];
