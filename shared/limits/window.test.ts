import { describe, expect, it } from "vitest";
import { checkPolicy, decide, giveBack, rateLimitHeaders } from "./window";

const policy = { limit: 3, windowMs: 60_000 };

function run(times: number[]) {
  let log: number[] = [];
  return times.map((t) => {
    const r = decide(log, t, policy);
    log = r.log;
    return r.decision;
  });
}

describe("sliding-log window", () => {
  it("allows up to the limit, then refuses with the wait until the oldest request leaves", () => {
    const d = run([0, 1_000, 2_000, 3_000]);
    expect(d.map((x) => x.allowed)).toEqual([true, true, true, false]);
    expect(d.map((x) => x.remaining)).toEqual([2, 1, 0, 0]);
    expect(d[3]).toMatchObject({ retryAfterSeconds: 57, resetSeconds: 57 });
  });

  it("rolls: a slot frees exactly when its request is a window old", () => {
    const d = run([0, 1, 2, 59_999, 60_000, 60_001]);
    expect(d.map((x) => x.allowed)).toEqual([true, true, true, false, true, true]);
  });

  it("refused requests do not count", () => {
    const d = run([0, 1, 2, 3, 4, 5, 60_000]);
    expect(d.at(-1)?.allowed).toBe(true);
  });

  it("never keeps more than `limit` entries", () => {
    let log: number[] = [];
    for (let t = 0; t < 1_000; t++) log = decide(log, t, policy).log;
    expect(log.length).toBeLessThanOrEqual(3);
  });

  it("retry-after is at least one second", () => {
    const d = run([0, 1, 2, 59_999.5]);
    expect(d[3]?.retryAfterSeconds).toBe(1);
  });

  it("renders RateLimit-Policy and RateLimit headers, and Retry-After only when refused", () => {
    const [ok, , , refused] = run([0, 1_000, 2_000, 3_000]);
    expect(rateLimitHeaders(ok!, "api")).toEqual({ "RateLimit-Policy": '"api";q=3;w=60', RateLimit: '"api";r=2;t=60' });
    expect(rateLimitHeaders(refused!, "api")).toEqual({
      "RateLimit-Policy": '"api";q=3;w=60',
      RateLimit: '"api";r=0;t=57',
      "Retry-After": "57",
    });
  });

  it("counts a batch as its size, all or nothing, and says when the whole batch fits", () => {
    let log = decide([], 0, policy, 2).log;
    expect(log).toEqual([0, 0]);
    const refused = decide(log, 10_000, policy, 2);
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 1, retryAfterSeconds: 50 });
    expect(refused.log).toEqual([0, 0]);
    log = decide(refused.log, 10_000, policy, 1).log;
    expect(log).toEqual([0, 0, 10_000]);
    // Two units must free up: both entries at 0 leave at 60 s.
    expect(decide(log, 20_000, policy, 2).decision.retryAfterSeconds).toBe(40);
    expect(decide(log, 60_000, policy, 2).decision.allowed).toBe(true);
  });

  it("with a hold below the limit, past it a request is held (not counted, no Retry-After) and counted only when asked without the hold; the limit still refuses", () => {
    let log = decide([], 0, policy, 1, 2).log;
    log = decide(log, 1, policy, 1, 2).log;
    const held = decide(log, 2, policy, 1, 2);
    expect(held.decision).toMatchObject({ allowed: false, held: true, remaining: 1 });
    expect(held.log).toEqual([0, 1]);
    expect(rateLimitHeaders(held.decision)).not.toHaveProperty("Retry-After");
    const passed = decide(held.log, 3, policy);
    expect(passed.decision).toMatchObject({ allowed: true, remaining: 0, at: 3 });
    const full = decide(passed.log, 4, policy, 1, 2).decision;
    expect(full).toMatchObject({ allowed: false, retryAfterSeconds: 60 });
    expect(full.held).toBeUndefined();
    expect(() => decide([], 0, policy, 1, 4)).toThrow(RangeError);
  });

  it("gives back one request counted at a time, and nothing when none was", () => {
    expect(giveBack([0, 5, 5, 9], 5)).toEqual([0, 5, 9]);
    expect(giveBack([0, 9], 5)).toEqual([0, 9]);
  });

  it("refuses a cost it could never allow", () => {
    expect(() => decide([], 0, policy, 4)).toThrow(RangeError);
    expect(() => decide([], 0, policy, 0)).toThrow(RangeError);
  });

  it("refuses nonsense policies", () => {
    expect(() => checkPolicy({ limit: 0, windowMs: 60_000 })).toThrow(RangeError);
    expect(() => checkPolicy({ limit: 1.5, windowMs: 60_000 })).toThrow(RangeError);
    expect(() => checkPolicy({ limit: 10, windowMs: 10 })).toThrow(RangeError);
  });
});
