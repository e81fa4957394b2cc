import { OrderStatusError, type AttemptStatus } from "#shared/rules/status";
import { mulberry32 } from "./prng";

/** Helpers of the order-status property tests (shared/rules/status.test.ts, shared/orders/status-*.test.ts). */

/** Seeded choices over mulberry32, so a failing run can be replayed from its seed. */
export function prng(seed: number) {
  const next = mulberry32(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  const shuffle = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  };
  return { int, pick, shuffle };
}

/** The problem code a status routine refused with, or undefined when it did not refuse. */
export const problemOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (e) {
    if (e instanceof OrderStatusError) return e.problem;
    throw e;
  }
  return undefined;
};

/** A payment attempt's facts. */
export const at = (status: AttemptStatus, amount = 1000) => ({ status, amount });
