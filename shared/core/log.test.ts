import { describe, expect, it } from "vitest";
import { expectNoLeak, insertTwice, leakyUser, logsOf } from "../../test/logs";
import { testDb } from "../../test/harness";
import { AppError } from "./errors";
import { createLogger, errorFields } from "./log";

const db = testDb();

/** The error drizzle raises for a duplicate email: a DrizzleQueryError over the driver's DatabaseError. */
async function failedInsert(user: { email: string; passwordHash: string }): Promise<Error> {
  try {
    await insertTwice(db, user);
  } catch (e) {
    return e as Error;
  }
  throw new Error("the second insert succeeded");
}

describe("errorFields", () => {
  it("keeps a failed insert's SQLSTATE, constraint and statement, and drops its parameters, detail and stack header", async () => {
    const user = leakyUser();
    const e = await failedInsert(user);
    expect(e.message).toContain(user.email); // what drizzle puts in the message, and what must not reach a log
    const fields = errorFields(e);
    expect(fields).toMatchObject({
      errorName: "DrizzleQueryError",
      error: "Failed query",
      sqlstate: "23505",
      cause: {
        errorName: "DatabaseError",
        error: 'duplicate key value violates unique constraint "user_account_email_key"',
        code: "23505",
        constraint: "user_account_email_key",
        table: "user_account",
        routine: "_bt_check_unique",
      },
    });
    expect(fields.query).toMatch(/^insert into "user_account" \(.*\) values \(default, \$1, default, \$2, default, default\)$/);
    expect(fields.stack).toMatch(/^\s+at .*:\d+:\d+\)?$/m);
    expect(String(fields.stack)).not.toContain("Failed query");
    expectNoLeak(JSON.stringify(fields), user);
  });

  it("blanks the values Postgres quotes in a driver error's message, and keeps the names it reports", async () => {
    const client = await db.connect();
    const error = await client.query("select $1::uuid", ["s3cret-value"]).then(
      () => undefined,
      (e: unknown) => e,
    );
    client.release();
    expect(errorFields(error)).toMatchObject({ errorName: "DatabaseError", code: "22P02", error: 'invalid input syntax for type uuid: "?"' });
    expect(JSON.stringify(errorFields(error))).not.toContain("s3cret-value");
  });

  it("follows causes a bounded depth, and names application errors by code and status", () => {
    let e: Error = new AppError("CONFLICT", "Already exists");
    for (let i = 0; i < 10; i++) e = new Error(`wrap ${i}`, { cause: e });
    let depth = 0;
    for (let f = errorFields(e); f.cause; f = f.cause as Record<string, unknown>) depth++;
    expect(depth).toBe(4);
    expect(errorFields(new AppError("CONFLICT", "Already exists"))).toMatchObject({ error: "Already exists", code: "CONFLICT", status: 409 });
    expect(errorFields("plain")).toEqual({ error: "plain" });
  });
});

describe("createLogger", () => {
  it("never writes a failed insert's values, however the caller passes the error", async () => {
    const user = leakyUser();
    const e = await failedInsert(user);
    const { raw, lines } = await logsOf(async () => {
      const log = createLogger({ service: "worker" }, "debug");
      log.error("as errorFields", errorFields(e));
      log.error("as an Error field", { err: e });
      log.warn("as its message", { error: e.message, stack: e.stack });
      log.info(`as text: ${user.email} ${user.passwordHash}`, { email: user.email, passwordHash: user.passwordHash, params: [user.email] });
    });
    expect(raw).toHaveLength(4);
    expect(lines[1]).toMatchObject({ err: { sqlstate: "23505", cause: { constraint: "user_account_email_key" } } });
    expect(lines[3]).toMatchObject({ email: "[redacted:field]", passwordHash: "[redacted:field]", params: "[redacted:field]" });
    const [local] = user.email.split("@");
    for (const line of raw) {
      expect(line).not.toContain(local);
      expect(line).not.toContain(user.passwordHash.split("$").at(-1));
    }
    expectNoLeak([raw[0], raw[1]].join("\n"), user);
  });

  it("keeps level order and base fields", async () => {
    const { lines } = await logsOf(async () => {
      const log = createLogger({ service: "admin", requestId: "req-12345678" }, "warn").child({ job: "x" });
      log.info("dropped");
      log.warn("kept", { n: 1 });
    });
    expect(lines).toEqual([expect.objectContaining({ level: "warn", msg: "kept", service: "admin", requestId: "req-12345678", job: "x", n: 1 })]);
  });
});
