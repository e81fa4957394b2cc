import type { ResultOf, Step } from "./steps";

/**
 * What a read needs from the database, decided before anything is sent: the statements (independent of
 * each other's answers, so they travel together in one round trip) and how their rows become the
 * answer. `finish` runs after the unit came back; it may throw (a NOT_FOUND, say).
 */
export interface Plan<O> {
  readonly steps: readonly Step[];
  finish(results: readonly unknown[]): O;
}

type Results<S extends readonly Step[]> = { -readonly [K in keyof S]: ResultOf<S[K]> };

export function plan<const S extends readonly Step[], O>(steps: S, finish: (results: Results<S>) => O): Plan<O> {
  return { steps, finish: (results) => finish(results as Results<S>) };
}

/** A plan whose answer is known without the database. */
export function constant<O>(value: O): Plan<O> {
  return { steps: [], finish: () => value };
}

export function mapPlan<A, B>(p: Plan<A>, f: (a: A) => B): Plan<B> {
  return { steps: p.steps, finish: (results) => f(p.finish(results)) };
}

type Outputs<P extends Record<string, Plan<unknown>>> = { [K in keyof P]: P[K] extends Plan<infer O> ? O : never };

/** Several plans as one: their statements side by side in one unit, their answers by name. */
export function together<P extends Record<string, Plan<unknown>>>(plans: P): Plan<Outputs<P>> {
  const entries = Object.entries(plans);
  const steps = entries.flatMap(([, p]) => p.steps);
  return {
    steps,
    finish(results) {
      const out: Record<string, unknown> = {};
      let at = 0;
      for (const [name, p] of entries) {
        out[name] = p.finish(results.slice(at, at + p.steps.length));
        at += p.steps.length;
      }
      return out as Outputs<P>;
    },
  };
}

/**
 * Statements (a change's guards and writes), then a plan in the same unit whose answer is the whole's: it
 * runs after them, so a read there sees the change.
 */
export function thenPlan<O>(first: readonly Step[], next: Plan<O>): Plan<O> {
  return { steps: [...first, ...next.steps], finish: (results) => next.finish(results.slice(first.length)) };
}
