/** The counters the local WebSocket proxy's GET /stats answers (scripts/lib/ws-proxy.ts has them all). */
type Counter = "connections" | "opened" | "active" | "queued" | "peakActive" | "peakQueued" | "waitMsTotal" | "waitMsMax" | "refused" | "timedOut" | "abandoned";

export type ProxyStatsView = Record<Counter, number> & { limits: { maxUpstream: number; maxQueue: number; queueTimeoutMs: number } };

/** GET /stats of the proxy at host:port (loopback, plain http), from inside workerd. */
export async function proxyStats(address: string): Promise<ProxyStatsView> {
  const res = await fetch(`http://${address}/stats`);
  if (!res.ok) throw new Error(`proxy /stats: ${res.status}`);
  return (await res.json()) as ProxyStatsView;
}
