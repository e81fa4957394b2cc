import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkerBindings } from "../../workers/worker/env";
import { admit, challengeDue, checkDoorPolicy, countThrough, giveBackAll, passThrough, peekThrough, type DoorPolicy } from "./doors";
import { hit, peek } from "./limit";
import { PASSWORD_LIMITS, SHOPPER_LIMITS, WRONG_CODE_LIMITS } from "./shopper";

const limiter = (env as unknown as WorkerBindings).RATE_LIMITER;
const policy = (limit: number, challengeAfter?: number, name = "address"): DoorPolicy => ({ limit, windowMs: 60_000, name, what: "things per minute", ...(challengeAfter === undefined ? {} : { challengeAfter }) });
const keys = () => {
  const id = crypto.randomUUID();
  return [
    { key: `t:${id}:address`, policy: policy(3, 1) },
    { key: `t:${id}:store`, policy: policy(5, 3, "store") },
  ];
};

/** How many requests a key holds now (a peek answers what would remain after one more). */
const held = async ({ key, policy: p }: { key: string; policy: DoorPolicy }) => p.limit - (await peek(limiter, key, p)).remaining - 1;

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

  it("a store's key past its threshold counts only requests that passed the check, up to its limit", async () => {
    const [, store] = keys();
    for (let i = 0; i < 3; i++) expect(await admit(limiter, store!, false)).toMatchObject({ allowed: true, challenge: false });
    // Past the threshold: asked for the check, and not counted however often it is asked.
    for (let i = 0; i < 5; i++) expect(await admit(limiter, store!, false)).toMatchObject({ allowed: true, challenge: true, counted: [] });
    expect(await held(store!)).toBe(3);
    expect(await admit(limiter, store!, true)).toMatchObject({ allowed: true, challenge: false });
    expect(await admit(limiter, store!, true)).toMatchObject({ allowed: true, challenge: false });
    // Full (5): refused with or without the check.
    expect(await admit(limiter, store!, true)).toMatchObject({ allowed: false, policy: { name: "store" } });
    expect(await admit(limiter, store!, false)).toMatchObject({ allowed: false });
  });

  it("through a door: a request its check refuses is counted by its address and never by the store; the check is made once", async () => {
    const k = keys();
    const door = { address: [k[0]!], store: k[1]! };
    await hit(limiter, k[1]!.key, k[1]!.policy, 3);
    let checks = 0;
    const refusing = async () => (checks++, "refused");
    expect(await passThrough(limiter, door, refusing)).toEqual({ allowed: false, checkRefused: "refused" });
    expect(await passThrough(limiter, door, refusing)).toEqual({ allowed: false, checkRefused: "refused" });
    expect(checks).toBe(2);
    // The store still holds only its 3: a person who passes the check is counted, with one check.
    const other = { address: [{ ...k[0]!, key: `${k[0]!.key}:other` }], store: k[1]! };
    const passing = async () => (checks++, null);
    const through = await passThrough(limiter, other, passing);
    expect(through).toMatchObject({ allowed: true, counted: [{ key: other.address[0]!.key }, { key: k[1]!.key }] });
    expect(checks).toBe(3);
    expect(await held(k[1]!)).toBe(4);
    // The address (limit 3) took its 2 refused and refuses its 4th: the store is not asked.
    await countThrough(limiter, [k[0]!]);
    expect(await passThrough(limiter, door, passing)).toMatchObject({ allowed: false, policy: { name: "address" } });
  });

  it("gives back what a request counted, exactly", async () => {
    const k = keys();
    const through = await passThrough(limiter, { address: [k[0]!], store: k[1]! }, async () => null);
    expect(through.allowed).toBe(true);
    if (!through.allowed) return;
    await giveBackAll(limiter, through.counted);
    for (const key of k) expect(await held(key), key.key).toBe(0);
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
    for (const p of [...Object.values(SHOPPER_LIMITS), WRONG_CODE_LIMITS, PASSWORD_LIMITS].flatMap((d) => [d.address, d.network, ...(d.store ? [d.store] : [])])) expect(checkDoorPolicy(p)).toBe(p);
    // A store key always has a threshold (it asks for the check rather than closing the door for everyone).
    for (const d of [...Object.values(SHOPPER_LIMITS), WRONG_CODE_LIMITS, PASSWORD_LIMITS]) if (d.store) expect(d.store.challengeAfter).toBeGreaterThan(0);
  });
});
