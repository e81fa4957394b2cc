/**
 * When a failed delivery is tried again: 30 s, 2 min, 10 min, 1 h, 6 h after the 1st to 5th failure, each
 * ±10 % at random so a receiver that was down is not hit by every store at once. After the 6th try the
 * delivery is failed. Queues allow delays up to 12 h.
 */
export const RETRY_DELAYS_SECONDS = [30, 120, 600, 3_600, 21_600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** Seconds before the try after failed try `attempt` (1-based), or null when that was the last. */
export function retryDelaySeconds(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * random()));
}
