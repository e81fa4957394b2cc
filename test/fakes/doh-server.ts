/**
 * A local server that speaks Cloudflare's DNS-over-HTTPS JSON API (`GET /dns-query?name=&type=` with
 * `accept: application/dns-json`), for the DoH adapter's tests: TXT records in their presentation form
 * (long values split into 255-byte character-strings), CNAME chains, NXDOMAIN with the zone's SOA,
 * SERVFAIL with a comment, 400 for a malformed query, and failures on demand (HTTP 5xx, 429, slowness).
 */
import { Hono } from "hono";
import { faultInjection, type Fault } from "./provider";

export interface DohZone {
  /** name → its TXT values. */
  txt?: Record<string, string[]>;
  /** name → the name it is an alias of. */
  cname?: Record<string, string>;
  /** Names whose authoritative servers fail (SERVFAIL). */
  servfail?: string[];
  /** Names that exist with no TXT records (NOERROR, no answer). */
  empty?: string[];
}

const TYPES: Record<string, number> = { A: 1, CNAME: 5, SOA: 6, TXT: 16, AAAA: 28 };
const fqdn = (name: string) => (name.endsWith(".") ? name : `${name}.`).toLowerCase();

/** A TXT value in presentation form: quoted character-strings of at most 255 bytes, `"` and `\` escaped. */
export function presentTxt(value: string): string {
  const parts: string[] = [];
  for (let i = 0; i < value.length || parts.length === 0; i += 255) parts.push(value.slice(i, i + 255));
  return parts.map((p) => `"${p.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(" ");
}

export function dohServer(zone: DohZone = {}) {
  const txt = new Map(Object.entries(zone.txt ?? {}).map(([k, v]) => [fqdn(k), v]));
  const cname = new Map(Object.entries(zone.cname ?? {}).map(([k, v]) => [fqdn(k), fqdn(v)]));
  const servfail = new Set((zone.servfail ?? []).map(fqdn));
  const empty = new Set((zone.empty ?? []).map(fqdn));
  const faults: Fault[] = [];
  const requests: string[] = [];
  const app = new Hono();
  const flags = { TC: false, RD: true, RA: true, AD: false, CD: false };

  app.use(faultInjection(faults, requests, (c, fault, headers) => c.json({ error: "upstream failure" }, fault.status, headers)));

  app.get("/dns-query", (c) => {
    const name = c.req.query("name");
    const typeName = (c.req.query("type") ?? "A").toUpperCase();
    const type = TYPES[typeName] ?? Number(typeName);
    if (!/application\/dns-json/.test(c.req.header("accept") ?? "") && c.req.query("ct") !== "application/dns-json") {
      return c.json({ error: "Please use the application/dns-json accept header for JSON queries" }, 400);
    }
    if (!name || name.length > 253 || !Number.isInteger(type) || type <= 0) return c.json({ error: "Invalid query name or type" }, 400);
    const question = [{ name: fqdn(name), type }];
    let current = fqdn(name);
    const answer: { name: string; type: number; TTL: number; data: string }[] = [];
    for (let hops = 0; cname.has(current) && hops < 8; hops++) {
      const target = cname.get(current)!;
      answer.push({ name: current, type: TYPES.CNAME!, TTL: 300, data: target });
      current = target;
    }
    if (servfail.has(current)) return c.json({ Status: 2, ...flags, Question: question, Comment: ["EDE(22): No Reachable Authority"] });
    const values = type === TYPES.TXT ? txt.get(current) : undefined;
    if (values) answer.push(...values.map((v) => ({ name: current, type, TTL: 300, data: presentTxt(v) })));
    const exists = answer.length > 0 || txt.has(current) || empty.has(current);
    if (!exists) {
      const soa = { name: current.split(".").slice(-3).join("."), type: TYPES.SOA!, TTL: 1800, data: "ns1.example.test. dns.example.test. 2026010101 10000 2400 604800 1800" };
      return c.json({ Status: 3, ...flags, Question: question, Authority: [soa] });
    }
    return c.json({ Status: 0, ...flags, Question: question, ...(answer.length > 0 ? { Answer: answer } : {}) });
  });

  return {
    url: "https://doh.local/dns-query",
    fetch: (input: string, init: RequestInit) => Promise.resolve(app.fetch(new Request(input, init))),
    faults,
    requests,
    setTxt: (name: string, values: string[]) => void txt.set(fqdn(name), values),
  };
}
