import { Hono } from "hono";
import { base64Url } from "#shared/core/tokens";
import { publishedProfile } from "#shared/ucp/published-profile";
import type { StorefrontEnv } from "./context";
import { agentFacingOrigin } from "./ucp-agent";

/**
 * The store's UCP business profile at `/.well-known/ucp` on each of its domains, GET and HEAD (issue 26 item 2;
 * docs/ucp.md): what an agent reads first to learn the store's services, capabilities and signing keys. Before
 * any database work: the input guard, the `ucpProfile` limit per address (limits.tsx) and the store of the
 * hostname. Then one round trip: the switch and the published keys. The endpoints in it are on the hostname
 * asked, so each of a store's domains describes itself.
 *
 * - Agentic checkout off: 404 (as for any store that publishes no profile), not cached.
 * - Behind the storefront password: 403 `password_protected`, as the sessions answer, without reading the
 *   switch (the same answer on or off, so it says nothing the password page does not).
 * - On: 200, `public, max-age=300` (the specification asks at least 60 s; 5 minutes keeps agents' fetches
 *   rare while a switch turned off or a key rotated reaches them soon), a strong ETag of the body
 *   (If-None-Match answers 304), and `access-control-allow-origin: *`: the document is public and holds
 *   nothing a browser's origin should be kept from.
 */
export const ucpProfile = new Hono<StorefrontEnv>();

export const UCP_PROFILE_PATH = "/.well-known/ucp";
export const PROFILE_MAX_AGE = 300;

const refusal = (status: 403 | 404, code: string, content: string) =>
  Response.json({ code, content }, { status, headers: { "cache-control": "no-store", "access-control-allow-origin": "*" } });

/** A strong entity tag of the body: its SHA-256, base64url. */
async function etagOf(body: string): Promise<string> {
  return `"${base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body))))}"`;
}

/** If-None-Match by weak comparison (RFC 9110 13.1.2): any listed tag with our opaque tag, or `*`. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t.replace(/^W\//, "") === etag;
  });
}

// GET, and HEAD through it (Hono answers a HEAD with the GET's headers and no body).
ucpProfile.get(UCP_PROFILE_PATH, async (c) => {
  if (c.var.store.passwordCookieHash !== null) return refusal(403, "password_protected", "This store is open only to people with its password; it does not sell to agents.");
  const profile = await publishedProfile(c.var.db, c.var.storeId, agentFacingOrigin(c));
  if (!profile) return refusal(404, "not_found", "This store publishes no UCP profile.");
  // Turning agentic checkout on makes the store's first key; a store without one still says what it serves.
  if (profile.keys.length === 0) c.var.log.warn("ucp.profile_without_keys", { storeId: c.var.storeId });
  const body = JSON.stringify(profile);
  const etag = await etagOf(body);
  const headers = { etag, "cache-control": `public, max-age=${PROFILE_MAX_AGE}`, "access-control-allow-origin": "*" };
  if (matches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
  return c.body(body, 200, { ...headers, "content-type": "application/json" });
});
