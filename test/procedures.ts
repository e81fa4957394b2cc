import type { RoleName } from "#shared/db/schema";
import { member, userAccount } from "#shared/db/schema";
import type { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { isAppError } from "#shared/core/errors";
import { createLogger } from "#shared/core/log";
import { isSessionProcedure, type Services } from "#shared/procedures/define";
import { runProcedure } from "#shared/pipeline/run";
import { findProcedure } from "#shared/registry/procedures";
import { makeStore, uniqueSuffix, type TestStore } from "./harness";

const quiet = createLogger({ test: true }, "error");

/** A person with a role in `store`, made as the application makes rows. */
export async function addMember(db: Database, store: TestStore, role: RoleName): Promise<{ userId: string; memberId: string; email: string }> {
  const email = `${role}-${uniqueSuffix()}@example.test`;
  const [user] = await db.orm.insert(userAccount).values({ email, passwordHash: "pbkdf2_sha256$1$x$y" }).returning({ id: userAccount.id });
  const memberId = await withStore(db, store.id, async (tx) => {
    const [m] = await tx.insert(member).values({ storeId: store.id, userId: user!.id, role }).returning({ id: member.id });
    return m!.id;
  });
  return { userId: user!.id, memberId, email };
}

export type Caller = (procedure: string, input?: unknown) => Promise<unknown>;

/**
 * Calls registered procedures (`"products.list"`) the way /api/rpc does for a signed-in member whose
 * active store is `storeId`: the real executor, the real transaction, real Postgres.
 */
export function callerFor(db: Database, userId: string, storeId: string | null, services?: Services): Caller {
  return async (key, input) => {
    const [router, name] = key.split(".") as [string, string];
    const proc = findProcedure(router, name);
    if (!proc || isSessionProcedure(proc)) throw new Error(`No store procedure ${key}`);
    const outcome = await runProcedure(db, { kind: "member", userId, storeId }, proc, input, { door: "session", log: quiet, ...(services ? { services } : {}) });
    return outcome.kind === "done" ? outcome.output : outcome.proposal;
  };
}

/** A fresh store and a caller for its Owner (or another role added to it). */
export async function storeWithCaller(db: Database, role: RoleName = "owner"): Promise<{ store: TestStore; call: Caller; userId: string }> {
  const store = await makeStore(db);
  if (role === "owner") return { store, call: callerFor(db, store.ownerUserId, store.id), userId: store.ownerUserId };
  const m = await addMember(db, store, role);
  return { store, call: callerFor(db, m.userId, store.id), userId: m.userId };
}

/** "ok", or the error's code and its first issue's path ("BAD_REQUEST endsAt"), for compact assertions. */
export const failureText = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: unknown) => {
      if (!isAppError(e)) return String(e);
      const issues = e.data?.issues as { path: string }[] | undefined;
      return issues?.[0] ? `${e.code} ${issues[0].path}` : e.code;
    },
  );

/** The payloads of a store's outbox events of one kind, oldest first. */
export const outboxPayloads = (db: Database, storeId: string, kind: string): Promise<Record<string, unknown>[]> =>
  withStore(db, storeId, (tx) =>
    tx.$client.query<{ payload: Record<string, unknown> }>("select payload from outbox_event where kind = $1 order by created_at, id", [kind]),
  ).then((r) => r.rows.map((row) => row.payload));

/** Like failureText, with the message and every issue's path and message: for asserting what a person is told. */
export const failureMessage = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: unknown) => {
      if (!isAppError(e)) return String(e);
      const issues = (e.data?.issues as { path: string; message: string }[] | undefined) ?? [];
      return [e.code, e.message, ...issues.map((i) => `${i.path}: ${i.message}`)].join(" | ");
    },
  );
