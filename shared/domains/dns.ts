/**
 * The DNS verification port (docs/domains.md): the TXT records of a name. Adapters do I/O with DNS only, no
 * database. An answer the DNS gave (records, no such name, no TXT records) is a TxtAnswer; a lookup that got
 * no usable answer (SERVFAIL, a timeout, the resolver unreachable) is a DnsError, never a raw error.
 */
import type { DomainCheckResult } from "../db/schema";

export type DnsProvider = "local" | "cloudflare";

/** What DNS said: the name's TXT strings (each record's character-strings joined), or that it has none. */
export type TxtAnswer = { kind: "records"; values: string[] } | { kind: "nxdomain" } | { kind: "nodata" };

export type DnsErrorKind = "servfail" | "timeout" | "unavailable" | "bad_request";

export class DnsError extends Error {
  readonly provider: DnsProvider;
  readonly kind: DnsErrorKind;

  constructor(provider: DnsProvider, kind: DnsErrorKind, message: string) {
    super(message);
    this.name = "DnsError";
    this.provider = provider;
    this.kind = kind;
  }
}

export interface DnsResolver {
  readonly provider: DnsProvider;
  /** The TXT records of `name` (a hostname, no trailing dot). */
  txt(name: string): Promise<TxtAnswer>;
}

/** The label under which a domain's TXT record lives, and the prefix of its value. */
export const VERIFY_LABEL = "_commerce-verify";
const VALUE_PREFIX = "commerce-verify=";

/** The TXT record that proves a domain's owner: name and value, as the merchant creates it. */
export function verificationRecord(hostname: string, token: string): { name: string; value: string } {
  return { name: `${VERIFY_LABEL}.${hostname}`, value: `${VALUE_PREFIX}${token}` };
}

/**
 * What a domain's check found: `verified` when one TXT value is exactly the expected one (surrounding
 * spaces ignored), a DnsError by its kind, otherwise not found or another value.
 */
export async function checkDomain(dns: DnsResolver, hostname: string, token: string): Promise<DomainCheckResult> {
  const record = verificationRecord(hostname, token);
  let answer: TxtAnswer;
  try {
    answer = await dns.txt(record.name);
  } catch (e) {
    if (!(e instanceof DnsError)) throw e;
    return e.kind === "servfail" || e.kind === "timeout" ? e.kind : "unavailable";
  }
  if (answer.kind !== "records" || answer.values.length === 0) return "not_found";
  return answer.values.some((v) => v.trim() === record.value) ? "verified" : "wrong_value";
}

/** The merchant's words for a check's result (Settings → Domains, domains.list). */
export const CHECK_RESULT_TEXT: Readonly<Record<DomainCheckResult, string>> = {
  verified: "TXT record found",
  not_found: "TXT record not found",
  wrong_value: "a TXT record was found, but not with the value shown",
  servfail: "the domain's DNS servers did not answer (SERVFAIL)",
  timeout: "the DNS lookup timed out",
  unavailable: "the DNS resolver could not be reached",
};

/**
 * A TXT record's presentation form as DoH JSON gives it (`"part one" "part two"`, RFC 1035 §5.1 escapes
 * `\"`, `\\` and `\DDD`) as one string: the character-strings joined, as SPF and verification checks read
 * them. Text without quotes is taken as it is.
 */
export function txtValue(data: string): string {
  const text = data.trim();
  if (!text.startsWith('"')) return text;
  let out = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      quoted = !quoted;
    } else if (ch === "\\" && i + 1 < text.length) {
      const digits = /^\d{3}/.exec(text.slice(i + 1));
      if (digits) {
        out += String.fromCharCode(Number(digits[0]));
        i += 3;
      } else {
        out += text[++i];
      }
    } else if (quoted) {
      out += ch;
    }
  }
  return out;
}
