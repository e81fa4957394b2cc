/**
 * The proxy's upstream limit, shared by WebSocket clients and HTTP queries: at most `maxUpstream`
 * Postgres connections are open at once, and whoever needs one more waits in one FIFO queue (at most
 * `maxQueue` waiting, each at most `queueTimeoutMs`), as behind Neon's pooler.
 */

export interface SlotLimits {
  maxUpstream: number;
  maxQueue: number;
  queueTimeoutMs: number;
}

/** The counters this keeps, inside the proxy's stats object. */
export interface SlotCounters {
  /** Upstream connections open now. */
  active: number;
  /** Clients waiting for an upstream slot now. */
  queued: number;
  peakActive: number;
  peakQueued: number;
  /** Time clients waited in the queue before getting a slot. */
  waitMsTotal: number;
  waitMsMax: number;
  /** Clients turned away because the queue was full. */
  refused: number;
  /** Clients turned away after waiting queueTimeoutMs. */
  timedOut: number;
  /** Clients that went away while queued. */
  abandoned: number;
}

export type TurnedAway = "refused" | "timedOut" | "closing";

export interface SlotWaiter {
  /** The slot is the waiter's: it opens its upstream connection, and calls release() once that closes. */
  granted(): void;
  turnedAway(why: TurnedAway): void;
}

interface Queued {
  waiter: SlotWaiter;
  since: number;
  timer: NodeJS.Timeout;
}

export class UpstreamSlots {
  readonly #queue: Queued[] = [];

  /** `makeRoom` is asked to close one idle connection whenever someone starts waiting. */
  constructor(
    private readonly limits: SlotLimits,
    private readonly counters: SlotCounters,
    private readonly makeRoom: () => void,
  ) {}

  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Grants a slot now, queues the waiter, or turns it away. Answers a function that withdraws the waiter
   * (counted abandoned) and tells whether it was still queued.
   */
  request(waiter: SlotWaiter): () => boolean {
    const since = Date.now();
    if (this.counters.active < this.limits.maxUpstream) {
      this.#grant(waiter, since);
      return () => false;
    }
    if (this.#queue.length >= this.limits.maxQueue) {
      this.counters.refused++;
      waiter.turnedAway("refused");
      return () => false;
    }
    const entry: Queued = { waiter, since, timer: setTimeout(() => this.#drop(entry, "timedOut"), this.limits.queueTimeoutMs) };
    this.#queue.push(entry);
    this.#setQueued();
    this.makeRoom();
    return () => this.#drop(entry, "abandoned");
  }

  /** An upstream connection closed: its slot goes to the first waiter. */
  release(): void {
    this.counters.active--;
    while (this.counters.active < this.limits.maxUpstream && this.#queue.length > 0) {
      const next = this.#queue.shift()!;
      clearTimeout(next.timer);
      this.#setQueued();
      this.#grant(next.waiter, next.since);
    }
  }

  /**
   * Hands the slot of a connection that stays open to the first waiter when `wants` accepts it (an HTTP
   * query for the same login); answers that waiter, or undefined when the first waiter wants another kind.
   */
  passToFirst<W extends SlotWaiter>(wants: (waiter: SlotWaiter) => waiter is W): W | undefined {
    const first = this.#queue[0];
    if (!first || !wants(first.waiter)) return undefined;
    this.#queue.shift();
    clearTimeout(first.timer);
    this.#setQueued();
    this.#recordWait(first.since);
    return first.waiter;
  }

  /** Turns every waiter away without counting it: the proxy is closing. */
  close(): void {
    for (const entry of this.#queue.splice(0)) {
      clearTimeout(entry.timer);
      entry.waiter.turnedAway("closing");
    }
    this.#setQueued();
  }

  #grant(waiter: SlotWaiter, since: number): void {
    this.#recordWait(since);
    this.counters.active++;
    this.counters.peakActive = Math.max(this.counters.peakActive, this.counters.active);
    waiter.granted();
  }

  #recordWait(since: number): void {
    const waited = Date.now() - since;
    this.counters.waitMsTotal += waited;
    this.counters.waitMsMax = Math.max(this.counters.waitMsMax, waited);
  }

  #drop(entry: Queued, why: "timedOut" | "abandoned"): boolean {
    const at = this.#queue.indexOf(entry);
    if (at < 0) return false;
    this.#queue.splice(at, 1);
    clearTimeout(entry.timer);
    this.#setQueued();
    this.counters[why]++;
    if (why === "timedOut") entry.waiter.turnedAway("timedOut");
    return true;
  }

  #setQueued(): void {
    this.counters.queued = this.#queue.length;
    this.counters.peakQueued = Math.max(this.counters.peakQueued, this.counters.queued);
  }
}
