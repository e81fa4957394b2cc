import { AppError } from "../core/errors";
import type { Database } from "../db/database";
import { plan } from "../db/plan";
import { isSessionProcedure, procedureKey, type Procedure, type StoreProcedure } from "../procedures/define";
import type { LimitDecision } from "../limits/window";
import { isKeyInUse, keyInUse, requestHash, type TakenKey } from "./idempotency-key";
import { tooManyRequests, withHeaders, type Outcome } from "./outcome";
import type { Principal } from "./principal";
import { sendCallerUnit } from "./read";
import { runProcedure } from "./run";
import { readIdempotencyKey, storeIdempotentAnswer } from "./statements";
import type { ProposalOptions } from "./write";

/**
 * A write sent with an `Idempotency-Key` (docs/decisions/0041-idempotency-keys.md), around the one pipeline:
 *
 *   1. the limiter, once (a replay is a request too);
 *   2. one unit: the caller's opening, checked against the procedure as the call itself would be (a refused
 *      caller learns nothing of the key), and the key's row;
 *   3. a key used before with another procedure or body is a 422; one with its answer stored answers it again;
 *      one without an answer yet (its change committed a moment ago, or is running) is waited for;
 *   4. a new key: the call runs, and its change's own unit takes the key (./idempotency-key.ts). Two requests
 *      with one key meet there: the second rolls back whole and waits for the first's answer. A refused call
 *      (its input, a permission, a guard of its change) rolls back and takes no key;
 *   5. the answer, as the door sends it, is stored under the key (one round trip after the commit).
 *
 * Reads and a person's own account calls (session procedures, no store) ignore the key.
 */

/** An answer as the door sends it: its status and its body's JSON text, byte for byte. */
export interface Answer {
  status: number;
  json: string;
}

export interface Answered {
  answer: Answer;
  /** True when the answer is the one stored under the key (the door marks it). */
  replayed: boolean;
  /** The call's outcome when it ran now. */
  outcome?: Outcome;
  decision?: LimitDecision | undefined;
}

/** How long a request waits for the answer of another request with its key, and how often it looks. */
export const WAIT_FOR_ANSWER_MS = 10_000;
const LOOK_EVERY_MS = [50, 100, 200, 400, 800, 1000];
/** A key whose change committed this long ago without its answer stored: that answer was lost (the Worker stopped). */
const ANSWER_LOST_AFTER_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runIdempotent(
  db: Database,
  principal: Principal,
  proc: Procedure,
  rawInput: unknown,
  options: ProposalOptions,
  key: string | undefined,
  answerOf: (outcome: Outcome) => Answer,
): Promise<Answered> {
  if (key === undefined || !proc.mutates || isSessionProcedure(proc)) {
    const outcome = await runProcedure(db, principal, proc, rawInput, options);
    return { answer: answerOf(outcome), replayed: false, outcome, decision: outcome.decision };
  }
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  try {
    const procedure = procedureKey(proc);
    const hash = await requestHash(procedure, rawInput);
    const once = { ...options, limit: decision ? async () => decision : undefined };
    for (let look = 0, waited = 0; ; look++) {
      const seen = await keyRow(db, principal, proc, options, key);
      if (seen.procedure !== null) {
        if (seen.procedure !== procedure || seen.request_hash !== hash) throw keyReused(seen.procedure, procedure);
        if (seen.status !== null && seen.response !== null) return { answer: { status: seen.status, json: seen.response }, replayed: true, decision };
        if (seen.created_at && Date.now() - seen.created_at.getTime() > ANSWER_LOST_AFTER_MS) throw answerLost();
      } else {
        const taken: TakenKey = { key, owner: seen.owner, procedure, hash };
        try {
          const outcome = await runProcedure(db, principal, proc, rawInput, { ...once, idempotency: taken });
          const answer = answerOf(outcome);
          await storeAnswer(db, principal, options, taken, answer);
          return { answer, replayed: false, outcome, decision };
        } catch (e) {
          if (!isKeyInUse(e)) throw e;
        }
      }
      if (waited >= WAIT_FOR_ANSWER_MS) throw keyInUse();
      const pause = LOOK_EVERY_MS[Math.min(look, LOOK_EVERY_MS.length - 1)]!;
      await sleep(pause);
      waited += pause;
    }
  } catch (e) {
    throw withHeaders(e, decision);
  }
}

/** The caller's key row (step 2): one unit, the caller checked against the procedure first. */
async function keyRow(db: Database, principal: Principal, proc: StoreProcedure, options: ProposalOptions, key: string) {
  const { output } = await sendCallerUnit(db, {
    principal,
    procs: [proc],
    door: options.door,
    plan: (q) => plan([readIdempotencyKey(q, key)] as const, ([rows]) => rows[0]!),
  });
  return output;
}

/** Step 5: the answer under the key, in the caller's store (its opening again: RLS). */
async function storeAnswer(db: Database, principal: Principal, options: ProposalOptions, taken: TakenKey, answer: Answer): Promise<void> {
  await sendCallerUnit(db, {
    principal,
    procs: [],
    door: options.door,
    writes: true,
    plan: (q) => plan([storeIdempotentAnswer(q, { ...taken, status: answer.status, response: answer.json })] as const, () => undefined),
  });
}

function keyReused(first: string, now: string): AppError {
  const what = first === now ? `${first} with another body` : `${first}, not ${now}`;
  return new AppError(
    "UNPROCESSABLE_CONTENT",
    `This Idempotency-Key was first used for ${what}; send a new key for a new request (the same key repeats the first request only).`,
    { reason: "idempotency_key_reused", procedure: first, mismatch: first === now ? "body" : "procedure" },
  );
}

function answerLost(): AppError {
  return new AppError(
    "CONFLICT",
    "The first request with this Idempotency-Key was applied, but its answer was not kept; read the record to see its state, and use a new key for a new request.",
    { reason: "idempotency_answer_lost" },
  );
}
