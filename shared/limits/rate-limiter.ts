import { DurableObject } from "cloudflare:workers";
import { checkPolicy, decide, type LimitDecision, type LimitPolicy } from "./window";

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

  /** Counts `cost` requests (a batch is all or nothing) and answers whether they were allowed. */
  async check(policy: LimitPolicy, cost = 1): Promise<LimitDecision> {
    checkPolicy(policy);
    const { decision, log } = decide(this.#log, Date.now(), policy, cost);
    this.#log = log;
    if (decision.allowed) await this.ctx.storage.put("log", log);
    return decision;
  }

  /** Whether one more request would be allowed now, without counting it (e.g. sign-in failures). */
  async peek(policy: LimitPolicy): Promise<LimitDecision> {
    checkPolicy(policy);
    return decide(this.#log, Date.now(), policy).decision;
  }
}
