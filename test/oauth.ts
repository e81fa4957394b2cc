import worker from "../workers/admin/index";
import type { Browser } from "./admin";
import { call } from "./call";

export { MemoryOAuthClient } from "./oauth-client";

/** OAuth needs https (or loopback http) for the issuer: the tests speak to the admin as this origin. */
export const SECURE_ADMIN = "https://admin.test";

/** fetch for the MCP SDK, answered by the admin Worker's real fetch handler inside workerd. */
export const adminFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  call(worker, new Request(input instanceof URL ? input.toString() : input, init));

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
