/**
 * The one closed set of error codes, their HTTP statuses, and the typed error domain code throws.
 * Only the HTTP edge (shared/http/app.ts) turns an AppError into a response.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PRECONDITION_FAILED: 412,
  /** A request that is well formed but cannot be taken as sent (an Idempotency-Key reused with another body). */
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorData = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly data: ErrorData | undefined;
  /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, data?: ErrorData, headers?: Record<string, string>) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.data = data;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** One field problem in a 400 answer: the path of the field and why it was refused. */
export interface FieldIssue {
  path: string;
  message: string;
}

export function badRequest(issues: FieldIssue[], message?: string): AppError {
  const first = issues[0];
  const text = message ?? (first ? `Invalid input: ${first.path || "(root)"}: ${first.message}` : "Invalid input");
  return new AppError("BAD_REQUEST", text, { issues });
}

// The three 'no store to work in' errors (SPEC "Admin RPC errors"). They alone carry reason no_store,
// and only they may send an admin page to the store picker; anything else would make the picker loop.
export const NO_STORE_REASON = "no_store";

export function noActiveStore(): AppError {
  return new AppError("PRECONDITION_FAILED", "Choose a store to work in", { reason: NO_STORE_REASON });
}

export function notAMember(): AppError {
  return new AppError("FORBIDDEN", "Not a member of this store", { reason: NO_STORE_REASON });
}

export function storeNotFound(): AppError {
  return new AppError("NOT_FOUND", "Store not found", { reason: NO_STORE_REASON });
}

export function isNoStoreError(e: unknown): boolean {
  if (!isAppError(e) || e.data?.reason !== NO_STORE_REASON) return false;
  return e.code === "PRECONDITION_FAILED" || e.code === "FORBIDDEN" || e.code === "NOT_FOUND";
}

/** A validation failure's issues as the field list of a 400 (each path joined with dots). */
interface IssueList {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

export function issuesOf(error: IssueList): FieldIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}
