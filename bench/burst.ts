import http from "node:http";
import { createTokens, PORTS } from "./http";

/** `n` concurrent token-API calls spread over `grants` fresh tokens; status counts and proxy connections. */
export async function burst(cookie: string, proxy: { stats(): { connections: number } }, n: number, grants: number) {
  const fresh = await createTokens(cookie, grants);
  const crowd = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const before = proxy.stats().connections;
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          `http://127.0.0.1:${PORTS.admin}/api/v1/products/list`,
          { agent: crowd, method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${fresh[i % grants]}` } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ json: { pageSize: 1 } }));
      }),
    ),
  );
  const wallMs = Math.round(performance.now() - started);
  await new Promise((r) => setTimeout(r, 500)); // the activity upserts after the answers reuse their connection
  const statuses: Record<string, number> = {};
  for (const s of answers) statuses[s] = (statuses[s] ?? 0) + 1;
  const connections = proxy.stats().connections - before;
  return { calls: n, grants, statuses, serverErrors: answers.filter((s) => s >= 500).length, connectionsOpened: connections, connectionsOpenedByRefused: connections - (statuses["200"] ?? 0), wallMs };
}
