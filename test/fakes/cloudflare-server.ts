/**
 * A local server that speaks the part of Cloudflare's API v4 the router adapter uses, for tests: custom
 * hostnames of one zone (create, list by hostname or id, details, delete) behind a bearer token, the
 * `{success, errors, messages, result}` envelope, the create body validated as Cloudflare validates it, a
 * duplicate refused (409, code 1406), an unknown id 404, and failures on demand (5xx, 429 with
 * Retry-After, slowness). Give the adapter its `fetch` and `baseUrl`.
 */
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { faultInjection, jsonObject, type Fault } from "./provider";

interface SimHostname {
  id: string;
  hostname: string;
  ssl: { id: string; type: "dv"; method: string; status: string };
  status: string;
  verification_errors: string[];
  ownership_verification: { type: "txt"; name: string; value: string };
  created_at: string;
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
const hex32 = () => crypto.randomUUID().replace(/-/g, "");

const failure = (c: Context, status: ContentfulStatusCode, code: number, message: string, headers: Record<string, string> = {}) =>
  c.json({ success: false, errors: [{ code, message }], messages: [], result: null }, status, headers);
const ok = (c: Context, result: unknown, extra: Record<string, unknown> = {}) => c.json({ success: true, errors: [], messages: [], result, ...extra });

export function cloudflareServer(options: { zoneId?: string; apiToken?: string } = {}) {
  const zoneId = options.zoneId ?? "023e105f4ecef8ad9ca31a8372d0c353";
  const apiToken = options.apiToken ?? "local-cloudflare-api-token-0123456789abcdef";
  const hostnames = new Map<string, SimHostname>();
  const faults: Fault[] = [];
  const requests: string[] = [];
  const app = new Hono();
  const prefix = `/client/v4/zones/:zone/custom_hostnames`;

  app.use(faultInjection(faults, requests, (c, fault, headers) => failure(c, fault.status, fault.status === 429 ? 971 : 10000 + fault.status, "Please wait and consider throttling your request speed", headers)));
  app.use(async (c, next) => {
    if (c.req.header("authorization") !== `Bearer ${apiToken}`) return failure(c, 403, 10000, "Authentication error");
    return next();
  });
  // Route params are known only inside a route, so each one checks the zone.
  const wrongZone = (c: Context) => (c.req.param("zone") !== zoneId ? failure(c, 400, 7003, "Could not route to /zones, perhaps your object identifier is invalid?") : null);

  app.post(prefix, async (c) => {
    const refused = wrongZone(c);
    if (refused) return refused;
    const body = await jsonObject(c);
    if (!body) return failure(c, 400, 1409, "Invalid JSON in the request body.");
    const hostname = typeof body.hostname === "string" ? body.hostname.toLowerCase() : "";
    if (!HOSTNAME.test(hostname)) return failure(c, 400, 1409, "Invalid custom hostname. Hostnames must be valid fully qualified domain names.");
    const ssl = (body.ssl ?? {}) as Record<string, unknown>;
    if (!["http", "txt", "email"].includes(String(ssl.method)) || ssl.type !== "dv") return failure(c, 400, 1413, "Invalid SSL method or type: method must be http, txt or email and type dv.");
    if ([...hostnames.values()].some((h) => h.hostname === hostname)) return failure(c, 409, 1406, "Duplicate custom hostname found.");
    const made: SimHostname = {
      id: hex32(),
      hostname,
      ssl: { id: hex32(), type: "dv", method: String(ssl.method), status: "initializing" },
      status: "pending",
      verification_errors: ["custom hostname does not CNAME to this zone."],
      ownership_verification: { type: "txt", name: `_cf-custom-hostname.${hostname}`, value: crypto.randomUUID() },
      created_at: new Date().toISOString(),
    };
    hostnames.set(made.id, made);
    return ok(c, made);
  });

  app.get(prefix, (c) => {
    const refused = wrongZone(c);
    if (refused) return refused;
    const hostname = c.req.query("hostname")?.toLowerCase();
    const id = c.req.query("id");
    if (hostname && id) return failure(c, 400, 1400, "Use either hostname or id, not both.");
    const list = [...hostnames.values()].filter((h) => (!hostname || h.hostname === hostname) && (!id || h.id === id));
    return ok(c, list, { result_info: { page: 1, per_page: 20, count: list.length, total_count: list.length, total_pages: 1 } });
  });

  app.get(`${prefix}/:id`, (c) => {
    const refused = wrongZone(c);
    if (refused) return refused;
    const found = hostnames.get(c.req.param("id"));
    return found ? ok(c, found) : failure(c, 404, 1436, "The custom hostname was not found.");
  });

  app.delete(`${prefix}/:id`, (c) => {
    const refused = wrongZone(c);
    if (refused) return refused;
    const id = c.req.param("id");
    if (!hostnames.delete(id)) return failure(c, 404, 1436, "The custom hostname was not found.");
    return ok(c, { id });
  });

  return {
    zoneId,
    apiToken,
    baseUrl: "https://api.cloudflare.local/client/v4",
    fetch: (input: string, init: RequestInit) => Promise.resolve(app.fetch(new Request(input, init))),
    faults,
    requests,
    hostnames,
    /** What Cloudflare's DCV would do once the CNAME is in place: the hostname and its certificate go active. */
    activate(hostname: string) {
      for (const h of hostnames.values()) if (h.hostname === hostname) Object.assign(h, { status: "active", verification_errors: [], ssl: { ...h.ssl, status: "active" } });
    },
  };
}
