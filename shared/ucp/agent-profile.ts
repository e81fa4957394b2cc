import { appUrlProblem } from "../apps/url";
import { UCP_VERSION } from "./profile";
import { parseDictionary } from "./structured";

/**
 * The agent platform behind a request (UCP "Identity & Authentication"): its `UCP-Agent` header names its
 * profile, which the business MUST fetch and validate before serving it, and whose `keys[]` verify its
 * signatures and whose order capability names where order updates go. Fetched as an untrusted URL: https to
 * a public host only (the apps' URL policy: no private ranges, no credentials, port 443), no redirects, a
 * deadline and a size cap, and cached (the specification asks for at least 60 seconds).
 */

export type ProfileFailure = "invalid_profile_url" | "profile_unreachable" | "profile_malformed" | "version_unsupported";

export interface AgentProfile {
  url: string;
  version: string;
  /** The platform's published keys (a JWK Set): what its signatures are verified with. */
  keys: Record<string, unknown>[];
  /** Where the platform takes order updates (`dev.ucp.shopping.order` config.webhook_url), if it does. */
  webhookUrl?: string;
}

export type ProfileAnswer = { ok: true; profile: AgentProfile } | { ok: false; code: ProfileFailure; content: string; status: 400 | 422 | 424 };

export interface ProfileFetchOptions {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  /** Development and test: http and loopback hosts allowed (an agent on the developer's machine). */
  allowLocal: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

export const PROFILE_MAX_BYTES = 65_536;
export const PROFILE_TIMEOUT_MS = 3_000;

const fail = (code: ProfileFailure, content: string): ProfileAnswer => ({
  ok: false,
  code,
  content,
  status: code === "invalid_profile_url" ? 400 : code === "profile_unreachable" ? 424 : 422,
});

/** The profile URL a `UCP-Agent` header names (`profile="https://…"`), or why it names none. */
export function agentProfileUrl(header: string | null, allowLocal: boolean): { ok: true; url: string } | Extract<ProfileAnswer, { ok: false }> {
  const member = parseDictionary(header)?.get("profile");
  if (!member || member.kind !== "string") return fail("invalid_profile_url", 'Send UCP-Agent: profile="https://<your platform>/.well-known/ucp".') as Extract<ProfileAnswer, { ok: false }>;
  const problem = appUrlProblem(member.value, allowLocal);
  if (problem) return fail("invalid_profile_url", `UCP-Agent's profile URL cannot be fetched: ${problem}`) as Extract<ProfileAnswer, { ok: false }>;
  return { ok: true, url: member.value };
}

/** Reads at most `max` bytes of the body; undefined past that. */
async function boundedText(response: Response, max: number): Promise<string | undefined> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The platform profile's parts we use, or why it is not one. */
export function readAgentProfile(url: string, body: unknown): ProfileAnswer {
  if (!isObject(body) || !isObject(body.ucp)) return fail("profile_malformed", "The profile is not a UCP profile (no `ucp` object).");
  const version = body.ucp.version;
  if (typeof version !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(version)) return fail("profile_malformed", "The profile's ucp.version is not a YYYY-MM-DD version.");
  if (version !== UCP_VERSION) return fail("version_unsupported", `This store speaks UCP ${UCP_VERSION}; the profile asks for ${version}.`);
  const keys = body.keys === undefined ? [] : body.keys;
  if (!Array.isArray(keys) || !keys.every((k) => isObject(k) && typeof k.kid === "string" && typeof k.kty === "string")) {
    return fail("profile_malformed", "The profile's keys must be a JWK Set: objects with kid and kty.");
  }
  if (keys.some((k) => ["d", "p", "q", "dp", "dq", "qi", "k"].some((m) => m in (k as object)))) return fail("profile_malformed", "The profile publishes private key material.");
  const order = isObject(body.ucp.capabilities) ? body.ucp.capabilities["dev.ucp.shopping.order"] : undefined;
  const config = Array.isArray(order) && isObject(order[0]) && isObject(order[0].config) ? order[0].config : undefined;
  const webhookUrl = typeof config?.webhook_url === "string" ? config.webhook_url : undefined;
  return { ok: true, profile: { url, version, keys: keys as Record<string, unknown>[], ...(webhookUrl ? { webhookUrl } : {}) } };
}

/** Fetches and reads the platform's profile. */
export async function fetchAgentProfile(url: string, options: ProfileFetchOptions): Promise<ProfileAnswer> {
  const problem = appUrlProblem(url, options.allowLocal);
  if (problem) return fail("invalid_profile_url", `The profile URL cannot be fetched: ${problem}`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? PROFILE_TIMEOUT_MS);
  try {
    const response = await options.fetch(url, { method: "GET", headers: { accept: "application/json" }, redirect: "manual", signal: controller.signal });
    if (response.status !== 200) {
      await response.body?.cancel();
      return fail("profile_unreachable", `The profile answered ${response.status} (redirects are not followed).`);
    }
    const text = await boundedText(response, options.maxBytes ?? PROFILE_MAX_BYTES);
    if (text === undefined) return fail("profile_malformed", `The profile is larger than ${options.maxBytes ?? PROFILE_MAX_BYTES} bytes.`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail("profile_malformed", "The profile is not JSON.");
    }
    return readAgentProfile(url, body);
  } catch {
    return fail("profile_unreachable", controller.signal.aborted ? "The profile did not answer in time." : "The profile could not be fetched.");
  } finally {
    clearTimeout(timer);
  }
}
