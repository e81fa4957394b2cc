import { describe, expect, it } from "vitest";
import { CRON_TABLE } from "#shared/jobs/cron";
import { cronMatches } from "./workers";

describe("the local cron stand-in", () => {
  it("matches the worker's expressions as Cloudflare does, in UTC", () => {
    const at = (iso: string) => new Date(iso);
    expect(cronMatches("* * * * *", at("2026-11-22T08:37:00Z"))).toBe(true);
    expect(cronMatches("*/2 * * * *", at("2026-11-22T08:38:10Z"))).toBe(true);
    expect(cronMatches("*/2 * * * *", at("2026-11-22T08:37:10Z"))).toBe(false);
    expect(cronMatches("*/30 * * * *", at("2026-11-22T08:30:00Z"))).toBe(true);
    expect(cronMatches("15 3 * * *", at("2026-11-22T03:15:59Z"))).toBe(true);
    expect(cronMatches("15 3 * * *", at("2026-11-22T08:45:00Z"))).toBe(false);
    for (const cron of Object.keys(CRON_TABLE)) expect(cron.split(" ")).toHaveLength(5);
  });
});
