import { describe, expect, it } from "vitest";
import { ChallengeError, type ChallengeVerdict } from "./challenge";
import { DUMMY_TOKEN, localChallenge, PASSING_SECRET_KEY, PASSING_SITE_KEY } from "./local";
import { challengeConfigFromEnv, challengeFor } from "./select";
import { siteverifyServer } from "../../test/fakes/turnstile-server";
import { turnstileChallenge } from "./turnstile";
import { ChallengeWidget } from "./widget";

/** The challenge port: the Turnstile adapter against a local siteverify, the local adapter's test keys, the selection. */
const SECRET = "0x4AAAAAAAtestsecretfortheadapter000";
const SITE = "0x4AAAAAAAsitekey0001";

function setup(timeoutMs = 1_000) {
  let clock = Date.now();
  const server = siteverifyServer({ secret: SECRET, now: () => clock });
  const challenge = turnstileChallenge({ siteKey: SITE, secretKey: SECRET, url: server.url, fetch: server.fetch, timeoutMs });
  return { server, challenge, advance: (ms: number) => void (clock += ms) };
}

const errorOf = (p: Promise<unknown>) =>
  p.then(
    (v) => `resolved ${JSON.stringify(v)}`,
    (e: unknown) => (e instanceof ChallengeError ? e.kind : `not a ChallengeError: ${String(e)}`),
  );
const failed = (reason: string, code: string): ChallengeVerdict => ({ passed: false, reason, codes: [code] }) as ChallengeVerdict;

describe("Turnstile adapter (siteverify)", () => {
  it("passes an issued token once, sending secret, response, remoteip and an idempotency key as JSON", async () => {
    const { server, challenge } = setup();
    const token = server.issue();
    expect(await challenge.verify(token, "203.0.113.7")).toEqual({ passed: true });
    expect(server.requests).toEqual(["POST /turnstile/v0/siteverify"]);
    expect(server.bodies[0]).toMatchObject({ secret: SECRET, response: token, remoteip: "203.0.113.7" });
    expect(String(server.bodies[0]!["idempotency_key"])).toMatch(/^[0-9a-f-]{36}$/);
    // Single use: the same token again is a duplicate.
    expect(await challenge.verify(token, "203.0.113.7")).toEqual(failed("expired", "timeout-or-duplicate"));
  });

  it("refuses made-up, missing, oversized and late tokens; sends no remoteip it does not know", async () => {
    const { server, challenge, advance } = setup();
    expect(await challenge.verify("not-a-token", undefined)).toEqual(failed("failed", "invalid-input-response"));
    expect(server.bodies[0]).not.toHaveProperty("remoteip");
    const before = server.requests.length;
    expect(await challenge.verify(undefined, undefined)).toEqual(failed("missing", "missing-input-response"));
    expect(await challenge.verify("", undefined)).toEqual(failed("missing", "missing-input-response"));
    expect(await challenge.verify("x".repeat(2049), undefined)).toEqual(failed("failed", "invalid-input-response"));
    expect(server.requests.length).toBe(before); // refused without asking
    const token = server.issue();
    advance(300_000);
    expect(await challenge.verify(token, undefined)).toEqual(failed("expired", "timeout-or-duplicate"));
  });

  it("retries a check that failed on the way once, with the same idempotency key, and then passes", async () => {
    const { server, challenge } = setup();
    server.faults.push({ status: 503 });
    const token = server.issue();
    expect(await challenge.verify(token, undefined)).toEqual({ passed: true });
    expect(server.requests).toHaveLength(2);
    server.state.internalErrors = 1;
    const second = server.issue();
    expect(await challenge.verify(second, undefined)).toEqual({ passed: true });
    const keys = server.bodies.slice(-2).map((b) => b["idempotency_key"]);
    expect(keys[0]).toBe(keys[1]);
  });

  it("turns a provider that fails twice, a slow or unreachable one, and garbage into 'unavailable'; a refused secret into 'misconfigured'", async () => {
    const { server, challenge } = setup(100);
    server.faults.push({ status: 500, times: 2 });
    expect(await errorOf(challenge.verify(server.issue(), undefined))).toBe("unavailable");
    server.faults.push({ status: 429, retryAfter: 5, times: 2 });
    expect(await errorOf(challenge.verify(server.issue(), undefined))).toBe("unavailable");
    server.faults.push({ delayMs: 300, times: 2 });
    expect(await errorOf(challenge.verify(server.issue(), undefined))).toBe("unavailable");
    const down = turnstileChallenge({ siteKey: SITE, secretKey: SECRET, url: server.url, fetch: () => Promise.reject(new TypeError("connection refused")) });
    expect(await errorOf(down.verify("t", undefined))).toBe("unavailable");
    const garbage = turnstileChallenge({ siteKey: SITE, secretKey: SECRET, url: server.url, fetch: async () => new Response("<html>", { status: 200 }) });
    expect(await errorOf(garbage.verify("t", undefined))).toBe("unavailable");
    const wrongSecret = turnstileChallenge({ siteKey: SITE, secretKey: `${SECRET}x`, url: server.url, fetch: server.fetch });
    expect(await errorOf(wrongSecret.verify(server.issue(), undefined))).toBe("misconfigured");
  });
});

describe("local challenge (Turnstile's test keys)", () => {
  it("the passing secret accepts only the dummy token; the failing one nothing; the spent one says duplicate", async () => {
    const pass = localChallenge({ siteKey: PASSING_SITE_KEY, secretKey: PASSING_SECRET_KEY });
    expect(await pass.verify(DUMMY_TOKEN, undefined)).toEqual({ passed: true });
    expect(await pass.verify("0.a-real-looking-token", undefined)).toEqual(failed("failed", "invalid-input-response"));
    expect(await pass.verify(undefined, undefined)).toEqual(failed("missing", "missing-input-response"));
    const fail = localChallenge({ siteKey: "2x00000000000000000000AB", secretKey: "2x0000000000000000000000000000000AA" });
    expect(await fail.verify(DUMMY_TOKEN, undefined)).toEqual(failed("failed", "invalid-input-response"));
    const spent = localChallenge({ siteKey: PASSING_SITE_KEY, secretKey: "3x0000000000000000000000000000000AA" });
    expect(await spent.verify(DUMMY_TOKEN, undefined)).toEqual(failed("expired", "timeout-or-duplicate"));
    expect(() => localChallenge({ siteKey: SITE, secretKey: SECRET })).toThrow(RangeError);
  });

  it("its widget does what the test site key's does: the dummy token, nothing, or a box to tick", () => {
    const html = (siteKey: string) => String(<ChallengeWidget widget={{ provider: "local", siteKey }} action="checkout" />);
    expect(html(PASSING_SITE_KEY)).toContain(`name="cf-turnstile-response" value="${DUMMY_TOKEN}"`);
    expect(html("2x00000000000000000000AB")).not.toContain("cf-turnstile-response");
    expect(html("3x00000000000000000000FF")).toMatch(/type="checkbox" name="cf-turnstile-response"/);
    const real = String(<ChallengeWidget widget={{ provider: "turnstile", siteKey: SITE }} action="login" />);
    expect(real).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>');
    expect(real).toContain(`<div class="cf-turnstile" data-sitekey="${SITE}" data-action="login">`);
  });
});

describe("challenge from the configuration", () => {
  it("defaults to the local challenge with the passing test keys in development and tests", async () => {
    expect(challengeConfigFromEnv({ APP_ENV: "test" })).toEqual({ provider: "local", siteKey: PASSING_SITE_KEY, secretKey: PASSING_SECRET_KEY });
    const blocking = challengeConfigFromEnv({ APP_ENV: "development", TURNSTILE_SITE_KEY: "2x00000000000000000000AB", TURNSTILE_SECRET_KEY: "2x0000000000000000000000000000000AA" });
    expect(await challengeFor(blocking).verify(DUMMY_TOKEN, undefined)).toMatchObject({ passed: false });
  });

  it("refuses the local challenge and the test keys in production (the default APP_ENV), naming the variable", () => {
    for (const appEnv of [{ APP_ENV: "production" }, {}]) {
      expect(() => challengeConfigFromEnv(appEnv)).toThrow("CHALLENGE: the local challenge is for development and tests only");
      expect(() => challengeConfigFromEnv({ ...appEnv, CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: SITE, TURNSTILE_SECRET_KEY: PASSING_SECRET_KEY })).toThrow(/TURNSTILE_SECRET_KEY: Turnstile's test keys/);
      expect(() => challengeConfigFromEnv({ ...appEnv, CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: PASSING_SITE_KEY, TURNSTILE_SECRET_KEY: SECRET })).toThrow(/TURNSTILE_SITE_KEY: Turnstile's test keys/);
    }
    expect(challengeConfigFromEnv({ APP_ENV: "production", CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: SITE, TURNSTILE_SECRET_KEY: SECRET })).toEqual({ provider: "turnstile", siteKey: SITE, secretKey: SECRET });
  });

  it("names what is missing or wrong", () => {
    expect(() => challengeConfigFromEnv({ CHALLENGE: "recaptcha" })).toThrow(/CHALLENGE/);
    expect(() => challengeConfigFromEnv({ CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: SITE })).toThrow(/TURNSTILE_SECRET_KEY: is required/);
    expect(() => challengeConfigFromEnv({ CHALLENGE: "turnstile", TURNSTILE_SECRET_KEY: SECRET })).toThrow(/TURNSTILE_SITE_KEY: is required/);
    expect(() => challengeConfigFromEnv({ APP_ENV: "test", TURNSTILE_SECRET_KEY: SECRET })).toThrow(/TURNSTILE_SECRET_KEY: must be one of Turnstile's test secret keys/);
  });

  it("wires the Turnstile adapter to siteverify", async () => {
    const server = siteverifyServer({ secret: SECRET });
    const challenge = challengeFor(challengeConfigFromEnv({ CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: SITE, TURNSTILE_SECRET_KEY: SECRET }), { url: server.url, fetch: server.fetch });
    expect(challenge.widget).toEqual({ provider: "turnstile", siteKey: SITE });
    expect(await challenge.verify(server.issue(), undefined)).toEqual({ passed: true });
  });
});
