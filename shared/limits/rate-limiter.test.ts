import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkerBindings } from "../../workers/worker/env";
import { API_POLICY, giveBackHit, hit, peek } from "./limit";

const limiter = (env as unknown as WorkerBindings).RATE_LIMITER;

describe("RateLimiter Durable Object", () => {
  it("allows exactly 120 of 200 concurrent requests in a minute", async () => {
    const key = `grant:${crypto.randomUUID()}`;
    const decisions = await Promise.all(Array.from({ length: 200 }, () => hit(limiter, key, API_POLICY)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(120);
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused).toHaveLength(80);
    for (const d of refused) expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("with a hold, counts exactly that many of 50 concurrent requests and holds the rest; gives one back by its time", async () => {
    const key = `store:${crypto.randomUUID()}`;
    const policy = { limit: 30, windowMs: 60_000 };
    const decisions = await Promise.all(Array.from({ length: 50 }, () => hit(limiter, key, policy, 1, 10)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.filter((d) => d.held)).toHaveLength(40);
    expect((await peek(limiter, key, policy)).remaining).toBe(19);
    await giveBackHit(limiter, key, decisions.find((d) => d.allowed)!.at!);
    expect((await peek(limiter, key, policy)).remaining).toBe(20);
    // A time it never counted gives nothing back.
    await giveBackHit(limiter, key, 1);
    expect((await peek(limiter, key, policy)).remaining).toBe(20);
  });

  it("keeps separate counts per key", async () => {
    const a = limiter.get(limiter.idFromName(`a-${crypto.randomUUID()}`));
    const b = limiter.get(limiter.idFromName(`b-${crypto.randomUUID()}`));
    await a.check({ limit: 1, windowMs: 60_000 });
    expect((await a.check({ limit: 1, windowMs: 60_000 })).allowed).toBe(false);
    expect((await b.check({ limit: 1, windowMs: 60_000 })).allowed).toBe(true);
  });

  it("refuses an invalid policy in the caller", async () => {
    await expect(hit(limiter, "bad", { limit: -1, windowMs: 60_000 })).rejects.toThrow(/limit/);
  });
});
