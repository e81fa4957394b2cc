/**
 * Round trips per trace. A client names its trace in the connection's application_name: `t:<traceId>`
 * for the work that answers a request, `t:<traceId>:after` for work done after the answer
 * (ctx.waitUntil), traceId being 8 to 64 characters of [A-Za-z0-9-].
 */

export type Phase = "answer" | "after";

export interface TraceRef {
  id: string;
  phase: Phase;
}

export interface TraceCounts {
  /** wsTurns + httpQueries: the round trips. */
  turns: number;
  wsTurns: number;
  /** POST /sql requests (a batch is one). */
  httpQueries: number;
  /** WebSocket connections opened (an HTTP query opens none of its own). */
  connections: number;
}

export interface CapturedStatement {
  query: string;
  params: (string | null)[];
  /** The statement's place in its batch; null for a single query. */
  batchIndex: number | null;
  phase: Phase;
}

export interface TraceView extends TraceCounts {
  traceId: string;
  after: TraceCounts;
  /** Only when asked for: the HTTP statements run, or null when the proxy does not capture them. */
  statements?: CapturedStatement[] | null;
}

interface Trace {
  answer: TraceCounts;
  after: TraceCounts;
  statements: CapturedStatement[];
}

const TRACE_NAME = /^t:([A-Za-z0-9-]{8,64})(:after)?$/;
export const TRACE_ID = /^[A-Za-z0-9-]{8,64}$/;

/** The trace an application_name names, if it names one. */
export function traceOf(applicationName: string | undefined): TraceRef | undefined {
  const m = applicationName === undefined ? null : TRACE_NAME.exec(applicationName);
  return m ? { id: m[1]!, phase: m[2] ? "after" : "answer" } : undefined;
}

const zero = (): TraceCounts => ({ turns: 0, wsTurns: 0, httpQueries: 0, connections: 0 });

export class TraceBook {
  /** In order of last use: the first is the one to drop. */
  readonly #traces = new Map<string, Trace>();

  constructor(
    private readonly captureStatements: boolean,
    private readonly maxTraces = 10_000,
    private readonly maxStatements = 200,
  ) {}

  count(ref: TraceRef, what: "wsTurns" | "httpQueries" | "connections", n = 1): void {
    const counts = this.#touch(ref.id)[ref.phase];
    counts[what] += n;
    if (what !== "connections") counts.turns += n;
  }

  /** Keeps the statement when capturing (at most maxStatements per trace). */
  statement(ref: TraceRef, statement: Omit<CapturedStatement, "phase">): void {
    if (!this.captureStatements) return;
    const { statements } = this.#touch(ref.id);
    if (statements.length < this.maxStatements) statements.push({ ...statement, phase: ref.phase });
  }

  view(traceId: string, withStatements = false): TraceView {
    const trace = this.#traces.get(traceId);
    const view: TraceView = { traceId, ...(trace?.answer ?? zero()), after: { ...(trace?.after ?? zero()) } };
    if (withStatements) view.statements = this.captureStatements ? [...(trace?.statements ?? [])] : null;
    return view;
  }

  clear(): void {
    this.#traces.clear();
  }

  #touch(id: string): Trace {
    let trace = this.#traces.get(id);
    if (trace) this.#traces.delete(id);
    else trace = { answer: zero(), after: zero(), statements: [] };
    this.#traces.set(id, trace);
    if (this.#traces.size > this.maxTraces) this.#traces.delete(this.#traces.keys().next().value!);
    return trace;
  }
}
