/**
 * Addresses of the per-store MCP endpoint and its metadata (SPEC "MCP and OAuth"). The store's MCP URL
 * is the OAuth resource (RFC 8707) its tokens are bound to; the protected-resource metadata (RFC 9728)
 * sits at the well-known prefix plus that path.
 */
export const MCP_PATH_PREFIX = "/api/mcp/";
export const PRM_PREFIX = "/.well-known/oauth-protected-resource";

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isSlug(value: string): boolean {
  return SLUG.test(value);
}

export function mcpResourceUrl(origin: string, slug: string): string {
  return `${origin}${MCP_PATH_PREFIX}${slug}`;
}

export function mcpMetadataUrl(origin: string, slug: string): string {
  return `${origin}${PRM_PREFIX}${MCP_PATH_PREFIX}${slug}`;
}

/** The store slug a resource URL names, if it is one of this admin's MCP URLs. */
export function slugOfResource(origin: string, resource: string | null | undefined): string | null {
  if (!resource) return null;
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.search || url.hash || !url.pathname.startsWith(MCP_PATH_PREFIX)) return null;
  const slug = url.pathname.slice(MCP_PATH_PREFIX.length);
  return isSlug(slug) ? slug : null;
}
