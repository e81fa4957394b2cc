import { describe, expect, it } from "vitest";
import { agentProfileUrl, fetchAgentProfile, PROFILE_MAX_BYTES } from "./agent-profile";
import { generateSigningKey } from "./keys";

/** An agent platform's profile, fetched as an untrusted URL (shared/ucp/agent-profile.ts), with the protocol's failure codes. */

const URL_ = "https://agent.example/.well-known/ucp";

async function platformProfile(extra: Record<string, unknown> = {}) {
  const { publicJwk } = await generateSigningKey();
  return {
    ucp: {
      version: "2026-08-25",
      services: {},
      capabilities: { "dev.ucp.shopping.order": [{ version: "2026-08-25", config: { webhook_url: "https://agent.example/ucp/orders" } }] },
      payment_handlers: {},
      ...extra,
    },
    keys: [publicJwk],
  };
}

const answering = (body: BodyInit | null, init: ResponseInit = {}) => {
  const seen: { url: string; init: RequestInit }[] = [];
  const fetch = async (url: string, request: RequestInit) => {
    seen.push({ url, init: request });
    return new Response(body, { status: 200, headers: { "content-type": "application/json" }, ...init });
  };
  return { fetch, seen };
};

describe("an agent's UCP profile", () => {
  it("UCP-Agent names it as an https URL to a public host; anything else is invalid_profile_url", () => {
    expect(agentProfileUrl(`profile="${URL_}"`, false)).toEqual({ ok: true, url: URL_ });
    for (const bad of [null, "", "profile=https://agent.example", 'profile="http://agent.example/p"', 'profile="https://10.0.0.1/p"', 'profile="https://localhost/p"', 'profile="https://u:p@agent.example/p"', 'other="https://agent.example/p"']) {
      expect(agentProfileUrl(bad, false), String(bad)).toMatchObject({ ok: false, code: "invalid_profile_url", status: 400 });
    }
    expect(agentProfileUrl('profile="http://127.0.0.1:8790/.well-known/ucp"', true)).toMatchObject({ ok: true });
  });

  it("reads its version, its keys and where order updates go; fetched without following redirects", async () => {
    const profile = await platformProfile();
    const { fetch, seen } = answering(JSON.stringify(profile));
    const answer = await fetchAgentProfile(URL_, { fetch, allowLocal: false });
    expect(answer).toEqual({ ok: true, profile: { url: URL_, version: "2026-08-25", keys: profile.keys, webhookUrl: "https://agent.example/ucp/orders" } });
    expect(seen[0]!.init.redirect).toBe("manual");
  });

  it("refuses with the protocol's codes: a redirect or error, a slow answer, too big, not JSON, not a profile, another version, private keys", async () => {
    const profile = await platformProfile();
    const opts = (fetch: (u: string, i: RequestInit) => Promise<Response>) => ({ fetch, allowLocal: false, timeoutMs: 200 });
    expect(await fetchAgentProfile(URL_, opts(answering(null, { status: 302, headers: { location: "https://evil.example/" } }).fetch))).toMatchObject({ code: "profile_unreachable", status: 424 });
    expect(await fetchAgentProfile(URL_, opts(answering("nope", { status: 500 }).fetch))).toMatchObject({ code: "profile_unreachable" });
    const slow = (_u: string, init: RequestInit) =>
      new Promise<Response>((_, reject) => init.signal?.addEventListener("abort", () => reject(new Error("aborted"))));
    expect(await fetchAgentProfile(URL_, opts(slow))).toMatchObject({ code: "profile_unreachable", content: expect.stringMatching(/in time/) });
    expect(await fetchAgentProfile(URL_, opts(answering("x".repeat(PROFILE_MAX_BYTES + 1)).fetch))).toMatchObject({ code: "profile_malformed" });
    expect(await fetchAgentProfile(URL_, opts(answering("{not json").fetch))).toMatchObject({ code: "profile_malformed", status: 422 });
    expect(await fetchAgentProfile(URL_, opts(answering(JSON.stringify({ keys: [] })).fetch))).toMatchObject({ code: "profile_malformed" });
    expect(await fetchAgentProfile(URL_, opts(answering(JSON.stringify(await platformProfile({ version: "2026-04-08" }))).fetch))).toMatchObject({ code: "version_unsupported", status: 422 });
    const leaked = { ...profile, keys: [{ ...profile.keys[0], d: "secret" }] };
    expect(await fetchAgentProfile(URL_, opts(answering(JSON.stringify(leaked)).fetch))).toMatchObject({ code: "profile_malformed" });
    expect(await fetchAgentProfile("https://192.168.1.1/.well-known/ucp", opts(answering(JSON.stringify(profile)).fetch))).toMatchObject({ code: "invalid_profile_url" });
  });
});
