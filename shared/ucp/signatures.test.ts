import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateSigningKey, openPrivateKey, sealPrivateKey, thumbprint, type PublicJwk } from "./keys";
import { contentDigest, signMessage, verifyMessage, type HttpMessage } from "./signatures";
import { parseDictionary } from "./structured";

/** RFC 9421 signatures and RFC 9530 digests as UCP uses them (shared/ucp/signatures.ts), and the store's sealed keys. */

const ROOT = "ucp-test-root-secret-0000000000000000";
const STORE = "00000000-0000-4000-8000-000000000042";

async function signer() {
  const { publicJwk, privateJwk } = await generateSigningKey();
  const sealed = await sealPrivateKey(ROOT, STORE, publicJwk.kid, privateJwk);
  return { publicJwk, key: await openPrivateKey(ROOT, STORE, publicJwk.kid, sealed) };
}

const body = new TextEncoder().encode(JSON.stringify({ line_items: [{ item: { id: "v-1" }, quantity: 2 }] }));

function request(overrides: Partial<HttpMessage> = {}, extra: Record<string, string> = {}): HttpMessage {
  return {
    method: "POST",
    url: "https://kurta.shop.test/api/ucp/checkout-sessions",
    headers: new Headers({ "content-type": "application/json", "ucp-agent": 'profile="https://agent.example/.well-known/ucp"', "idempotency-key": "550e8400-e29b-41d4-a716-446655440000", ...extra }),
    body,
    ...overrides,
  };
}

async function signed(m: HttpMessage, key: Awaited<ReturnType<typeof signer>>["key"]): Promise<HttpMessage> {
  const added = await signMessage(m, key, 1_790_000_000);
  const headers = new Headers(m.headers);
  for (const [k, v] of Object.entries(added)) headers.set(k, v);
  return { ...m, headers };
}

const keysOf = (...jwks: PublicJwk[]) => async (kid: string) => jwks.find((k) => k.kid === kid) as Record<string, unknown> | undefined;

describe("UCP message signatures", () => {
  it("a signed request covers UCP's required components and verifies with the signer's published key", async () => {
    const { publicJwk, key } = await signer();
    const m = await signed(request(), key);
    expect(m.headers.get("signature-input")).toBe(
      `sig1=("@method" "@authority" "@path" "ucp-agent" "idempotency-key" "content-digest" "content-type");created=1790000000;keyid="${publicJwk.kid}"`,
    );
    expect(m.headers.get("content-digest")).toBe(await contentDigest(body));
    expect(m.headers.get("signature")).toMatch(/^sig1=:[A-Za-z0-9+/]{86}==:$/); // 64 bytes: raw r||s, not DER
    expect(await verifyMessage(m, keysOf(publicJwk))).toEqual({ ok: true, keyid: publicJwk.kid, label: "sig1" });
  });

  it("a query, a GET without body and a response (its @status) are covered too", async () => {
    const { publicJwk, key } = await signer();
    const get = await signed({ method: "GET", url: "https://kurta.shop.test/api/ucp/checkout-sessions/abc?x=1", headers: new Headers({ "ucp-agent": 'profile="https://a.example/.well-known/ucp"' }) }, key);
    expect(get.headers.get("signature-input")).toMatch(/^sig1=\("@method" "@authority" "@path" "@query" "ucp-agent"\);/);
    expect((await verifyMessage(get, keysOf(publicJwk))).ok).toBe(true);
    const response = await signed({ url: "https://kurta.shop.test/api/ucp/checkout-sessions", status: 201, headers: new Headers({ "content-type": "application/json" }), body }, key);
    expect(response.headers.get("signature-input")).toMatch(/^sig1=\("@status" "content-digest" "content-type"\);/);
    expect((await verifyMessage(response, keysOf(publicJwk))).ok).toBe(true);
    expect((await verifyMessage({ ...response, status: 200 }, keysOf(publicJwk))).ok).toBe(false);
  });

  it("refuses with the protocol's codes: missing, a changed body, path, host or key header, an unknown kid, another algorithm", async () => {
    const { publicJwk, key } = await signer();
    const m = await signed(request(), key);
    expect(await verifyMessage(request(), keysOf(publicJwk))).toMatchObject({ ok: false, code: "signature_missing" });
    expect(await verifyMessage({ ...m, body: new TextEncoder().encode('{"line_items":[]}') }, keysOf(publicJwk))).toMatchObject({ ok: false, code: "digest_mismatch" });
    expect(await verifyMessage({ ...m, url: "https://kurta.shop.test/api/ucp/checkout-sessions/other" }, keysOf(publicJwk))).toMatchObject({ ok: false, code: "signature_invalid" });
    expect(await verifyMessage({ ...m, url: "https://other.shop.test/api/ucp/checkout-sessions" }, keysOf(publicJwk))).toMatchObject({ ok: false, code: "signature_invalid" });
    const replayedKey = new Headers(m.headers);
    replayedKey.set("idempotency-key", "another");
    expect(await verifyMessage({ ...m, headers: replayedKey }, keysOf(publicJwk))).toMatchObject({ ok: false, code: "signature_invalid" });
    expect(await verifyMessage(m, keysOf())).toMatchObject({ ok: false, code: "key_not_found" });
    const p384 = { ...publicJwk, crv: "P-384", alg: "ES384" } as unknown as PublicJwk;
    expect(await verifyMessage(m, keysOf(p384))).toMatchObject({ ok: false, code: "algorithm_unsupported" });
    const other = await signer();
    expect(await verifyMessage(m, async () => ({ ...other.publicJwk, kid: publicJwk.kid }))).toMatchObject({ ok: false, code: "signature_invalid" });
  });

  it("skips a signature that covers less than UCP requires, or has expired, even when it is genuine", async () => {
    const { publicJwk, key } = await signer();
    // Signed before the UCP-Agent header was added: the signature does not cover it.
    const bare = await signed(request({}, {}), key);
    const headers = new Headers(bare.headers);
    headers.delete("ucp-agent");
    const partial = await signed({ ...bare, headers }, key);
    const withAgent = new Headers(partial.headers);
    withAgent.set("ucp-agent", 'profile="https://agent.example/.well-known/ucp"');
    expect(await verifyMessage({ ...partial, headers: withAgent }, keysOf(publicJwk))).toMatchObject({ ok: false, code: "signature_invalid" });
    const expired = new Headers(bare.headers);
    expired.set("signature-input", `${bare.headers.get("signature-input")};expires=1`);
    expect((await verifyMessage({ ...bare, headers: expired }, keysOf(publicJwk))).ok).toBe(false);
  });

  it("keys: the kid is the RFC 7638 thumbprint; a sealed key opens only for its store and kid under the same root secret", async () => {
    const { publicJwk, privateJwk } = await generateSigningKey();
    expect(publicJwk).toMatchObject({ kty: "EC", crv: "P-256", use: "sig", alg: "ES256" });
    expect(publicJwk.kid).toBe(await thumbprint(publicJwk));
    expect(publicJwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(publicJwk)).not.toContain(privateJwk.d!);
    const sealed = await sealPrivateKey(ROOT, STORE, publicJwk.kid, privateJwk);
    expect(sealed).not.toContain(privateJwk.d!);
    await expect(openPrivateKey(ROOT, "00000000-0000-4000-8000-000000000043", publicJwk.kid, sealed)).rejects.toThrow();
    await expect(openPrivateKey(`${ROOT}x`, STORE, publicJwk.kid, sealed)).rejects.toThrow();
    await expect(openPrivateKey(ROOT, STORE, "other-kid", sealed)).rejects.toThrow();
    await expect(openPrivateKey(ROOT, STORE, publicJwk.kid, sealed)).resolves.toMatchObject({ kid: publicJwk.kid });
  });

  it("structured headers: UCP-Agent's profile and a signature's parts parse; any junk parses to nothing, never throws", async () => {
    expect(parseDictionary('profile="https://agent.example/.well-known/ucp"')?.get("profile")).toMatchObject({ kind: "string", value: "https://agent.example/.well-known/ucp" });
    const input = parseDictionary('sig1=("@method" "@path");created=1;keyid="k 1", sig2=("@status");keyid="x"');
    expect(input?.get("sig1")).toMatchObject({ kind: "list", items: ["@method", "@path"], params: { created: 1, keyid: "k 1" } });
    expect(input?.get("sig2")).toMatchObject({ kind: "list", items: ["@status"] });
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (junk) => {
        parseDictionary(junk);
      }),
      { numRuns: 2000 },
    );
    const m = request({}, { "signature-input": "sig1=(", signature: "sig1=:%%%:" });
    await expect(verifyMessage(m, async () => undefined)).resolves.toMatchObject({ ok: false });
  });
});
