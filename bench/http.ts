import http from "node:http";
import { DEMO_PASSWORD, DEMO_PEOPLE } from "../scripts/lib/seed";
import type { WorkerName } from "../scripts/lib/workers";

/** The ports bench/ runs the three Workers on (apart from `npm run dev`'s). */
export const PORTS: Partial<Record<WorkerName, number>> = { worker: 18789, storefront: 18788, admin: 18787 };

// node:http rather than fetch: fetch drops a custom Host header, and the storefront routes by Host.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

export interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Signs in as the demo Owner through the real form and returns the session cookie. */
export async function signIn(): Promise<string> {
  const res = await send(`http://127.0.0.1:${PORTS.admin}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: DEMO_PEOPLE[0].email, password: DEMO_PASSWORD }).toString(),
  });
  const cookie = res.headers["set-cookie"]?.[0]?.split(";")[0];
  if (res.status !== 303 || !cookie) throw new Error(`Sign-in failed: ${res.status} ${res.body.slice(0, 200)}`);
  return cookie;
}

export async function createTokens(cookie: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await send(`http://127.0.0.1:${PORTS.admin}/api/rpc/apiGrants/createToken`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ json: { name: `bench ${i}`, areas: ["products:read"], lifetimeDays: 30 } }),
    });
    if (res.status !== 200) throw new Error(`createToken failed: ${res.status} ${res.body.slice(0, 200)}`);
    out.push((JSON.parse(res.body) as { json: { token: string } }).json.token);
  }
  return out;
}
