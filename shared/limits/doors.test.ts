import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkerBindings } from "../../workers/worker/env";
import { challengeDue, checkDoorPolicy, countThrough, peekThrough, type DoorPolicy } from "./doors";
import { hit } from "./limit";
import { SHOPPER_LIMITS, FAILED_CODE_LIMITS } from "./shopper";

const limiter = (env as unknown as WorkerBindings).RATE_LIMITER;
const policy = (limit: number, challengeAfter?: number, name = "address"): DoorPolicy => ({ limit, windowMs: 60_000, name, what: "things per minute", ...(challengeAfter === undefined ? {} : { challengeAfter }) });
const keys = () => {
  const id = crypto.randomUUID();
  return [
    { key: `t:${id}:address`, policy: policy(3, 1) },
    { key: `t:${id}:store`, policy: policy(5, 3, "store") },
  ];
};

describe("door limits: counted per key in turn, a challenge past a threshold below the limit", () => {
  it("asks for a challenge once a key holds more than challengeAfter, refuses past its limit", async () => {
    const k = keys();
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await countThrough(limiter, k));
    expect(outcomes.map((o) => (o.allowed ? (o.challenge ? "challenge" : "ok") : "refused"))).toEqual(["ok", "challenge", "challenge", "refused"]);
    const refused = outcomes[3]!;
    expect(refused).toMatchObject({ allowed: false, policy: { name: "address" } });
    expect(refused.headers["Retry-After"]).toMatch(/^\d+$/);
    expect(outcomes[0]!.headers).toEqual({ "RateLimit-Policy": '"address";q=3;w=60', RateLimit: '"address";r=2;t=60' });
  });

  it("a request one key refuses never counts against the next (one address cannot spend the store's budget)", async () => {
    const k = keys();
    for (let i = 0; i < 10; i++) await countThrough(limiter, k);
    // The store saw only the address's 3: 2 more from elsewhere fit before its limit of 5.
    const store = [k[1]!];
    expect((await countThrough(limiter, store)).allowed).toBe(true);
    expect((await countThrough(limiter, store)).allowed).toBe(true);
    expect((await countThrough(limiter, store)).allowed).toBe(false);
  });

  it("the store's threshold asks for a challenge from an address under its own", async () => {
    const k = keys();
    await hit(limiter, k[1]!.key, k[1]!.policy, 3);
    expect(await countThrough(limiter, k)).toMatchObject({ allowed: true, challenge: true });
  });

  it("peeking asks the same question about the next request without counting it", async () => {
    const k = keys();
    expect(await peekThrough(limiter, k)).toMatchObject({ allowed: true, challenge: false });
    await countThrough(limiter, k);
    expect(await peekThrough(limiter, k)).toMatchObject({ allowed: true, challenge: true });
    expect(await peekThrough(limiter, k)).toMatchObject({ allowed: true, challenge: true });
    await countThrough(limiter, k);
    await countThrough(limiter, k);
    expect(await peekThrough(limiter, k)).toMatchObject({ allowed: false });
  });

  it("refuses a threshold at or above the limit, and every shipped policy is valid with its threshold below its limit", () => {
    expect(() => checkDoorPolicy(policy(3, 3))).toThrow(RangeError);
    expect(() => checkDoorPolicy(policy(3, -1))).toThrow(RangeError);
    expect(challengeDue({ allowed: true, limit: 3, windowSeconds: 60, remaining: 1, resetSeconds: 60 }, policy(3))).toBe(false);
    for (const p of [...Object.values(SHOPPER_LIMITS), FAILED_CODE_LIMITS].flatMap((d) => [d.address, d.store])) expect(checkDoorPolicy(p)).toBe(p);
  });
});
