/**
 * Admin session lifetimes (docs/decisions/0002-admin.md): a session ends after 24 hours without use
 * (idle) and 14 days after sign-in whatever happens (absolute). Its last use is written at most every
 * 5 minutes, after the answer (the unit that reads the session may be read-only).
 */
export const IDLE_TIMEOUT_SECONDS = 24 * 60 * 60;
export const ABSOLUTE_LIFETIME_SECONDS = 14 * 24 * 60 * 60;
export const TOUCH_AFTER_SECONDS = 5 * 60;

export const SESSION_LIFETIMES = { idleSeconds: IDLE_TIMEOUT_SECONDS, touchAfterSeconds: TOUCH_AFTER_SECONDS } as const;
