/**
 * The one JSON exchange with a provider, used by every adapter (Razorpay, Shiprocket, Cloudflare's API and
 * DNS-over-HTTPS, Turnstile): the response and its JSON body (undefined when it has none or it is not
 * JSON), within a deadline. A request past the deadline is aborted and rejects with `timeout()`; a request
 * that never got an answer rejects with `unreachable(message)`; each adapter names its own errors.
 */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface Exchange {
  fetch: FetchLike;
  timeoutMs: number;
  timeout: () => Error;
  unreachable: (message: string) => Error;
}

/** Whole seconds from a Retry-After header (seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export async function exchangeJson(x: Exchange, url: string, init: RequestInit): Promise<{ response: Response; body: unknown }> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(x.timeout());
    }, x.timeoutMs);
  });
  try {
    const response = await Promise.race([x.fetch(url, { ...init, signal: controller.signal }), expired]);
    const text = await Promise.race([response.text(), expired]);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { response, body };
  } catch (e) {
    if (controller.signal.aborted) throw x.timeout();
    throw x.unreachable(e instanceof Error ? e.message : String(e));
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}
