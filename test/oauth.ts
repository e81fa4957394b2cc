import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Database } from "#shared/db/database";
import worker from "../workers/admin/index";
import { makeStore, type TestStore } from "./harness";
import { MemoryOAuthClient } from "./oauth-client";
import { addMember } from "./procedures";
import { randomIp, sessionFor, type Browser } from "./admin";
import { call } from "./call";

export { MemoryOAuthClient } from "./oauth-client";

/** OAuth needs https (or loopback http) for the issuer: the tests speak to the admin as this origin. */
export const SECURE_ADMIN = "https://admin.test";

/**
 * fetch for the MCP SDK, answered by the admin Worker's real fetch handler inside workerd. A request that
 * names no client address comes from a fresh one, as separate clients do: the suite's files share the
 * runner's rate limiters (vitest.config.ts), so one file's clients never spend another's budget.
 */
export const adminFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const request = new Request(input instanceof URL ? input.toString() : input, init);
  if (!request.headers.has("cf-connecting-ip")) request.headers.set("cf-connecting-ip", randomIp());
  return call(worker, request);
};

const cookiePairs = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]!);

/**
 * The member's side of the consent: open the authorization URL signed in, tick `areas` (or keep what
 * is offered), press Approve or Deny. Returns the redirect back to the client.
 */
export async function consent(
  browser: Browser,
  authorizationUrl: URL,
  options: { areas?: string[]; decision?: "approve" | "deny" } = {},
): Promise<{ page: string; redirect: URL; status: number }> {
  const get = await call(worker, authorizationUrl.toString(), { headers: { cookie: browser.cookie }, redirect: "manual" });
  const page = await get.text();
  if (get.status !== 200) throw new Error(`consent page answered ${get.status}: ${page.slice(0, 300)}`);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? "";
  const offered = [...page.matchAll(/name="areas" value="([^"]+)"/g)].map((m) => m[1]!);
  const form = new URLSearchParams({ handle: field("handle"), csrf: field("csrf"), resource: field("resource").replace(/&amp;/g, "&"), decision: options.decision ?? "approve" });
  for (const a of options.areas ?? offered) form.append("areas", a);
  const post = await call(worker, `${SECURE_ADMIN}/oauth/authorize`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: SECURE_ADMIN,
      cookie: [browser.cookie, ...cookiePairs(get)].join("; "),
    },
    body: form.toString(),
    redirect: "manual",
  });
  const location = post.headers.get("location");
  if (!location) throw new Error(`consent POST answered ${post.status} without a redirect: ${(await post.text()).slice(0, 300)}`);
  return { page, redirect: new URL(location), status: post.status };
}

export const mcpUrl = (slug: string) => `${SECURE_ADMIN}/api/mcp/${slug}`;

export interface ConnectedClient {
  store: TestStore;
  browser: Browser;
  oauth: MemoryOAuthClient;
  client: Client;
}

/**
 * An MCP client that starts from nothing but the store's URL, as a real one does: the first connect
 * gets a 401 and runs discovery and registration, the member consents, the code is exchanged, and a
 * second connect succeeds.
 */
export async function connectMcpClient(
  db: Database,
  options: { areas?: string[]; role?: "owner" | "admin" | "staff"; store?: TestStore } = {},
): Promise<ConnectedClient> {
  const store = options.store ?? (await makeStore(db));
  const userId = options.role && options.role !== "owner" ? (await addMember(db, store, options.role)).userId : store.ownerUserId;
  const browser = await sessionFor(db, userId, store.id);
  const oauth = new MemoryOAuthClient();
  const url = new URL(mcpUrl(store.slug));
  const first = new StreamableHTTPClientTransport(url, { authProvider: oauth, fetch: adminFetch });
  const refused = await new Client({ name: "test", version: "1" }).connect(first).then(() => null, (e: unknown) => e);
  if (!(refused instanceof UnauthorizedError)) throw new Error(`expected the first connect to need authorization, got ${String(refused)}`);
  const { redirect } = await consent(browser, oauth.authorizationUrl!, options.areas ? { areas: options.areas } : {});
  await first.finishAuth(redirect.searchParams.get("code")!);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth, fetch: adminFetch }));
  return { store, browser, oauth, client };
}

/** The JSON a tool answered (tools answer compact JSON text). */
export const toolResult = (r: unknown) => JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as Record<string, unknown>;
