/**
 * TXT lookups over DNS-over-HTTPS with Cloudflare's JSON API (the schema Google's resolver uses):
 * `GET https://cloudflare-dns.com/dns-query?name=<name>&type=TXT` with `accept: application/dns-json`
 * answers `{Status, TC, RD, RA, AD, CD, Question, Answer?, Authority?}`, where Status is the DNS RCODE
 * (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, …) and each TXT answer's `data` is its presentation form
 * (`"\"v=spf1 -all\""`). A malformed query answers HTTP 400.
 */
import { z } from "zod";
import { DnsError, txtValue, type DnsResolver, type TxtAnswer } from "./dns";
import { exchangeJson, type FetchLike } from "#shared/core/exchange";

export const CLOUDFLARE_DOH_URL = "https://cloudflare-dns.com/dns-query";
const TXT_TYPE = 16;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

const dohAnswer = z.object({
  Status: z.number().int().min(0),
  Answer: z.array(z.object({ name: z.string(), type: z.number().int(), TTL: z.number().optional(), data: z.string() })).optional(),
  Comment: z.union([z.string(), z.array(z.string())]).optional(),
});

export interface DohConfig {
  /** Default Cloudflare's endpoint; tests point it at a local server. */
  url?: string;
  fetch?: FetchLike;
  /** Default 5 000. */
  timeoutMs?: number;
}

export function dohDns(config: DohConfig = {}): DnsResolver {
  const endpoint = config.url ?? CLOUDFLARE_DOH_URL;
  const timeoutMs = config.timeoutMs ?? 5_000;
  const fail = (kind: "servfail" | "unavailable" | "bad_request", message: string) => new DnsError("cloudflare", kind, message);
  return {
    provider: "cloudflare",
    async txt(name): Promise<TxtAnswer> {
      const url = new URL(endpoint);
      url.searchParams.set("name", name);
      url.searchParams.set("type", "TXT");
      const { response, body } = await exchangeJson(
        {
          fetch: config.fetch ?? ((input, init) => fetch(input, init)),
          timeoutMs,
          timeout: () => new DnsError("cloudflare", "timeout", `DNS-over-HTTPS did not answer within ${timeoutMs} ms`),
          unreachable: (message) => fail("unavailable", `DNS-over-HTTPS could not be reached: ${message}`),
        },
        url.toString(),
        { method: "GET", headers: { accept: "application/dns-json" } },
      );
      if (response.status === 400) throw fail("bad_request", `DNS-over-HTTPS refused the query for ${name} (400)`);
      if (!response.ok) throw fail("unavailable", `DNS-over-HTTPS answered ${response.status}`);
      const parsed = dohAnswer.safeParse(body);
      if (!parsed.success) throw fail("unavailable", "DNS-over-HTTPS answered something that is not its JSON format");
      const { Status, Answer } = parsed.data;
      if (Status === RCODE.NXDOMAIN) return { kind: "nxdomain" };
      if (Status !== RCODE.NOERROR) {
        const comment = [parsed.data.Comment ?? []].flat().join(" ");
        throw fail("servfail", `DNS answered ${Status === RCODE.SERVFAIL ? "SERVFAIL" : `RCODE ${Status}`} for ${name}${comment ? `: ${comment}` : ""}`);
      }
      // A CNAME chain answers its CNAME records first; the TXT records at its end are the name's.
      const values = (Answer ?? []).filter((a) => a.type === TXT_TYPE).map((a) => txtValue(a.data));
      return values.length > 0 ? { kind: "records", values } : { kind: "nodata" };
    },
  };
}
