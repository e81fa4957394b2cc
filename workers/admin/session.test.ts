import { describe, expect, it } from "vitest";
import { sha256Hex } from "#shared/core/tokens";
import { CHALLENGE_FIELD } from "#shared/challenge/challenge";
import { makeStore, testDb, uniqueSuffix } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { page, PASSWORD, person as personIn, postForm, randomIp, rpc, rpcJson, sessionFor, signIn, type RpcError } from "../../test/admin";
import { ABSOLUTE_LIFETIME_SECONDS, IDLE_TIMEOUT_SECONDS } from "./auth/session";
import { LOGIN_EMAIL_POLICY, LOGIN_IP_POLICY } from "./login";

const db = testDb();
const person = (stores = 1) => personIn(db, stores);

const cookieOf = (res: Response) => res.headers.get("set-cookie") ?? "";
const browserFrom = (res: Response) => ({ cookie: cookieOf(res).split(";")[0]!, csrf: "", sessionId: "" });

describe("POST /login", () => {
  it("signs in, stores only the session id's hash, sets a HttpOnly SameSite=Lax Secure cookie, goes to next", async () => {
    const p = await person();
    const res = await signIn(p.email.toUpperCase(), PASSWORD, { next: "/products?page=2" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/products?page=2");
    const cookie = cookieOf(res);
    expect(cookie).toMatch(/^wc_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(new RegExp(`Max-Age=${ABSOLUTE_LIFETIME_SECONDS}`));
    const id = cookie.split(";")[0]!.split("=")[1]!;
    const { rows } = await db.pool.query<{ id_hash: string; active_store_id: string }>("select id_hash, active_store_id from session where user_id = $1", [p.userId]);
    expect(rows).toEqual([{ id_hash: await sha256Hex(id), active_store_id: p.stores[0]!.id }]);
    // A member of exactly one store works in it at once.
    const me = await rpc(browserFrom(res), "staff/me");
    expect(me.status).toBe(200);
  });

  it("leaves the Secure flag off only on localhost", async () => {
    const p = await person();
    const { call } = await import("../../test/call");
    const worker = (await import("./index")).default;
    const res = await call(worker, "http://localhost:8787/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": randomIp() },
      body: new URLSearchParams({ email: p.email, password: PASSWORD }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    expect(cookieOf(res)).not.toMatch(/Secure/);
  });

  it("refuses a wrong password and an unknown email alike: the form again, 401, one generic message", async () => {
    const p = await person();
    const wrong = await signIn(p.email, "not the password");
    const unknown = await signIn(`nobody-${uniqueSuffix()}@example.test`, PASSWORD);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(cookieOf(res)).toBe("");
      const html = await res.text();
      expect(html).toContain("The email or password is not right");
      expect(html).toMatch(/<form method="post" action="\/login">/);
    }
  });

  it("never redirects off-site after sign-in", async () => {
    const p = await person();
    const res = await signIn(p.email, PASSWORD, { next: "//evil.example/steal" });
    expect(res.headers.get("location")).toBe("/");
  });

  it("a member of several stores signs in without an active store and is sent to the picker", async () => {
    const p = await person(2);
    const res = await signIn(p.email, PASSWORD);
    const browser = browserFrom(res);
    const me = await rpc(browser, "staff/me");
    expect(me.status).toBe(412);
    expect((await rpcJson<RpcError>(me)).data?.reason).toBe("no_store");
    const home = await page(browser, "/");
    expect(home.status).toBe(302);
    expect(home.headers.get("location")).toBe("/select-store?next=%2F");
  });

  it(`limits attempts per email (${LOGIN_EMAIL_POLICY.limit} per window) with 429 and Retry-After`, async () => {
    const p = await person();
    for (let i = 0; i < LOGIN_EMAIL_POLICY.limit; i++) expect((await signIn(p.email, "wrong")).status).toBe(401);
    const limited = await signIn(p.email, PASSWORD); // even the right password waits now
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited.text()).toContain("Too many sign-in attempts");
    expect(cookieOf(limited)).toBe("");
  });

  it("parallel guesses at one email, from many addresses, get no more password checks than the limit", async () => {
    const p = await person();
    const answers = await Promise.all(Array.from({ length: LOGIN_EMAIL_POLICY.limit * 2 }, () => signIn(p.email, "wrong")));
    const statuses = answers.map((a) => a.status);
    // Each guess counted before its password was checked: past the limit the rest never reach it.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(LOGIN_EMAIL_POLICY.limit);
    expect(statuses.every((s) => s === 401 || s === 403 || s === 429)).toBe(true);
  });

  it("an attempt refused before its password was checked is no failure: nobody locks a member out without the check", async () => {
    const p = await person();
    for (let i = 0; i < LOGIN_EMAIL_POLICY.challengeAfter!; i++) expect((await signIn(p.email, "wrong")).status).toBe(401);
    // Past the threshold, attempts without a passed check are refused and do not count as failures.
    for (let i = 0; i < LOGIN_EMAIL_POLICY.limit; i++) expect((await signIn(p.email, "wrong", { [CHALLENGE_FIELD]: "" })).status).toBe(403);
    expect((await signIn(p.email, PASSWORD)).status).toBe(303);
  });

  it("never counts a successful sign-in against the email: a merchant on many devices is not locked out", async () => {
    const p = await person();
    for (let i = 0; i < LOGIN_EMAIL_POLICY.limit + 2; i++) {
      const res = await signIn(p.email, PASSWORD);
      expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 303 });
    }
  });

  it("a success neither counts nor forgives the failures before it", async () => {
    const p = await person();
    for (let i = 0; i < LOGIN_EMAIL_POLICY.limit - 1; i++) expect((await signIn(p.email, "wrong")).status).toBe(401);
    expect((await signIn(p.email, PASSWORD)).status).toBe(303);
    expect((await signIn(p.email, "wrong")).status).toBe(401);
    expect((await signIn(p.email, PASSWORD)).status).toBe(429);
  });

  it(`counts every attempt per IP, successes too (${LOGIN_IP_POLICY.limit} per window)`, async () => {
    const p = await person();
    const ip = randomIp();
    for (let i = 0; i < LOGIN_IP_POLICY.limit; i++) expect((await signIn(p.email, PASSWORD, {}, ip)).status).toBe(303);
    const limited = await signIn(p.email, PASSWORD, {}, ip);
    expect(limited.status).toBe(429);
    expect(cookieOf(limited)).toBe("");
  });

  it(`limits attempts per IP (${LOGIN_IP_POLICY.limit} per window) across emails`, async () => {
    const ip = randomIp();
    for (let i = 0; i < LOGIN_IP_POLICY.limit; i++) expect((await signIn(`x${i}-${uniqueSuffix()}@example.test`, "wrong", {}, ip)).status).toBe(401);
    const limited = await signIn(`y-${uniqueSuffix()}@example.test`, "wrong", {}, ip);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("refuses a cross-site sign-in post (login CSRF)", async () => {
    const p = await person();
    const res = await postForm(null, "/login", { email: p.email, password: PASSWORD }, { origin: "https://evil.example", "cf-connecting-ip": randomIp() });
    expect(res.status).toBe(403);
    expect(cookieOf(res)).toBe("");
  });
});

describe("sessions", () => {
  it("POST /logout with the session's CSRF token ends the session; without it nothing happens", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const forged = await postForm(browser, "/logout", { csrf: "0".repeat(64) });
    expect(forged.status).toBe(403);
    expect((await rpc(browser, "staff/me")).status).toBe(200);
    const res = await postForm(browser, "/logout", { csrf: browser.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login");
    expect(cookieOf(res)).toMatch(/wc_session=;.*Max-Age=0/);
    expect((await rpc(browser, "staff/me")).status).toBe(401);
    const { rows } = await db.pool.query("select 1 from session where id_hash = $1", [await sha256Hex(browser.sessionId)]);
    expect(rows).toHaveLength(0);
  });

  it(`expires after ${IDLE_TIMEOUT_SECONDS / 3600} h idle and ${ABSOLUTE_LIFETIME_SECONDS / 86400} days in all`, async () => {
    const s = await makeStore(db);
    const idle = await sessionFor(db, s.ownerUserId, s.id);
    const old = await sessionFor(db, s.ownerUserId, s.id);
    const fresh = await sessionFor(db, s.ownerUserId, s.id);
    await db.pool.query("update session set last_seen_at = now() - make_interval(secs => $2 + 1) where id_hash = $1", [await sha256Hex(idle.sessionId), IDLE_TIMEOUT_SECONDS]);
    await db.pool.query("update session set expires_at = now() - interval '1 second' where id_hash = $1", [await sha256Hex(old.sessionId)]);
    expect((await rpc(idle, "staff/me")).status).toBe(401);
    expect((await rpc(old, "staff/me")).status).toBe(401);
    expect((await rpc(fresh, "staff/me")).status).toBe(200);
    const home = await page(idle, "/");
    expect(home.headers.get("location")).toBe("/login?next=%2F");
  });

  it("refreshes last_seen_at at most every five minutes", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const hash = await sha256Hex(browser.sessionId);
    await db.pool.query("update session set last_seen_at = now() - interval '10 minutes' where id_hash = $1", [hash]);
    await rpc(browser, "staff/me");
    const { rows } = await db.pool.query<{ recent: boolean }>("select last_seen_at > now() - interval '1 minute' as recent from session where id_hash = $1", [hash]);
    expect(rows[0]?.recent).toBe(true);
  });

  it("a removed member's session loses the store at once", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const theirs = await sessionFor(db, staff.userId, s.id);
    expect((await rpc(theirs, "staff/me")).status).toBe(200);
    expect((await rpc(owner, "staff/remove", { memberId: staff.memberId })).status).toBe(200);
    const after = await rpc(theirs, "staff/me");
    expect(after.status).toBe(412);
  });
});
