/**
 * Verifies a webhook from Commerce: true when the timestamp is within 5 minutes of `now` and one of the
 * `v1=` signatures is HMAC-SHA256(secret, "<timestamp>.<raw body>"). Use the raw body exactly as received.
 * Web Crypto only: Node 20+, Deno, Bun, Cloudflare Workers and browsers.
 */
export async function verifyCommerceWebhook(secret: string, headers: Headers, rawBody: string, now = Date.now()): Promise<boolean> {
  const timestamp = headers.get("x-commerce-timestamp") ?? "";
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > 300) return false;
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = enc.encode(`${timestamp}.${rawBody}`);
  for (const part of (headers.get("x-commerce-signature") ?? "").split(",")) {
    const hex = /^v1=([0-9a-f]{64})$/.exec(part.trim())?.[1];
    if (!hex) continue;
    const signature = new Uint8Array(32).map((_, i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16));
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, signature, signed)) return true;
  }
  return false;
}
