import { describe, expect, it } from "vitest";
import { cloudflareServer } from "../../test/fakes/cloudflare-server";
import { ensureRouted, ensureUnrouted, RouterError } from "./router";
import { cloudflareRouter } from "./router-cloudflare";

/** The Cloudflare for SaaS adapter against a local server that speaks the custom hostnames API. */
function setup(options: { timeoutMs?: number; apiToken?: string; zoneId?: string } = {}) {
  const server = cloudflareServer();
  const router = cloudflareRouter({
    zoneId: options.zoneId ?? server.zoneId,
    apiToken: options.apiToken ?? server.apiToken,
    baseUrl: server.baseUrl,
    fetch: server.fetch,
    timeoutMs: options.timeoutMs ?? 1_000,
  });
  return { server, router };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (e instanceof RouterError ? { kind: e.kind, status: e.status, code: e.code, retryable: e.retryable, retryAfterSeconds: e.retryAfterSeconds } : String(e)),
  );

describe("Cloudflare custom hostnames adapter", () => {
  it("creates a hostname with HTTP DCV, finds it by hostname and deletes it by id", async () => {
    const { server, router } = setup();
    const made = await router.create("shop.example.com");
    expect(made).toMatchObject({ hostname: "shop.example.com", status: "pending", sslStatus: "initializing" });
    expect(made.id).toMatch(/^[0-9a-f]{32}$/);
    expect(server.hostnames.get(made.id)?.ssl).toMatchObject({ method: "http", type: "dv" });
    expect(await router.find("shop.example.com")).toEqual(made);
    expect(await router.find("other.example.com")).toBeNull();
    server.activate("shop.example.com");
    expect(await router.find("shop.example.com")).toMatchObject({ status: "active", sslStatus: "active", verificationErrors: [] });
    await router.remove(made.id);
    expect(await router.find("shop.example.com")).toBeNull();
    expect(server.requests).toEqual([
      `POST /client/v4/zones/${server.zoneId}/custom_hostnames`,
      `GET /client/v4/zones/${server.zoneId}/custom_hostnames`,
      `GET /client/v4/zones/${server.zoneId}/custom_hostnames`,
      `GET /client/v4/zones/${server.zoneId}/custom_hostnames`,
      `DELETE /client/v4/zones/${server.zoneId}/custom_hostnames/${made.id}`,
      `GET /client/v4/zones/${server.zoneId}/custom_hostnames`,
    ]);
  });

  it("maps a duplicate to conflict and an unknown id to not_found; ensureRouted and ensureUnrouted absorb both", async () => {
    const { server, router } = setup();
    const made = await router.create("shop.example.com");
    expect(await failure(router.create("shop.example.com"))).toMatchObject({ kind: "conflict", status: 409, code: 1406, retryable: false });
    expect(await ensureRouted(router, "shop.example.com")).toEqual(made);
    expect(server.hostnames.size).toBe(1);
    expect(await failure(router.remove("0".repeat(32)))).toMatchObject({ kind: "not_found", status: 404, code: 1436 });
    await ensureUnrouted(router, made.id);
    await ensureUnrouted(router, made.id);
    expect(server.hostnames.size).toBe(0);
  });

  it("a create that loses a race to another creator finds the winner's hostname", async () => {
    const { server, router } = setup();
    const racing = {
      ...router,
      find: async (hostname: string) => (server.hostnames.size === 0 ? (await router.create(hostname), null) : router.find(hostname)),
    };
    const routed = await ensureRouted(racing, "shop.example.com");
    expect(server.hostnames.size).toBe(1);
    expect(routed.id).toBe([...server.hostnames.keys()][0]);
  });

  it("maps refusals: a bad hostname 400, a wrong token 403, a wrong zone 400", async () => {
    const { router } = setup();
    expect(await failure(router.create("not a hostname"))).toMatchObject({ kind: "bad_request", status: 400, code: 1409 });
    expect(await failure(setup({ apiToken: "x".repeat(40) }).router.find("shop.example.com"))).toMatchObject({ kind: "auth", status: 403, code: 10000 });
    expect(await failure(setup({ zoneId: "f".repeat(32) }).router.create("shop.example.com"))).toMatchObject({ kind: "bad_request", status: 400, code: 7003 });
  });

  it("maps 429 (with Retry-After), 5xx, a timeout and an unreachable API to retryable errors", async () => {
    const { server, router } = setup({ timeoutMs: 100 });
    server.faults.push({ status: 429, retryAfter: 30 });
    expect(await failure(router.create("shop.example.com"))).toMatchObject({ kind: "rate_limited", status: 429, retryable: true, retryAfterSeconds: 30 });
    server.faults.push({ status: 500 }, { status: 503 });
    expect(await failure(router.find("shop.example.com"))).toMatchObject({ kind: "unavailable", status: 500, retryable: true });
    expect(await failure(router.remove("a".repeat(32)))).toMatchObject({ kind: "unavailable", status: 503 });
    server.faults.push({ delayMs: 300 });
    expect(await failure(router.find("shop.example.com"))).toMatchObject({ kind: "timeout", retryable: true });
    const down = cloudflareRouter({ zoneId: server.zoneId, apiToken: server.apiToken, fetch: () => Promise.reject(new TypeError("network down")) });
    expect(await failure(down.find("shop.example.com"))).toMatchObject({ kind: "unavailable", retryable: true });
    const odd = cloudflareRouter({ zoneId: server.zoneId, apiToken: server.apiToken, fetch: async () => Response.json({ success: true, errors: [], result: { nope: 1 } }) });
    expect(await failure(odd.create("shop.example.com"))).toMatchObject({ kind: "unavailable" });
    expect(server.hostnames.size).toBe(0);
  });
});
