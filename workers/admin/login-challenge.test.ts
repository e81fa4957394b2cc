import { describe, expect, it } from "vitest";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import { ADMIN, page, PASSWORD, person as personIn, randomIp } from "../../test/admin";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import worker from "./index";
import { LOGIN_EMAIL_POLICY, LOGIN_IP_POLICY } from "./login";

/** The sign-in's person check once an address or an account is past its threshold (issue 20 item 9). */
const db = testDb();
const person = () => personIn(db);
const WIDGET = 'name="cf-turnstile-response" value="XXXX.DUMMY.TOKEN.XXXX"';

/** POST /login from `ip`, with the widget's token when one is given (no token field at all otherwise). */
const attempt = (email: string, password: string, ip: string, token?: string, env: Record<string, unknown> = {}) =>
  call(
    worker,
    `${ADMIN}/login`,
    {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ADMIN, "cf-connecting-ip": ip },
      body: new URLSearchParams({ email, password, ...(token === undefined ? {} : { "cf-turnstile-response": token }) }).toString(),
      redirect: "manual",
    },
    env,
  );
const loginPage = async (ip: string) => (await page(null, "/login", { headers: { "cf-connecting-ip": ip } })).text();

describe("sign-in past a threshold needs a passed person check", () => {
  it(`${LOGIN_IP_POLICY.challengeAfter} sign-ins from an address need none; then the form carries the widget and an attempt without a passed check is 403`, async () => {
    const p = await person();
    const ip = randomIp();
    expect(await loginPage(ip)).not.toContain("data-challenge");
    for (let i = 0; i < LOGIN_IP_POLICY.challengeAfter!; i++) expect((await attempt(p.email, PASSWORD, ip)).status).toBe(303);
    expect(await loginPage(ip)).toContain(WIDGET);
    const missing = await attempt(p.email, PASSWORD, ip);
    expect(missing.status).toBe(403);
    const said = await missing.text();
    expect(said).toContain("Confirm you are a person to sign in");
    expect(said).toContain(WIDGET);
    expect(said).toContain(`value="${p.email}"`);
    const wrong = await attempt(p.email, PASSWORD, ip, "0.made-up");
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain("did not pass");
    expect((await attempt(p.email, PASSWORD, ip, DUMMY_TOKEN)).status).toBe(303);
    // A check that always fails (Turnstile's failing test secret) lets no one through.
    expect((await attempt(p.email, PASSWORD, ip, DUMMY_TOKEN, { TURNSTILE_SECRET_KEY: "2x0000000000000000000000000000000AA" })).status).toBe(403);
  });

  it(`${LOGIN_EMAIL_POLICY.challengeAfter} wrong passwords for an email, from any addresses, and its next attempt needs the check; the last refusal shows the widget ahead`, async () => {
    const p = await person();
    const pages: string[] = [];
    for (let i = 0; i < LOGIN_EMAIL_POLICY.challengeAfter!; i++) {
      const res = await attempt(p.email, "not the password", randomIp());
      expect(res.status).toBe(401);
      pages.push(await res.text());
    }
    expect(pages[0]).not.toContain("data-challenge");
    expect(pages.at(-1)).toContain(WIDGET);
    expect((await attempt(p.email, PASSWORD, randomIp())).status).toBe(403);
    expect((await attempt(p.email, PASSWORD, randomIp(), DUMMY_TOKEN)).status).toBe(303);
  });

  it("addresses of one IPv6 /64 count as one", async () => {
    const p = await person();
    const net = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:7`;
    for (let i = 0; i < LOGIN_IP_POLICY.challengeAfter!; i++) expect((await attempt(p.email, PASSWORD, `${net}::${(i + 1).toString(16)}`)).status).toBe(303);
    expect((await attempt(p.email, PASSWORD, `${net}:ffff:ffff:ffff:ffff`)).status).toBe(403);
    expect((await attempt(p.email, PASSWORD, `${net}1::1`)).status).toBe(303);
  });
});
