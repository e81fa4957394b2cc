import { importVerifyKey, type SigningKey } from "./keys";
import { parseDictionary, sfString } from "./structured";

/**
 * RFC 9421 HTTP Message Signatures as UCP uses them (its "Message Signatures": ES256 with raw r||s, the label
 * `sig1`, `keyid` naming a `kid` of the signer's profile), with RFC 9530 `Content-Digest` over the raw body
 * bytes. Requests, responses and webhooks alike; the covered components are the protocol's required set, and
 * a verifier skips a signature that covers less.
 */

export interface HttpMessage {
  /** A request's method; absent for a response. */
  method?: string;
  /** The request's URL (a response: the URL of the request it answers). */
  url: string;
  /** A response's status. */
  status?: number;
  headers: Headers;
  /** The raw body bytes, exactly as sent. */
  body?: Uint8Array | null;
}

export type SignatureFailure = "signature_missing" | "signature_invalid" | "key_not_found" | "digest_mismatch" | "algorithm_unsupported";

export type Verified = { ok: true; keyid: string; label: string } | { ok: false; code: SignatureFailure; content: string };

const hasBody = (m: HttpMessage) => !!m.body && m.body.length > 0;
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** `sha-256=:<base64>:` of the raw bytes (RFC 9530). */
export async function contentDigest(body: Uint8Array): Promise<string> {
  return `sha-256=:${b64(new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(body))))}:`;
}

/** Whether the header's sha-256 digest is the body's (UCP requires sha-256; other algorithms alone do not count). */
export async function digestMatches(header: string | null, body: Uint8Array): Promise<boolean> {
  const member = parseDictionary(header)?.get("sha-256");
  if (!member || member.kind !== "bytes") return false;
  const actual = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(body)));
  if (member.value.length !== actual.length) return false;
  let diff = 0;
  for (let i = 0; i < actual.length; i++) diff |= actual[i]! ^ member.value[i]!;
  return diff === 0;
}

/** The components UCP requires a signature of this message to cover. */
export function requiredComponents(m: HttpMessage): string[] {
  const body = hasBody(m) ? ["content-digest", "content-type"] : [];
  if (m.method === undefined) return ["@status", ...body];
  const url = new URL(m.url);
  const method = m.method.toUpperCase();
  return [
    "@method",
    "@authority",
    "@path",
    ...(url.search ? ["@query"] : []),
    ...(m.headers.has("ucp-agent") ? ["ucp-agent"] : []),
    ...(["POST", "PUT", "PATCH", "DELETE"].includes(method) && m.headers.has("idempotency-key") ? ["idempotency-key"] : []),
    ...body,
  ];
}

/** One component's value (RFC 9421 §2.1, §2.2), or undefined when the message has none. */
function componentValue(name: string, m: HttpMessage): string | undefined {
  const url = new URL(m.url);
  switch (name) {
    case "@method":
      return m.method?.toUpperCase();
    case "@authority":
      return url.host.toLowerCase();
    case "@path":
      return url.pathname || "/";
    case "@query":
      return url.search || "?";
    case "@target-uri":
      return url.href;
    case "@scheme":
      return url.protocol.replace(/:$/, "");
    case "@status":
      return m.status === undefined ? undefined : String(m.status);
    default: {
      if (name.startsWith("@") || name.includes(";")) return undefined;
      const value = m.headers.get(name);
      return value === null ? undefined : value.trim();
    }
  }
}

/** The signature base (RFC 9421 §2.5): a line per component, then the signature's parameters as serialized. */
export function signatureBase(components: readonly string[], params: string, m: HttpMessage): string | undefined {
  const lines: string[] = [];
  for (const name of components) {
    const value = componentValue(name, m);
    if (value === undefined) return undefined;
    lines.push(`"${name}": ${value}`);
  }
  lines.push(`"@signature-params": ${params}`);
  return lines.join("\n");
}

/**
 * Signs a message with the store's key: its `Content-Digest` (when it has a body), `Signature-Input` and
 * `Signature` headers, to add to it. `created` is the signing time in seconds.
 */
export async function signMessage(m: HttpMessage, key: SigningKey, created = Math.floor(Date.now() / 1000)): Promise<Record<string, string>> {
  const added: Record<string, string> = {};
  const headers = new Headers(m.headers);
  if (hasBody(m)) {
    added["Content-Digest"] = await contentDigest(m.body!);
    headers.set("content-digest", added["Content-Digest"]);
  }
  const signed = { ...m, headers };
  const components = requiredComponents(signed);
  const params = `(${components.map((c) => `"${c}"`).join(" ")});created=${created};keyid=${sfString(key.kid)}`;
  const base = signatureBase(components, params, signed)!;
  const signature = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey, new TextEncoder().encode(base)));
  added["Signature-Input"] = `sig1=${params}`;
  added["Signature"] = `sig1=:${b64(signature)}:`;
  return added;
}

const FAILURE_ORDER: SignatureFailure[] = ["signature_missing", "signature_invalid", "algorithm_unsupported", "key_not_found"];

/**
 * Verifies a signed message (UCP's identity resolution, steps on the signatures): a body's digest first,
 * then each labelled signature that covers the required components, its key found by `keyid` through
 * `keyFor` (the signer's profile `keys[]`); the message is accepted when one signature verifies.
 */
export async function verifyMessage(m: HttpMessage, keyFor: (keyid: string) => Promise<Record<string, unknown> | undefined>, now = Math.floor(Date.now() / 1000)): Promise<Verified> {
  const inputs = parseDictionary(m.headers.get("signature-input"));
  const values = parseDictionary(m.headers.get("signature"));
  if (!inputs || !values || inputs.size === 0) return { ok: false, code: "signature_missing", content: "Sign the request: Signature-Input and Signature (RFC 9421) are required here." };
  if (hasBody(m) && !(await digestMatches(m.headers.get("content-digest"), m.body!))) {
    return { ok: false, code: "digest_mismatch", content: "Content-Digest must be the sha-256 of the raw body bytes (RFC 9530)." };
  }
  const required = requiredComponents(m);
  let worst: SignatureFailure = "signature_invalid";
  const note = (code: SignatureFailure) => {
    if (FAILURE_ORDER.indexOf(code) > FAILURE_ORDER.indexOf(worst)) worst = code;
  };
  for (const [label, input] of inputs) {
    const value = values.get(label);
    if (input.kind !== "list" || !value || value.kind !== "bytes") continue;
    // A signature that does not cover what UCP requires is skipped, whatever else it covers.
    if (!required.every((c) => input.items.includes(c))) continue;
    const keyid = input.params.keyid;
    if (typeof keyid !== "string") continue;
    if (typeof input.params.expires === "number" && input.params.expires < now) continue;
    const jwk = await keyFor(keyid);
    if (!jwk) {
      note("key_not_found");
      continue;
    }
    const key = await importVerifyKey(jwk);
    if (!key) {
      note("algorithm_unsupported");
      continue;
    }
    const base = signatureBase(input.items, input.raw, m);
    if (base === undefined || value.value.length !== 64) continue;
    const ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, new Uint8Array(value.value), new TextEncoder().encode(base));
    if (ok) return { ok: true, keyid, label };
  }
  const words: Record<SignatureFailure, string> = {
    signature_missing: "Sign the request (RFC 9421).",
    signature_invalid: `No signature verified. A signature must cover ${required.join(", ")} and be ES256 over that base with a key of your profile.`,
    key_not_found: "The signature's keyid is not a kid in your profile's keys[].",
    algorithm_unsupported: "The signature's key is not one this store verifies (ES256, EC P-256).",
    digest_mismatch: "Content-Digest does not match the body.",
  };
  return { ok: false, code: worst, content: words[worst] };
}
