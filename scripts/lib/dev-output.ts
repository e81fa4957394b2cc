/**
 * What `npm run dev` shows of each Worker's output (issue 25 item 6, a quiet front door): what happened
 * (a warning, an error, a log line of something done, a Worker that is ready), not what happens every time
 * (wrangler's banner and bindings table, the fallback for `Request.cf` when the machine is offline, each
 * request's access line, the once-a-minute heartbeat while the database answers). `npm run dev -- --verbose`
 * shows every line. The filter is per Worker process (a multi-line block it drops spans calls).
 */
export type Shown = { show: false } | { show: true; line: string };

/** Lines that say nothing a developer acts on, each time the stack starts or a request is served. */
const ROUTINE: readonly RegExp[] = [
  /^\s*⛅️ wrangler \d/,
  /^─+$/,
  /^Your Worker has access to the following bindings:/,
  /^Binding\s+Resource\s+Mode$/,
  /^env\.\S+ .*\s(?:local|remote)$/,
  /^❓ Your types might be out of date/,
  /^⎔ Starting local server/,
  /^\[wrangler:info\] (?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ \d{3}\b/,
  // workers-oauth-provider's note that Client ID Metadata Documents are off: they are (decision 0004).
  /CIMD \(Client ID Metadata Document\) is disabled/,
];

/** wrangler's fallback when it cannot reach workers.cloudflare.com for `Request.cf` (offline), and its stack. */
const CF_FALLBACK = /Unable to fetch the `Request\.cf` object/;
const CF_FALLBACK_ERROR = /^Error: getaddrinfo \w+ workers\.cloudflare\.com/;
const STACK_LINE = /^\s+at /;

const READY = /^\[wrangler:info\] Ready on (https?:\/\/\S+)/;

/** Structured log lines that repeat with nothing new: the heartbeat while the database is up, and its job line. */
function routineLog(line: string): boolean {
  if (!line.startsWith("{")) return false;
  try {
    const entry = JSON.parse(line) as { level?: string; msg?: string; job?: string; db?: string; outcome?: string };
    if (entry.level !== "info" && entry.level !== "debug") return false;
    if (entry.msg === "heartbeat" && entry.db === "up") return true;
    return entry.msg === "job.finished" && entry.job === "{system}-heartbeat" && entry.outcome === "ok";
  } catch {
    return false;
  }
}

/** A filter for one Worker's lines; with `verbose` every line is shown as it is. */
export function devOutputFilter(verbose: boolean): (line: string) => Shown {
  let inFallback = false;
  return (raw) => {
    if (verbose) return { show: true, line: raw };
    // wrangler colours some lines: match on the text.
    const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
    if (inFallback && (CF_FALLBACK_ERROR.test(line) || STACK_LINE.test(line))) return { show: false };
    inFallback = false;
    if (line.includes("[wrangler:warn]") && CF_FALLBACK.test(line)) {
      inFallback = true;
      return { show: false };
    }
    const ready = READY.exec(line);
    if (ready) return { show: true, line: `ready on ${ready[1]}` };
    if (line.trim() === "" || ROUTINE.some((r) => r.test(line.trim())) || routineLog(line)) return { show: false };
    return { show: true, line: raw };
  };
}
