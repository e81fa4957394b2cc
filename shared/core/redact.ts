/**
 * The last line of defence for log lines: whatever a caller passes, secrets and personal data are
 * replaced with `[redacted:<kind>]` before the line is written. One scan per string; every quantifier
 * is bounded or follows a fixed prefix or the start of a run, so the scan stays linear on hostile input.
 */

/** One shape to find: the text before the secret that stays (group `keep`), then the secret. */
interface Rule {
  kind: string;
  /**
   * Characters that may not precede a match: a pattern that starts with a character class then only
   * starts where a run of that class starts, so a long run costs one attempt, not one per character.
   */
  startsRun?: string;
  keep?: string;
  secret: string;
  /** A match this rejects is left as it is (e.g. a long identifier that is not random). */
  accept?: (secret: string) => boolean;
}

const B64 = "A-Za-z0-9_\\-";
const CLASSES = [/[A-Z]/, /[a-z]/, /[0-9]/];

const RULES: readonly Rule[] = [
  // drizzle's "Failed query: <sql>\nparams: <bound values>": everything after `params: ` is values.
  { kind: "params", keep: "\\nparams: ", secret: "[^\\n]+" },
  { kind: "token", secret: `(?:wc_live_|wcat_|wcrt_)[${B64}.:~]{4,512}` },
  { kind: "bearer", keep: `(?:Bearer|bearer|BEARER)\\s{1,8}`, secret: `[${B64}.~+/=:]{8,4096}` },
  { kind: "password_hash", secret: `(?:pbkdf2_sha\\d{3}|argon2(?:id|i|d)|scrypt)\\$[${B64}$+/=.,]{1,512}` },
  { kind: "password_hash", secret: `\\$2[aby]\\$\\d{2}\\$[./A-Za-z0-9]{53}` },
  { kind: "credentials", startsRun: "A-Za-z0-9+.\\-", keep: `[A-Za-z][A-Za-z0-9+.-]{0,20}://`, secret: `[^\\s:@/]{1,128}:[^\\s@/]{1,256}(?=@)` },
  { kind: "cookie", keep: `wc_session=`, secret: `[^;\\s"',&]{1,1024}` },
  {
    kind: "hash",
    keep: `(?:[Hh]ash|HASH|[Dd]igest|DIGEST)[A-Za-z0-9_]{0,30}["')]{0,2}\\s{0,3}[:=]\\s{0,3}["'(]{0,2}`,
    secret: "[0-9a-fA-F]{64}",
  },
  { kind: "email", startsRun: "A-Za-z0-9._%+\\-", secret: `[A-Za-z0-9._%+-]{1,64}(?:@|%40)(?:[A-Za-z0-9-]{1,63}\\.){1,8}[A-Za-z][A-Za-z0-9-]{0,62}` },
  // @cloudflare/workers-oauth-provider's tokens and codes, unprefixed: `<userId>:<grantId>:<secret>`.
  { kind: "oauth_token", startsRun: `${B64}.`, secret: `[${B64}.]{1,128}:[${B64}]{8,128}:[${B64}]{16,256}` },
  // Random secrets without a prefix (invitation tokens in a path, session ids, hex digests): 40+
  // base64url characters mixing two of upper case, lower case and digits, which words do not.
  { kind: "secret", startsRun: B64, secret: `[${B64}]{40,}`, accept: (s) => CLASSES.filter((c) => c.test(s)).length >= 2 },
];

// One pass: each rule is `(keep)(secret)`, so rule i owns capture groups 2i+1 and 2i+2.
const SCAN = new RegExp(RULES.map((r) => `${r.startsRun ? `(?<![${r.startsRun}])` : ""}(${r.keep ?? ""})(${r.secret})`).join("|"), "g");

/** Replaces every secret or personal datum this module recognises in `text`. */
export function redactText(text: string): string {
  return text.replace(SCAN, (match: string, ...groups: unknown[]) => {
    for (let i = 0; i < RULES.length; i++) {
      const secret = groups[2 * i + 1];
      if (typeof secret !== "string") continue;
      const rule = RULES[i]!;
      if (rule.accept && !rule.accept(secret)) return match;
      return `${String(groups[2 * i] ?? "")}[redacted:${rule.kind}]`;
    }
    return match;
  });
}

/** Field names whose values are never logged, whatever they hold. */
const SENSITIVE_KEY =
  /pass(?:word|wd|phrase)|pwd|token|secret|authori[sz]ation|cookie|e-?mail|params|detail|hash|digest|credential|api_?key|session_?id|signature/i;

const MAX_DEPTH = 8;
const MAX_ITEMS = 200;

/**
 * A copy of `fields` that is safe to log: sensitive keys redacted, every string through `redactText`,
 * Errors turned into fields by `describeError`, bigints into strings; deep or cyclic values are cut.
 */
export function redactFields(fields: Record<string, unknown>, describeError: (e: Error) => Record<string, unknown>): Record<string, unknown> {
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return redactText(value);
    if (typeof value === "bigint") return value.toString();
    if (value === null || typeof value !== "object") return value;
    if (depth >= MAX_DEPTH) return "[truncated]";
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
    if (value instanceof Error) return walk(describeError(value), depth + 1);
    if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value).slice(0, MAX_ITEMS)) {
      out[key] = SENSITIVE_KEY.test(key) ? "[redacted:field]" : walk(v, depth + 1);
    }
    return out;
  };
  return walk(fields, 0) as Record<string, unknown>;
}
