/**
 * One webhook POST to an app (docs/apps.md): the body and headers Commerce promises, a 10 s deadline, no
 * redirects followed. It never throws: every way it can go wrong is an outcome the delivery log shows.
 */
import { signatureHeader } from "./secrets";

/** The outgoing fetch: the runtime's in Workers, a captured one in tests. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export const SEND_TIMEOUT_MS = 10_000;

export interface WebhookEvent {
  eventId: string;
  kind: string;
  createdAt: Date;
  storeId: string;
  payload: Record<string, unknown>;
}

export interface WebhookPost {
  url: string;
  deliveryId: string;
  event: WebhookEvent;
  /** The secrets to sign with: the current one, and the previous one while it is still valid. */
  secrets: readonly string[];
  now: Date;
}

export type SendOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** The JSON body apps receive. */
export function webhookBody(e: WebhookEvent): string {
  return JSON.stringify({ id: e.eventId, type: e.kind, createdAt: e.createdAt.toISOString(), storeId: e.storeId, data: e.payload });
}

export async function webhookHeaders(post: WebhookPost, body: string): Promise<Record<string, string>> {
  const timestamp = Math.floor(post.now.getTime() / 1000);
  return {
    "content-type": "application/json",
    "user-agent": "Commerce-Webhooks/1",
    "x-commerce-event": post.event.kind,
    "x-commerce-delivery": post.deliveryId,
    "x-commerce-timestamp": String(timestamp),
    "x-commerce-signature": await signatureHeader(post.secrets, timestamp, body),
  };
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 300);

export async function postWebhook(fetch: FetchLike, post: WebhookPost, timeoutMs = SEND_TIMEOUT_MS): Promise<SendOutcome> {
  const body = webhookBody(post.event);
  return postSigned(fetch, post.url, await webhookHeaders(post, body), body, timeoutMs);
}

/** One POST of a body and its headers (signed by the caller), with the deadline and outcomes above; also UCP's order updates (shared/ucp/order-webhooks.ts). */
export async function postSigned(fetch: FetchLike, url: string, headers: Record<string, string>, body: string, timeoutMs = SEND_TIMEOUT_MS): Promise<SendOutcome> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve("timeout");
    }, timeoutMs);
  });
  try {
    const res = await Promise.race([fetch(url, { method: "POST", headers, body, redirect: "manual", signal: controller.signal }), expired]);
    if (res === "timeout") return { ok: false, status: null, error: `No answer within ${timeoutMs / 1000} s` };
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    const why = res.status >= 300 && res.status < 400 ? "redirects are not followed" : res.statusText;
    return { ok: false, status: res.status, error: oneLine(`HTTP ${res.status}${why ? ` ${why}` : ""}`) };
  } catch (e) {
    return { ok: false, status: null, error: oneLine(`Could not connect: ${e instanceof Error ? e.message : String(e)}`) };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
