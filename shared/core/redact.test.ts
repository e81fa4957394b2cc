import { describe, expect, it } from "vitest";
import { redactFields, redactText } from "./redact";

const secret43 = "Zq3xV8_kP0-wYbN2mT7rLc5HdJ9sQe4uAf6gKo1iXyR";
const hex64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

describe("redactText", () => {
  it.each([
    ["an email", "signed up as Jane.Doe+shop@mail.example.co.in today", "signed up as [redacted:email] today"],
    ["a url-encoded email", "/customers?q=jane%40example.test", "/customers?q=[redacted:email]"],
    ["a script token", `token wc_live_${secret43} used`, "token [redacted:token] used"],
    ["an OAuth access token", `wcat_demo.0b5c2f9e-1111-4222-8333-444455556666:AbCdEfGh12345678:${secret43}`, "[redacted:token]"],
    ["an OAuth refresh token", `wcrt_x:AbCdEfGh12345678:${secret43}`, "[redacted:token]"],
    ["an unprefixed provider token", `code demo.0b5c2f9e-1111-4222-8333-444455556666:AbCdEfGh12345678:${secret43}!`, "code [redacted:oauth_token]!"],
    ["a bearer header", `authorization: Bearer ${secret43}`, "authorization: Bearer [redacted:bearer]"],
    ["a password hash", "hash pbkdf2_sha256$100000$c2FsdHNhbHQ$a2V5a2V5a2V5 stored", "hash [redacted:password_hash] stored"],
    ["a bcrypt hash", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", "[redacted:password_hash]"],
    ["credentials in a URL", "connect postgres://app_user:s3cr3t@db.internal:5432/app failed", "connect postgres://[redacted:credentials]@db.internal:5432/app failed"],
    ["another scheme's credentials", "mysql://root:secret@db/x", "mysql://[redacted:credentials]@db/x"],
    ["the session cookie", "cookie: theme=dark; wc_session=abc.def-123; other=1", "cookie: theme=dark; wc_session=[redacted:cookie]; other=1"],
    ["a digest next to a hash key", `{"tokenHash":"${hex64}"}`, '{"tokenHash":"[redacted:hash]"}'],
    ["a digest in a Postgres detail", `Key (token_hash)=(${hex64}) already exists.`, "Key (token_hash)=([redacted:hash]) already exists."],
    ["drizzle's bound parameters", 'Failed query: select 1\nparams: a,b,"c"\n    at x', "Failed query: select 1\nparams: [redacted:params]\n    at x"],
    ["a random secret in a path", `/invite/${secret43}`, "/invite/[redacted:secret]"],
    ["a random secret without digits", "/invite/ZqxVkPwYbNmTrLcHdJsQeuAfgKoiXyRabcdefGHIJ", "/invite/[redacted:secret]"],
    ["a digest under any name", `etag ${hex64}`, "etag [redacted:secret]"],
  ])("replaces %s", (_what, input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each([
    ["a plain sentence", "Deferred work failed: could not reach the database"],
    ["a stack frame", "    at NeonPreparedQuery.queryWithCache (/app/node_modules/src/pg-core/session.ts:73:11)"],
    ["a package with a version", "vitest@4.1.0 and @neondatabase/serverless"],
    ["a uuid and a time", "store 0b5c2f9e-1111-4222-8333-444455556666 at 2025-01-01T10:30:45.123Z"],
    ["a constraint name", 'duplicate key value violates unique constraint "user_account_email_key"'],
    ["a long identifier", "user_account_email_key_and_another_long_snake_case_name_without_digits"],
    ["a URL without credentials", "https://admin.example.test/oauth/authorize?client_id=abc"],
  ])("leaves %s alone", (_what, input) => {
    expect(redactText(input)).toBe(input);
  });

  it("stays linear on 100 kB of hostile input", () => {
    const hostile = ["a.", "a@a.", "ab:", "abcdefghij:", "hash:", "Bearer ", "postgres://a:", "a%4", ".", "-", "aA1", "$2a$", "wc_session="];
    for (const unit of hostile) {
      const text = unit.repeat(Math.ceil(100_000 / unit.length));
      const started = performance.now();
      const out = redactText(text);
      // Each takes a few ms; a scan that backtracked per character would take seconds or never end.
      expect(performance.now() - started).toBeLessThan(500);
      expect(out.length).toBeGreaterThan(0);
    }
  });
});

describe("redactFields", () => {
  it("redacts sensitive keys whatever their value, at any depth, and scrubs every string", () => {
    const errorOf = (e: Error) => ({ error: e.message });
    const out = redactFields(
      {
        email: "a@b.c",
        password: "hunter2",
        passwordHash: 12,
        nested: { accessToken: { any: "thing" }, Authorization: "x", cookie: "y", params: ["a"], detail: "z", secretHint: "abcd", ok: "fine" },
        list: [{ note: "mail jane@example.test" }],
        err: new Error("user jane@example.test"),
        big: 10n,
        when: new Date(0),
      },
      errorOf,
    );
    expect(out).toEqual({
      email: "[redacted:field]",
      password: "[redacted:field]",
      passwordHash: "[redacted:field]",
      nested: {
        accessToken: "[redacted:field]",
        Authorization: "[redacted:field]",
        cookie: "[redacted:field]",
        params: "[redacted:field]",
        detail: "[redacted:field]",
        secretHint: "[redacted:field]",
        ok: "fine",
      },
      list: [{ note: "mail [redacted:email]" }],
      err: { error: "user [redacted:email]" },
      big: "10",
      when: "1970-01-01T00:00:00.000Z",
    });
  });

  it("cuts cycles instead of overflowing", () => {
    const loop: Record<string, unknown> = { name: "loop" };
    loop.self = loop;
    expect(JSON.stringify(redactFields({ loop }, () => ({})))).toContain("[truncated]");
  });
});
