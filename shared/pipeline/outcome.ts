import type { Logger } from "../core/log";
import { AppError } from "../core/errors";
import { rateLimitHeaders, type LimitDecision } from "../limits/window";
import type { Services, SessionInfo, StoreContext, StoreProcedure } from "../procedures/define";
import type { Door } from "./check";
import type { TakenKey } from "./idempotency-key";
import type { Caller } from "./principal";
import { callerBehind, withCaller } from "./refusal";

/** What a proposal step answers: the stored proposal, and its outcome when it ran at once. */
export interface ProposalView {
  id: string;
  state: string;
  summary: string;
  diff: unknown;
  expiresAt: Date;
  /** Who proposed it: an MCP client, an OAuth connection at /api/v1, or the store's assistant. */
  source?: "mcp" | "api" | "assistant";
  result?: unknown;
  error?: string | null;
}

/** Stores a proposal for a change (AI approvals); the assistant provides it to the doors that need it. */
export type Proposer = (ctx: StoreContext, caller: Caller, proc: StoreProcedure, input: unknown, door: Door) => Promise<ProposalView>;

export interface RunOptions {
  door: Door;
  log: Logger;
  services?: Services;
  /** Step 1: counts this call against its limiter. Absent for doors without one (sessions, approvals). */
  limit?: () => Promise<LimitDecision>;
  /** Step 7: required by doors where a change can become a proposal. */
  propose?: Proposer;
  /** The call's Idempotency-Key: the change's unit takes it (./idempotency-key.ts, ./idempotent.ts). */
  idempotency?: TakenKey;
}

export type Outcome =
  /** `session`: a session principal as its unit found it (`touch`: refresh its last use after the answer). */
  | { kind: "done"; output: unknown; caller: Caller; decision?: LimitDecision | undefined; session?: SessionInfo & { touch: boolean } }
  | { kind: "proposed"; proposal: ProposalView; caller: Caller; decision?: LimitDecision | undefined };

export function tooManyRequests(decision: LimitDecision, what = "this grant"): AppError {
  const wait = decision.retryAfterSeconds ?? 1;
  return new AppError(
    "TOO_MANY_REQUESTS",
    `Rate limit reached: ${decision.limit} requests per ${decision.windowSeconds} s for ${what} (MCP and /api/v1 together). Retry after ${wait} s.`,
    { retryAfterSeconds: wait },
    rateLimitHeaders(decision),
  );
}

/** The limiter's headers on an error answer, so a client sees its budget on refusals too. */
export function withHeaders(e: unknown, decision: LimitDecision | undefined): unknown {
  if (!decision || !(e instanceof AppError)) return e;
  const wrapped = new AppError(e.code, e.message, e.data, { ...rateLimitHeaders(decision), ...e.headers });
  const caller = callerBehind(e);
  return caller ? withCaller(wrapped, caller) : wrapped;
}
