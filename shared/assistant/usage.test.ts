import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isAppError } from "#shared/core/errors";
import { ASSISTANT_MESSAGE_POLICY, countAssistantMessage } from "#shared/limits/limit";
import { rowsOn, withStore } from "#shared/db/with-store";
import type { WorkerBindings } from "../../workers/worker/env";
import { makeStore, testDb } from "../../test/harness";
import { addMember, callerFor, failureText } from "../../test/procedures";
import { budgetRefusal, recordUsage, type AssistantUsage } from "./usage";

const db = testDb();
const limiter = (env as unknown as WorkerBindings).RATE_LIMITER;
const indiaToday = () => new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);

describe("the store's assistant: daily token budget and message limit", () => {
  it("today's usage starts at nothing (India's day), and concurrent conversations add up exactly", async () => {
    const store = await makeStore(db);
    const owner = callerFor(db, store.ownerUserId, store.id);
    const fresh = (await owner("assistant.usage")) as AssistantUsage;
    const { day } = fresh;
    // India's day as this clock sees it (the database's may have passed midnight a moment earlier or later).
    expect(Math.abs(Date.parse(day) - Date.parse(indiaToday()))).toBeLessThanOrEqual(86_400_000);
    expect(fresh).toEqual({ day, inputTokens: 0, outputTokens: 0, modelCalls: 0, budget: 200_000 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => withStore(db, store.id, (tx) => rowsOn(tx, (q) => recordUsage(q, tx.storeId, { input: 100 + i, output: 10 })))));
    expect(await owner("assistant.usage")).toEqual({ day, inputTokens: 20 * 100 + 190, outputTokens: 200, modelCalls: 20, budget: 200_000 });
  });

  it("refuses the next model call once the day's tokens reach the budget, with what to do; a budget of 0 switches the assistant off", () => {
    const usage = (used: number, budget: number): AssistantUsage => ({ day: "2026-11-26", inputTokens: used, outputTokens: 0, modelCalls: 1, budget });
    expect(budgetRefusal(usage(199_999, 200_000))).toBeNull();
    const spent = budgetRefusal(usage(200_000, 200_000));
    expect(spent?.code).toBe("TOO_MANY_REQUESTS");
    expect(spent?.message).toMatch(/used today's 2,00,000 tokens.*after midnight \(India time\).*raise the budget in Settings/);
    expect(budgetRefusal(usage(0, 0))).toMatchObject({ code: "FORBIDDEN", data: { reason: "assistant_off" } });
  });

  it("Owners and Admins set the budget (0 to 100,000,000 whole tokens); Staff neither read the usage nor set it", async () => {
    const store = await makeStore(db);
    const owner = callerFor(db, store.ownerUserId, store.id);
    expect(await failureText(owner("store.update", { assistantDailyTokens: -1 }))).toBe("BAD_REQUEST assistantDailyTokens");
    expect(await failureText(owner("store.update", { assistantDailyTokens: 1.5 }))).toBe("BAD_REQUEST assistantDailyTokens");
    expect(await failureText(owner("store.update", { assistantDailyTokens: 100_000_001 }))).toBe("BAD_REQUEST assistantDailyTokens");
    expect(await owner("store.update", { assistantDailyTokens: 50_000 })).toMatchObject({ assistantDailyTokens: 50_000 });
    expect(await owner("assistant.usage")).toMatchObject({ budget: 50_000 });
    const staff = await addMember(db, store, "staff");
    const asStaff = callerFor(db, staff.userId, store.id);
    expect(await failureText(asStaff("assistant.usage"))).toBe("FORBIDDEN");
    expect(await failureText(asStaff("store.update", { assistantDailyTokens: 0 }))).toBe("FORBIDDEN");
  });

  it("counts ten messages a minute per member and store before any model call; the eleventh is refused with Retry-After", async () => {
    const storeId = crypto.randomUUID();
    const member = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 15 }, () => countAssistantMessage(limiter, storeId, member).then(() => "ok", (e: unknown) => e)));
    expect(results.filter((r) => r === "ok")).toHaveLength(ASSISTANT_MESSAGE_POLICY.limit);
    const refused = results.find((r) => r !== "ok");
    expect(isAppError(refused) && refused.code).toBe("TOO_MANY_REQUESTS");
    expect(isAppError(refused) && refused.message).toMatch(/assistant messages per minute from one member/);
    // Another member of the store, and the same member in another store, are counted apart.
    await expect(countAssistantMessage(limiter, storeId, crypto.randomUUID())).resolves.toBeDefined();
    await expect(countAssistantMessage(limiter, crypto.randomUUID(), member)).resolves.toBeDefined();
  });
});
