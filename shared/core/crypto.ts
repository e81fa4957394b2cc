/** HMAC-SHA256 through Web Crypto (workerd and Node alike), hex as the providers send it. */
import { base64Url, sha256Hex } from "#shared/core/tokens";

const enc = new TextEncoder();

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(message))));
}

/** True when `signature` is the hex HMAC of `message`; the comparison takes the same time wherever they differ. */
export async function verifyHmacSha256Hex(secret: string, message: string, signature: string | null | undefined): Promise<boolean> {
  if (!secret || typeof signature !== "string" || signature.length === 0) return false;
  const expected = await hmacSha256Hex(secret, message);
  return constantTimeEqual(enc.encode(expected), enc.encode(signature));
}

/** A short, stable id from text: the first `chars` hex digits of its SHA-256. */
export async function digestId(text: string, chars = 20): Promise<string> {
  return (await sha256Hex(text)).slice(0, chars);
}

export function encodeJson(value: unknown): string {
  return base64Url(enc.encode(JSON.stringify(value)));
}

/** The value of base64url JSON, or undefined when it is not that. */
export function decodeJson(text: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * A webhook whose hex HMAC-SHA256 signature (over the raw body) checks, opened: its dedupe key (the
 * provider's event id header, else the body's digest) and its JSON (undefined when the body is not JSON).
 * Null when the signature is missing or wrong, before anything in the body is read.
 */
export async function openSignedWebhook(
  rawBody: string,
  signature: string | null,
  eventIdHeader: string | null,
  secret: string,
): Promise<{ eventId: string; json: unknown } | null> {
  if (!(await verifyHmacSha256Hex(secret, rawBody, signature))) return null;
  const eventId = eventIdHeader || `body:${await digestId(rawBody, 40)}`;
  try {
    return { eventId, json: JSON.parse(rawBody) };
  } catch {
    return { eventId, json: undefined };
  }
}

/** `<version>.<base64url JSON>.<hex HMAC-SHA256 of the first two parts>`: a token that carries its own data. */
export async function signToken(version: string, payload: unknown, secret: string): Promise<string> {
  const body = `${version}.${encodeJson(payload)}`;
  return `${body}.${await hmacSha256Hex(secret, body)}`;
}

/** A token's payload (unchecked JSON) when its version and signature check, else null. */
export async function openToken(token: string, version: string, secret: string): Promise<unknown> {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== version) return null;
  const [, payload, sig] = parts as [string, string, string];
  if (!(await verifyHmacSha256Hex(secret, `${version}.${payload}`, sig))) return null;
  return decodeJson(payload) ?? null;
}

/** Compares in time that depends only on the length, never on where the inputs differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}
