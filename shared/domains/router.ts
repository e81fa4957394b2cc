/**
 * The custom-hostname router port (docs/domains.md): makes the edge send a verified hostname's traffic
 * to the storefront and obtain its certificate (Cloudflare for SaaS custom hostnames). Adapters do I/O
 * with the router only, no database. Every failure is a RouterError, never a raw error.
 */
export type RouterProvider = "local" | "cloudflare";

/** A custom hostname as the router keeps it. */
export interface CustomHostname {
  id: string;
  hostname: string;
  /** The router's word for the hostname, e.g. Cloudflare's `pending`, `active`, `moved`, `blocked`. */
  status: string;
  /** Its certificate's state, e.g. `initializing`, `pending_validation`, `active`; null when none. */
  sslStatus: string | null;
  /** Why it is not active yet, in the router's words. */
  verificationErrors: string[];
}

export type RouterErrorKind = "unavailable" | "timeout" | "rate_limited" | "auth" | "bad_request" | "not_found" | "conflict";

const RETRYABLE: Readonly<Record<RouterErrorKind, boolean>> = {
  unavailable: true,
  timeout: true,
  rate_limited: true,
  auth: false,
  bad_request: false,
  not_found: false,
  conflict: false,
};

export class RouterError extends Error {
  readonly provider: RouterProvider;
  readonly kind: RouterErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly code: number | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(provider: RouterProvider, kind: RouterErrorKind, message: string, details: { status?: number; code?: number; retryAfterSeconds?: number } = {}) {
    super(message);
    this.name = "RouterError";
    this.provider = provider;
    this.kind = kind;
    this.retryable = RETRYABLE[kind];
    this.status = details.status;
    this.code = details.code;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

export interface DomainRouter {
  readonly provider: RouterProvider;
  /** The custom hostname for `hostname`, or null when the router has none. */
  find(hostname: string): Promise<CustomHostname | null>;
  /** Creates it; a hostname the router already has is a `conflict`. */
  create(hostname: string): Promise<CustomHostname>;
  /** Deletes it by id; an id the router does not know is `not_found`. */
  remove(id: string): Promise<void>;
}

/** The hostname's custom hostname: the one the router has, else a new one (a create that lost a race finds it). */
export async function ensureRouted(router: DomainRouter, hostname: string): Promise<CustomHostname> {
  const existing = await router.find(hostname);
  if (existing) return existing;
  try {
    return await router.create(hostname);
  } catch (e) {
    if (!(e instanceof RouterError) || e.kind !== "conflict") throw e;
    const raced = await router.find(hostname);
    if (!raced) throw e;
    return raced;
  }
}

/** Deletes a custom hostname; one the router no longer has counts as deleted. */
export async function ensureUnrouted(router: DomainRouter, id: string): Promise<void> {
  try {
    await router.remove(id);
  } catch (e) {
    if (!(e instanceof RouterError) || e.kind !== "not_found") throw e;
  }
}
