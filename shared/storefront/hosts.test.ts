import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PUSH_RETRY_DELAYS_MS, resolveStoreFacts, writeStoreFacts, type HostsKv, type StoreFacts } from "./hosts";

/** The real HOSTS namespace (miniflare) whose first `failures` writes fail, as a busy KV answers 500. */
function flaky(failures: number): HostsKv & { puts: number } {
  const kv = (env as unknown as { HOSTS: HostsKv }).HOSTS;
  const wrapper = {
    puts: 0,
    get: (key: string, type: "json") => kv.get(key, type),
    async put(key: string, value: string, options?: { expirationTtl?: number }) {
      wrapper.puts++;
      if (wrapper.puts <= failures) throw new Error("KV PUT failed: 500 Internal Server Error");
      return kv.put(key, value, options);
    },
  };
  return wrapper;
}

const facts = (version: number): StoreFacts => ({ id: crypto.randomUUID(), name: "Flaky", currency: "INR", passwordCookieHash: "ab".repeat(32), version });
const noLoad = () => Promise.reject(new Error("the pushed entry should answer"));

describe("a change's push to HOSTS", () => {
  it("is retried when KV fails for a moment, so the next request sees the change", async () => {
    const kv = flaky(PUSH_RETRY_DELAYS_MS.length);
    const pushed = facts(7);
    await writeStoreFacts(kv, pushed);
    expect(kv.puts).toBe(PUSH_RETRY_DELAYS_MS.length + 1);
    expect(await resolveStoreFacts(kv, pushed.id, noLoad)).toEqual({ facts: pushed, cached: true });
  });

  it("gives up after its retries with the KV's error (the caller logs it; the 60 s hold bounds the staleness)", async () => {
    const kv = flaky(PUSH_RETRY_DELAYS_MS.length + 1);
    await expect(writeStoreFacts(kv, facts(1))).rejects.toThrow("KV PUT failed");
    expect(kv.puts).toBe(PUSH_RETRY_DELAYS_MS.length + 1);
  });
});
