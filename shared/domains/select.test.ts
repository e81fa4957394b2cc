import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { cloudflareServer } from "../../test/fakes/cloudflare-server";
import { DnsError } from "./dns";
import { localDns, localDnsEntryFor, setLocalDnsEntry } from "./dns-local";
import { dohServer } from "../../test/fakes/doh-server";
import type { LocalKv } from "./local-kv";
import { RouterError } from "./router";
import { localRouter } from "./router-local";
import { dnsConfigFromEnv, dnsResolverFor, domainRouterFor, routerConfigFromEnv } from "./select";

/** Choosing the adapters from the Worker's configuration, and the local adapters over the HOSTS namespace. */
const kv = (env as unknown as { HOSTS: LocalKv }).HOSTS;
const DEV = { APP_ENV: "development", HOSTS: kv };
const CLOUDFLARE = { DOMAIN_ROUTER: "cloudflare", CLOUDFLARE_ZONE_ID: "023e105f4ecef8ad9ca31a8372d0c353", CLOUDFLARE_API_TOKEN: "t".repeat(40) };

describe("domain adapters from the configuration", () => {
  it("default to the local DNS and router in development and tests", () => {
    expect(dnsConfigFromEnv({ APP_ENV: "test" })).toEqual({ provider: "local" });
    expect(routerConfigFromEnv({ APP_ENV: "development", LOCAL_ROUTER_BEHAVIOUR: '{"status":"pending"}' })).toEqual({ provider: "local", behaviour: { status: "pending" } });
    expect(dnsResolverFor(dnsConfigFromEnv(DEV), DEV).provider).toBe("local");
    expect(domainRouterFor(routerConfigFromEnv(DEV), DEV).provider).toBe("local");
  });

  it("refuse the local adapters in production (the default APP_ENV), naming the variable", () => {
    for (const appEnv of [{ APP_ENV: "production" }, {}]) {
      expect(() => dnsConfigFromEnv({ ...appEnv, DOMAIN_DNS: "local" })).toThrow("DOMAIN_DNS: the local DNS is for development and tests only");
      expect(() => dnsConfigFromEnv(appEnv)).toThrow(/DOMAIN_DNS/);
      expect(() => routerConfigFromEnv({ ...appEnv, DOMAIN_ROUTER: "local" })).toThrow("DOMAIN_ROUTER: the local router is for development and tests only");
      expect(() => routerConfigFromEnv(appEnv)).toThrow(/DOMAIN_ROUTER/);
    }
    expect(dnsConfigFromEnv({ APP_ENV: "production", DOMAIN_DNS: "cloudflare" })).toEqual({ provider: "cloudflare" });
    expect(routerConfigFromEnv({ APP_ENV: "production", ...CLOUDFLARE })).toEqual({ provider: "cloudflare", zoneId: CLOUDFLARE.CLOUDFLARE_ZONE_ID, apiToken: CLOUDFLARE.CLOUDFLARE_API_TOKEN });
  });

  it("name what is missing or wrong", () => {
    expect(() => dnsConfigFromEnv({ DOMAIN_DNS: "google" })).toThrow(/DOMAIN_DNS: must be local or cloudflare/);
    expect(() => routerConfigFromEnv({ DOMAIN_ROUTER: "fastly" })).toThrow(/DOMAIN_ROUTER/);
    expect(() => routerConfigFromEnv({ ...CLOUDFLARE, CLOUDFLARE_ZONE_ID: undefined })).toThrow(/CLOUDFLARE_ZONE_ID: is required/);
    expect(() => routerConfigFromEnv({ ...CLOUDFLARE, CLOUDFLARE_ZONE_ID: "example.com" })).toThrow(/CLOUDFLARE_ZONE_ID: must be the zone's id/);
    expect(() => routerConfigFromEnv({ ...CLOUDFLARE, CLOUDFLARE_API_TOKEN: "short" })).toThrow(/CLOUDFLARE_API_TOKEN/);
    expect(() => routerConfigFromEnv({ APP_ENV: "test", LOCAL_ROUTER_BEHAVIOUR: '{"failCreate":"sometimes"}' })).toThrow(/LOCAL_ROUTER_BEHAVIOUR/);
    expect(() => dnsResolverFor({ provider: "local" }, { APP_ENV: "test" })).toThrow(/HOSTS/);
  });

  it("wire the real adapters to their APIs", async () => {
    const doh = dohServer({ txt: { "_commerce-verify.shop.example.com": ["commerce-verify=abc"] } });
    const dns = dnsResolverFor(dnsConfigFromEnv({ DOMAIN_DNS: "cloudflare" }), {}, { url: doh.url, fetch: doh.fetch });
    expect(await dns.txt("_commerce-verify.shop.example.com")).toEqual({ kind: "records", values: ["commerce-verify=abc"] });
    const api = cloudflareServer({ zoneId: CLOUDFLARE.CLOUDFLARE_ZONE_ID, apiToken: CLOUDFLARE.CLOUDFLARE_API_TOKEN });
    const router = domainRouterFor(routerConfigFromEnv(CLOUDFLARE), {}, { url: api.baseUrl, fetch: api.fetch });
    expect(await router.create("shop.example.com")).toMatchObject({ hostname: "shop.example.com", status: "pending" });
  });
});

describe("the local DNS", () => {
  const failure = (p: Promise<unknown>) => p.then(() => "resolved", (e: unknown) => (e instanceof DnsError ? e.kind : String(e)));

  it("answers what was set for a name: records, none, SERVFAIL or a timeout", async () => {
    const dns = localDns(kv);
    const name = `_commerce-verify.local-${crypto.randomUUID().slice(0, 8)}.example.com`;
    expect(await dns.txt(name)).toEqual({ kind: "nxdomain" });
    await setLocalDnsEntry(kv, name, localDnsEntryFor("txt", "commerce-verify=abc"));
    expect(await dns.txt(name.toUpperCase())).toEqual({ kind: "records", values: ["commerce-verify=abc"] });
    await setLocalDnsEntry(kv, name, { txt: [] });
    expect(await dns.txt(name)).toEqual({ kind: "nodata" });
    await setLocalDnsEntry(kv, name, localDnsEntryFor("servfail", "x"));
    expect(await failure(dns.txt(name))).toBe("servfail");
    await setLocalDnsEntry(kv, name, localDnsEntryFor("timeout", "x"));
    expect(await failure(dns.txt(name))).toBe("timeout");
    await setLocalDnsEntry(kv, name, localDnsEntryFor("none", "x"));
    expect(await dns.txt(name)).toEqual({ kind: "nxdomain" });
  });
});

describe("the local router", () => {
  const failure = (p: Promise<unknown>) => p.then(() => "resolved", (e: unknown) => (e instanceof RouterError ? e.kind : String(e)));

  it("creates, refuses a duplicate, finds and deletes, like Cloudflare", async () => {
    const router = localRouter(kv);
    const hostname = `local-${crypto.randomUUID().slice(0, 8)}.example.com`;
    expect(await router.find(hostname)).toBeNull();
    const made = await router.create(hostname);
    expect(made).toMatchObject({ hostname, status: "active", sslStatus: "active" });
    expect(await failure(router.create(hostname))).toBe("conflict");
    expect(await router.find(hostname)).toEqual(made);
    await router.remove(made.id);
    expect(await router.find(hostname)).toBeNull();
    expect(await failure(router.remove(made.id))).toBe("not_found");
  });

  it("fails on demand and can leave new hostnames pending", async () => {
    const hostname = `local-${crypto.randomUUID().slice(0, 8)}.example.com`;
    expect(await failure(localRouter(kv, { failCreate: "rate_limited" }).create(hostname))).toBe("rate_limited");
    expect(await failure(localRouter(kv, { failFind: "unavailable" }).find(hostname))).toBe("unavailable");
    const made = await localRouter(kv, { status: "pending" }).create(hostname);
    expect(made).toMatchObject({ status: "pending", sslStatus: "pending_validation" });
    expect(await failure(localRouter(kv, { failRemove: "timeout" }).remove(made.id))).toBe("timeout");
  });
});
