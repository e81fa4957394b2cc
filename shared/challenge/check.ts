import type { Logger } from "../core/log";
import { isChallengeError, type Challenge, type ChallengeVerdict } from "./challenge";

export type ChallengeCheck = ChallengeVerdict | "unavailable";

/**
 * A door's check of a token: the verdict, or "unavailable" when the provider could not say (logged: a
 * refused secret as an error, since only the deployment can fix it; an outage as a warning). A door under
 * its threshold never asks, so an outage only slows the doors that are being pushed.
 */
export async function checkChallenge(challenge: Challenge, token: string | undefined, ip: string | undefined, log: Logger): Promise<ChallengeCheck> {
  try {
    return await challenge.verify(token || undefined, ip);
  } catch (e) {
    if (!isChallengeError(e)) throw e;
    if (e.kind === "misconfigured") log.error("Challenge check refused our configuration", { message: e.message });
    else log.warn("Challenge check unavailable", { message: e.message });
    return "unavailable";
  }
}

/** What the person is told when a check did not let them through; `doing`: "place this order", "sign in". */
export function challengeMessage(check: Exclude<ChallengeCheck, { passed: true }>, doing: string): string {
  if (check === "unavailable") return "The check that you are a person could not be made just now. Try again in a few seconds.";
  if (check.reason === "missing") return `Confirm you are a person to ${doing}: many requests came from your network, or to this door, just now.`;
  if (check.reason === "expired") return "The check that you are a person expired or was already used. Do it again.";
  return "The check that you are a person did not pass. Try it again.";
}

/** A short wait before trying again when the check could not be made. */
export const CHALLENGE_RETRY_SECONDS = 5;
