import { describe, expect, it } from "vitest";
import { devOutputFilter } from "./dev-output";

/** wrangler dev's start and a request, as one Worker printed them on this machine (offline, 2026-11-26). */
const START = [
  " ⛅️ wrangler 4.86.0 (update available 4.164.0)",
  "──────────────────────────────────────────────",
  "Your Worker has access to the following bindings:",
  "Binding                                                             Resource                  Mode",
  "env.RATE_LIMITER (RateLimiter)                                      Durable Object            local",
  'env.APP_ENV ("(hidden)")                                            Environment Variable      local',
  "❓ Your types might be out of date. Re-run `wrangler types` to ensure your types are correct.",
  "[wrangler:warn] Unable to fetch the `Request.cf` object! Falling back to a default placeholder...",
  "Error: getaddrinfo ENOTFOUND workers.cloudflare.com",
  "    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)",
  "    at GetAddrInfoReqWrap.callbackTrampoline (node:internal/async_hooks:130:17)",
  "⎔ Starting local server...",
  "\x1b[33m▲ \x1b[43;33m[\x1b[43;30mWARNING\x1b[43;33m]\x1b[0m \x1b[1mCIMD (Client ID Metadata Document) is disabled: add '\"compatibility_flags\": [\"global_fetch_strictly_public\"]' to your wrangler.jsonc to enable.\x1b[0m",
  "[wrangler:info] Ready on http://127.0.0.1:8787",
  "[wrangler:info] GET / 302 Found (2808ms)",
  '{"level":"info","msg":"heartbeat","time":"2026-11-26T13:36:48.194Z","job":"{system}-heartbeat","db":"up","dbLatencyMs":17}',
  '{"level":"info","msg":"job.finished","job":"{system}-heartbeat","outcome":"ok","durationMs":19}',
];

const shown = (lines: readonly string[], verbose = false) => {
  const filter = devOutputFilter(verbose);
  return lines.flatMap((l) => {
    const s = filter(l);
    return s.show ? [s.line] : [];
  });
};

describe("npm run dev's output", () => {
  it("shows one line for a Worker's start: where it is ready", () => {
    expect(shown(START)).toEqual(["ready on http://127.0.0.1:8787"]);
  });

  it("keeps what happened: warnings and errors, a failed heartbeat, a job that did something, an error after the offline fallback", () => {
    const news = [
      "[wrangler:warn] The Worker's compatibility date is in the future",
      '{"level":"error","msg":"heartbeat","db":"down"}',
      '{"level":"info","msg":"job.finished","job":"{outbox}-relay","outcome":"ok","result":{"sent":2}}',
      "✘ [ERROR] Could not resolve \"./missing\"",
    ];
    expect(shown(news)).toEqual(news);
    // The fallback's own error block is dropped, not the error that follows it.
    expect(shown(["[wrangler:warn] Unable to fetch the `Request.cf` object!", "Error: getaddrinfo ENOTFOUND workers.cloudflare.com", "Error: something else"])).toEqual([
      "Error: something else",
    ]);
  });

  it("--verbose shows every line as it came", () => {
    expect(shown(START, true)).toEqual(START);
  });
});
