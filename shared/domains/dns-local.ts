/**
 * The local DNS `npm run dev` and the tests use: TXT records set on demand (Settings → Domains shows dev
 * buttons for them while DOMAIN_DNS is local), failures included. A name nobody set answers NXDOMAIN, as
 * a name without records does on the Internet.
 */
import { z } from "zod";
import { DnsError, type DnsResolver, type TxtAnswer } from "./dns";
import type { LocalKv } from "./local-kv";

/** What the local DNS answers for one name. */
export const localDnsEntry = z.union([
  z.strictObject({ txt: z.array(z.string().max(2_000)).max(20) }),
  z.strictObject({ fail: z.enum(["servfail", "timeout"]) }),
]);
export type LocalDnsEntry = z.infer<typeof localDnsEntry>;

/** The answers a developer can choose for a domain's TXT name (Settings → Domains while DOMAIN_DNS is local). */
export const LOCAL_DNS_CHOICES = ["txt", "wrong", "servfail", "timeout", "none"] as const;
export type LocalDnsChoice = (typeof LOCAL_DNS_CHOICES)[number];

/** What the local DNS answers for a choice, given the value the domain's check expects. */
export function localDnsEntryFor(choice: LocalDnsChoice, expected: string): LocalDnsEntry | null {
  if (choice === "txt") return { txt: [expected] };
  if (choice === "wrong") return { txt: ["commerce-verify=not-this-one"] };
  if (choice === "none") return null;
  return { fail: choice };
}

const key = (name: string) => `local-dns:${name.toLowerCase()}`;

/** Sets what the local DNS answers for `name`; null removes it (NXDOMAIN). */
export async function setLocalDnsEntry(kv: LocalKv, name: string, entry: LocalDnsEntry | null): Promise<void> {
  if (entry === null) return kv.delete(key(name));
  return kv.put(key(name), JSON.stringify(localDnsEntry.parse(entry)));
}

export function localDns(kv: LocalKv): DnsResolver {
  return {
    provider: "local",
    async txt(name): Promise<TxtAnswer> {
      const stored = localDnsEntry.safeParse(await kv.get(key(name), "json"));
      if (!stored.success) return { kind: "nxdomain" };
      const entry = stored.data;
      if ("fail" in entry) {
        throw new DnsError("local", entry.fail, entry.fail === "servfail" ? `the local DNS answers SERVFAIL for ${name}` : `the local DNS did not answer for ${name}`);
      }
      return entry.txt.length > 0 ? { kind: "records", values: entry.txt } : { kind: "nodata" };
    },
  };
}
