import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { WorkerBindings } from "../../workers/worker/env";
import { movedNothing } from "../core/log";
import { jobDeps, runJobs } from "./run";

const PAST = new Date(Date.UTC(2000, 0, 1));

/** The structured lines a run of `fn` writes to the console. */
async function linesOf(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("a job's finished line", () => {
  it("a result of nothing but zeros moved nothing; any count, text or failure did something", () => {
    expect(movedNothing(undefined)).toBe(true);
    expect(movedNothing({ stores: 0, sent: 0, messages: 0, failed: 0, dead: 0, skipped: 0 })).toBe(true);
    expect(movedNothing({ stores: 0, byKind: { a: 0 }, list: [0, 0] })).toBe(true);
    expect(movedNothing({ stores: 1, sent: 0 })).toBe(false);
    expect(movedNothing({ nested: { sent: 2 } })).toBe(false);
    expect(movedNothing({ note: "swept" })).toBe(false);
  });

  it("a pass with nothing to do writes nothing at the info level, and its line at debug", async () => {
    const bindings = env as unknown as WorkerBindings;
    const quiet = await linesOf(() => runJobs(["{payments}-unpaid-expiry"], PAST, jobDeps({ ...bindings, LOG_LEVEL: "info" }, "test")));
    expect(quiet.filter((l) => l.msg === "job.finished")).toEqual([]);
    const debug = await linesOf(() => runJobs(["{payments}-unpaid-expiry"], PAST, jobDeps({ ...bindings, LOG_LEVEL: "debug" }, "test")));
    expect(debug.find((l) => l.msg === "job.finished")).toMatchObject({ level: "debug", job: "{payments}-unpaid-expiry", outcome: "ok" });
  });
});
