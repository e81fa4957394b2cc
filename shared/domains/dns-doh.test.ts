import { describe, expect, it } from "vitest";
import { checkDomain, DnsError, txtValue, verificationRecord } from "./dns";
import { dohDns } from "./dns-doh";
import { dohServer, presentTxt } from "../../test/fakes/doh-server";

/** The DoH adapter against a local server that speaks Cloudflare's DNS-over-HTTPS JSON API. */
const TOKEN = "0123456789abcdef0123456789abcdef";
const record = verificationRecord("shop.example.com", TOKEN);

function setup(zone: Parameters<typeof dohServer>[0] = {}, timeoutMs = 1_000) {
  const server = dohServer(zone);
  return { server, dns: dohDns({ url: server.url, fetch: server.fetch, timeoutMs }) };
}

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (e instanceof DnsError ? e.kind : `not a DnsError: ${String(e)}`),
  );

describe("DNS-over-HTTPS adapter", () => {
  it("reads a name's TXT values, joining long records' character-strings and undoing escapes", async () => {
    const long = `commerce-verify=${"x".repeat(300)}`;
    const { dns, server } = setup({ txt: { [record.name]: [record.value, 'say "hi"', long] } });
    expect(await dns.txt(record.name)).toEqual({ kind: "records", values: [record.value, 'say "hi"', long] });
    expect(server.requests).toEqual(["GET /dns-query"]);
  });

  it("follows the answer of a CNAME chain to the TXT records at its end", async () => {
    const { dns } = setup({ cname: { [record.name]: "verify.provider.test" }, txt: { "verify.provider.test": [record.value] } });
    expect(await dns.txt(record.name)).toEqual({ kind: "records", values: [record.value] });
  });

  it("answers NXDOMAIN for an unknown name and NODATA for a name without TXT records", async () => {
    const { dns } = setup({ empty: ["exists.example.com"] });
    expect(await dns.txt("nothing-here.example.com")).toEqual({ kind: "nxdomain" });
    expect(await dns.txt("exists.example.com")).toEqual({ kind: "nodata" });
  });

  it("turns SERVFAIL, a refused query, an unreachable or failing resolver and a slow one into DnsErrors", async () => {
    const { dns, server } = setup({ servfail: [record.name] }, 100);
    expect(await errorOf(dns.txt(record.name))).toBe("servfail");
    expect(await errorOf(dns.txt(`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.example`))).toBe("bad_request");
    server.faults.push({ status: 503 }, { status: 429, retryAfter: 5 });
    expect(await errorOf(dns.txt(record.name))).toBe("unavailable");
    expect(await errorOf(dns.txt(record.name))).toBe("unavailable");
    server.faults.push({ delayMs: 300 });
    expect(await errorOf(dns.txt(record.name))).toBe("timeout");
    const down = dohDns({ url: "https://doh.local/dns-query", fetch: () => Promise.reject(new TypeError("connection refused")) });
    expect(await errorOf(down.txt(record.name))).toBe("unavailable");
    const garbage = dohDns({ url: "https://doh.local/dns-query", fetch: async () => new Response("<html>", { status: 200 }) });
    expect(await errorOf(garbage.txt(record.name))).toBe("unavailable");
  });

  it("sends the JSON accept header the API requires (the server refuses a query without it)", async () => {
    const { server } = setup();
    const bare = await server.fetch(`${server.url}?name=example.com&type=TXT`, { method: "GET" });
    expect(bare.status).toBe(400);
  });
});

describe("a domain's check", () => {
  it("is verified by the exact value, and says what else it found", async () => {
    const { dns, server } = setup({ servfail: ["_commerce-verify.broken.example.com"] }, 100);
    expect(await checkDomain(dns, "shop.example.com", TOKEN)).toBe("not_found");
    server.setTxt(record.name, ["commerce-verify=someone-elses-token"]);
    expect(await checkDomain(dns, "shop.example.com", TOKEN)).toBe("wrong_value");
    server.setTxt(record.name, ["v=spf1 -all", ` ${record.value} `]);
    expect(await checkDomain(dns, "shop.example.com", TOKEN)).toBe("verified");
    expect(await checkDomain(dns, "broken.example.com", TOKEN)).toBe("servfail");
    server.faults.push({ delayMs: 300 });
    expect(await checkDomain(dns, "shop.example.com", TOKEN)).toBe("timeout");
    server.faults.push({ status: 502 });
    expect(await checkDomain(dns, "shop.example.com", TOKEN)).toBe("unavailable");
  });

  it("names the record `_commerce-verify.<hostname>` with the value `commerce-verify=<token>`", () => {
    expect(record).toEqual({ name: "_commerce-verify.shop.example.com", value: `commerce-verify=${TOKEN}` });
  });
});

describe("TXT presentation form", () => {
  it("reads quoted character-strings with \\\" \\\\ and \\DDD escapes, and unquoted text as it is", () => {
    expect(txtValue('"abc" "def"')).toBe("abcdef");
    expect(txtValue('"a\\"b\\\\c\\065"')).toBe('a"b\\cA');
    expect(txtValue("plain text")).toBe("plain text");
    expect(txtValue(presentTxt("x".repeat(600)))).toBe("x".repeat(600));
  });
});
