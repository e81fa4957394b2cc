/**
 * The challenge port: asks whether the person behind a request solved a challenge (Cloudflare Turnstile)
 * a moment ago. A door asks only once its limiter says the address or the store is over a threshold
 * (shared/limits/doors.ts); the page then shows the widget, which puts its token in the form field
 * `cf-turnstile-response` (a JSON client sends it in the header of that name).
 *
 * Adapters: ./turnstile.ts (siteverify, as Cloudflare documents it) and ./local.ts (Turnstile's published
 * test keys, development and tests only); ./select.ts picks one from the Worker's configuration.
 */
export const CHALLENGE_FIELD = "cf-turnstile-response";
/** Turnstile's own bound on a token's length. */
export const TOKEN_MAX_LENGTH = 2048;

export type ChallengeProvider = "local" | "turnstile";

/** What a page needs to show the widget. */
export interface ChallengeWidget {
  provider: ChallengeProvider;
  siteKey: string;
}

export type ChallengeVerdict =
  | { passed: true }
  | {
      passed: false;
      /** missing: no token; failed: not a token the provider issued; expired: older than 300 s, or already used. */
      reason: "missing" | "failed" | "expired";
      /** The provider's error codes (siteverify's `error-codes`). */
      codes: string[];
    };

/** The check could not be made: the provider did not answer (`unavailable`), or refused our secret (`misconfigured`). */
export class ChallengeError extends Error {
  constructor(
    readonly kind: "unavailable" | "misconfigured",
    message: string,
  ) {
    super(message);
    this.name = "ChallengeError";
  }
}

export const isChallengeError = (e: unknown): e is ChallengeError => e instanceof ChallengeError;

export interface Challenge {
  readonly widget: ChallengeWidget;
  /** Checks a token once (tokens are single-use); `remoteIp` is the visitor's address when known. */
  verify(token: string | undefined, remoteIp: string | undefined): Promise<ChallengeVerdict>;
}

export const missingToken = (): ChallengeVerdict => ({ passed: false, reason: "missing", codes: ["missing-input-response"] });

/** A token that cannot be one (longer than Turnstile issues) is refused without asking anyone. */
export function tokenShape(token: string | undefined): ChallengeVerdict | "ok" {
  if (!token) return missingToken();
  if (token.length > TOKEN_MAX_LENGTH) return { passed: false, reason: "failed", codes: ["invalid-input-response"] };
  return "ok";
}
