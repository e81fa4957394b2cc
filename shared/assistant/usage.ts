import { eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { AppError } from "../core/errors";
import { plan, type Plan } from "../db/plan";
import { assistantUsage, store } from "../db/schema";
import type { Q } from "../db/steps";
import { storeProcedure } from "../procedures/define";
import * as out from "../procedures/outputs";

/**
 * The store's assistant's daily token budget (issue 24 item 5; migration 0049). The day is India's
 * (Asia/Kolkata), as the admin's "today". Before each model call the conversation reads the day's usage
 * with its other reads and refuses the call once the budget is spent (`budgetRefusal`); after the call it
 * adds what the model reported (`recordUsage`, an upsert: concurrent conversations add, never overwrite).
 */
export const ASSISTANT_DAY_ZONE = "Asia/Kolkata";

/** Today in the assistant's zone, as Postgres computes it (one clock for every Worker). */
const today = sql`(now() at time zone ${sql.raw(`'${ASSISTANT_DAY_ZONE}'`)})::date`;

export interface AssistantUsage {
  /** YYYY-MM-DD, India's day. */
  day: string;
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
  /** The store's daily budget in tokens (0: the assistant is off). */
  budget: number;
}

export const usedTokens = (u: Pick<AssistantUsage, "inputTokens" | "outputTokens">) => u.inputTokens + u.outputTokens;

/** Today's usage and the store's budget, in one statement. */
export function usageTodayPlan(q: Q, storeId: SQL | string): Plan<AssistantUsage> {
  return plan(
    [
      q
        .select({
          day: sql<string>`to_char(${today}, 'YYYY-MM-DD')`,
          inputTokens: sql<number>`coalesce((select u.input_tokens from ${assistantUsage} u where u.store_id = ${store.id} and u.day = ${today}), 0)::float8`,
          outputTokens: sql<number>`coalesce((select u.output_tokens from ${assistantUsage} u where u.store_id = ${store.id} and u.day = ${today}), 0)::float8`,
          modelCalls: sql<number>`coalesce((select u.model_calls from ${assistantUsage} u where u.store_id = ${store.id} and u.day = ${today}), 0)`,
          budget: store.assistantDailyTokens,
        })
        .from(store)
        .where(eq(store.id, storeId)),
    ] as const,
    ([[row]]) => {
      if (!row) throw new Error("assistant usage: store row missing");
      return row;
    },
  );
}

/** Why the next model call may not be made: the assistant is off, or today's tokens are spent; null when it may. */
export function budgetRefusal(usage: AssistantUsage): AppError | null {
  if (usage.budget === 0) {
    return new AppError("FORBIDDEN", "The store's assistant is switched off (its daily token budget is 0). An Owner or Admin can set a budget in Settings.", { reason: "assistant_off" });
  }
  if (usedTokens(usage) < usage.budget) return null;
  return new AppError(
    "TOO_MANY_REQUESTS",
    `The store's assistant has used today's ${usage.budget.toLocaleString("en-IN")} tokens. It answers again after midnight (India time), or an Owner or Admin can raise the budget in Settings.`,
    { reason: "assistant_budget_spent", used: usedTokens(usage), budget: usage.budget },
  );
}

/** Adds model calls' tokens to today's row (an upsert that adds; one model call unless `calls` says more). */
export function recordUsage(q: Q, storeId: SQL | string, tokens: { input: number; output: number; calls?: number }) {
  const input = Math.max(0, Math.round(tokens.input));
  const output = Math.max(0, Math.round(tokens.output));
  const calls = Math.max(0, Math.round(tokens.calls ?? 1));
  return q
    .insert(assistantUsage)
    .values({ storeId: sql`${storeId}`, day: sql`${today}`, inputTokens: input, outputTokens: output, modelCalls: calls })
    .onConflictDoUpdate({
      target: [assistantUsage.storeId, assistantUsage.day],
      set: {
        inputTokens: sql`${assistantUsage.inputTokens} + ${input}`,
        outputTokens: sql`${assistantUsage.outputTokens} + ${output}`,
        modelCalls: sql`${assistantUsage.modelCalls} + ${calls}`,
        updatedAt: sql`now()`,
      },
    });
}

export const assistantUsageToday = storeProcedure({
  router: "assistant",
  name: "usage",
  description: "What the store's assistant used today (India's day): model tokens in and out, model calls, and the store's daily token budget.",
  access: "settings.read",
  mutates: false,
  output: z.object({ day: out.day, inputTokens: z.number().int(), outputTokens: z.number().int(), modelCalls: z.number().int(), budget: z.number().int() }),
  input: z.strictObject({}),
  read: (q, { store: storeId }) => usageTodayPlan(q, storeId),
});
