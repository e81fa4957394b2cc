import { expect, vi } from "vitest";
import type { Database } from "#shared/db/database";
import { userAccount } from "#shared/db/schema";
import { uniqueSuffix } from "./harness";

export interface CapturedLogs {
  /** Every line written to console.log, .warn or .error, as written. */
  raw: string[];
  /** The structured (JSON) lines among them. */
  lines: Record<string, unknown>[];
}

/** What the Worker logged while `fn` ran; the console is restored afterwards. */
export async function logsOf(fn: () => Promise<unknown>): Promise<CapturedLogs> {
  const raw: string[] = [];
  const capture = (...args: unknown[]) => void raw.push(args.map(String).join(" "));
  const spies = [
    vi.spyOn(console, "log").mockImplementation(capture),
    vi.spyOn(console, "warn").mockImplementation(capture),
    vi.spyOn(console, "error").mockImplementation(capture),
  ];
  try {
    await fn();
  } finally {
    for (const s of spies) s.mockRestore();
  }
  const lines = raw.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  return { raw, lines };
}

/** A user whose email and password hash no log line may carry. */
export function leakyUser(): { email: string; passwordHash: string } {
  const s = uniqueSuffix();
  return { email: `leak-${s}@example.test`, passwordHash: `pbkdf2_sha256$100000$salt${s}$key${s}` };
}

/** Inserts the same user twice, as the application does (drizzle): the second fails on user_account_email_key. */
export async function insertTwice(db: Database, user: { email: string; passwordHash: string }): Promise<void> {
  await db.orm.insert(userAccount).values(user);
  await db.orm.insert(userAccount).values(user);
}

/** Fails if `text` carries the user's email (or its local part), password hash, or drizzle's parameters. */
export function expectNoLeak(text: string, user: { email: string; passwordHash: string }): void {
  const [local] = user.email.split("@");
  const key = user.passwordHash.split("$").at(-1)!;
  for (const value of [user.email, local!, user.passwordHash, key]) expect(text).not.toContain(value);
  expect(text).not.toMatch(/params|Key \(/);
}
