import http from "node:http";
import { createTokens, PORTS } from "./http";

type Counters = { connections: number; opened: number; turns: number };

/** `n` concurrent token-API calls spread over `grants` fresh tokens; status counts and what the proxy saw. */
export async function burst(cookie: string, proxy: { stats(): Counters }, n: number, grants: number) {
  const fresh = await createTokens(cookie, grants);
  const crowd = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const before = proxy.stats();
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
  await new Promise((r) => setTimeout(r, 500)); // the activity folds after the answers
  const statuses: Record<string, number> = {};
  for (const s of answers) statuses[s] = (statuses[s] ?? 0) + 1;
  const after = proxy.stats();
  const answered = statuses["200"] ?? 0;
  const roundTrips = after.turns - before.turns;
  return {
    calls: n,
    grants,
    statuses,
    serverErrors: answers.filter((s) => s >= 500).length,
    /** WebSocket connections: none on the HTTP path. */
    connectionsOpened: after.connections - before.connections,
    /** Postgres connections the proxy had to open (its HTTP pool keeps them between requests). */
    upstreamOpened: after.opened - before.opened,
    roundTrips,
    /** Beyond two per answered call (its own and its activity fold after the answer): what refused calls cost, and anything else. */
    roundTripsBeyondAnswered: roundTrips - 2 * answered,
    wallMs,
  };
}
