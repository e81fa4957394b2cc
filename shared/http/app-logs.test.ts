import { describe, expect, it } from "vitest";
import { z } from "zod";
import { call } from "../../test/call";
import { expectNoLeak, insertTwice, leakyUser, logsOf } from "../../test/logs";
import type { WorkerBindings } from "../../workers/worker/env";
import { createApp } from "./app";
import { logReporter } from "./report";

// A route that lets a database error through unmapped, the way a bug would: the factory logs it.
const app = createApp<WorkerBindings>({ service: "worker" });
const userInput = z.object({ email: z.string(), passwordHash: z.string() });
app.post("/users", async (c) => {
  await insertTwice(c.var.db, userInput.parse(await c.req.json()));
  return c.text("created", 201);
});
app.post("/users/later", async (c) => {
  c.var.defer(insertTwice(c.var.db, userInput.parse(await c.req.json())));
  return c.text("accepted", 202);
});
app.post("/users/reported", async (c) => {
  try {
    await insertTwice(c.var.db, userInput.parse(await c.req.json()));
    return c.text("created", 201);
  } catch (e) {
    logReporter(c.var.log).report(e, { path: c.req.path });
    return c.text("reported", 500);
  }
});

async function post(path: string, user: { email: string; passwordHash: string }) {
  let res: Response | undefined;
  const logs = await logsOf(async () => {
    res = await call(app, `http://worker.test${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(user) });
  });
  return { res: res!, ...logs };
}

const dbFacts = { sqlstate: "23505", cause: { code: "23505", constraint: "user_account_email_key", table: "user_account" } };

describe("logs of a failed insert carry the SQLSTATE and constraint, never the email or password hash", () => {
  it("an unhandled error: 500, logged by the error renderer", async () => {
    const user = leakyUser();
    const { res, raw, lines } = await post("/users", user);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain(user.email);
    expectNoLeak(raw.join("\n"), user);
    expect(lines.find((l) => l.msg === "Unhandled error")).toMatchObject({ level: "error", path: "/users", method: "POST", ...dbFacts });
  });

  it("deferred work that fails after the answer", async () => {
    const user = leakyUser();
    const { res, raw, lines } = await post("/users/later", user);
    expect(res.status).toBe(202);
    expectNoLeak(raw.join("\n"), user);
    expect(lines.find((l) => l.msg === "Deferred work failed")).toMatchObject({ level: "error", path: "/users/later", ...dbFacts });
  });

  it("an error reported to error tracking", async () => {
    const user = leakyUser();
    const { res, raw, lines } = await post("/users/reported", user);
    expect(res.status).toBe(500);
    expectNoLeak(raw.join("\n"), user);
    expect(lines.find((l) => l.msg === "Page error reported")).toMatchObject({ level: "error", reported: true, ...dbFacts });
  });
});
