import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import worker from "../workers/storefront/index";
import { call } from "./call";

/**
 * A shopper's AI agent on the Storefront MCP (workers/storefront/storefront-mcp*.test.ts): the SDK's own client
 * whose HTTP goes to the storefront Worker at a store's hostname from one address, and a raw JSON-RPC POST as
 * any client (or attacker) sends it. `env` adds bindings, such as a test's agent platforms (UCP_AGENT_FETCH).
 */
export const agentFetch =
  (host: string, from: string, env: Record<string, unknown> = {}, extra: Record<string, string> = {}) =>
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const headers = new Headers(req.headers);
    headers.set("host", host);
    headers.set("cf-connecting-ip", from);
    for (const [k, v] of Object.entries(extra)) headers.set(k, v);
    const url = new URL(req.url);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.text();
    return call(worker, `http://storefront.test${url.pathname}${url.search}`, { method: req.method, headers, body }, env);
  };

export async function mcpAgent(host: string, from: string, env: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: "shopping-agent", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`https://${host}/api/mcp`), { fetch: agentFetch(host, from, env) }));
  return client;
}

/** One raw JSON-RPC POST to /api/mcp. */
export const rpcPost = (host: string, from: string, body: unknown, headers: Record<string, string> = {}, env: Record<string, unknown> = {}) =>
  call(
    worker,
    "http://storefront.test/api/mcp",
    {
      method: "POST",
      headers: { host, "cf-connecting-ip": from, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    },
    env,
  );

export const callOf = (name: string, args: unknown, id: number | string = 1) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
