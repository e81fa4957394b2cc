import { DurableObject } from "cloudflare:workers";
import { checkPolicy, decide, giveBack, type LimitDecision, type LimitPolicy } from "./window";

/**
 * One rate limiter per key (a grant, or an IP and purpose): a Durable Object, so callers are
 * serialised and the count is exact under concurrency. The log is kept in memory and written to the
 * object's storage on every accepted request, so an evicted object resumes with its count.
 */
export class RateLimiter extends DurableObject {
  #log: number[] = [];

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    void ctx.blockConcurrencyWhile(async () => {
      this.#log = (await ctx.storage.get<number[]>("log")) ?? [];
    });
  }

  /**
   * Counts `cost` requests (a batch is all or nothing) and answers whether they were allowed; with `hold`,
   * not past that many either (the decision is then `held`: see `decide`).
   */
  async check(policy: LimitPolicy, cost = 1, hold?: number): Promise<LimitDecision> {
    checkPolicy(policy);
    const { decision, log } = decide(this.#log, Date.now(), policy, cost, hold);
    this.#log = log;
    if (decision.allowed) await this.ctx.storage.put("log", log);
    return decision;
  }

  /** Takes back one request counted at `at` (a `check`'s decision says when), e.g. a discount code that was right. */
  async giveBack(at: number): Promise<void> {
    const log = giveBack(this.#log, at);
    if (log.length === this.#log.length) return;
    this.#log = log;
    await this.ctx.storage.put("log", log);
  }

  /** Whether one more request would be allowed now, without counting it (e.g. sign-in failures). */
  async peek(policy: LimitPolicy): Promise<LimitDecision> {
    checkPolicy(policy);
    return decide(this.#log, Date.now(), policy).decision;
  }
}
