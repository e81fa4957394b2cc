const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * The hostname a shopper asked for: the Host header (the URL's host as a fallback), lower-cased,
 * without port or trailing dot. Null for anything that cannot be a hostname, so junk never reaches
 * the database.
 */
export function requestHostname(hostHeader: string | undefined, url: string): string | null {
  const raw = (hostHeader ?? new URL(url).host).trim().toLowerCase();
  const withoutPort = raw.startsWith("[") ? raw : raw.replace(/:\d+$/, "");
  const host = withoutPort.replace(/\.$/, "");
  if (host.length === 0 || host.length > 253 || !HOSTNAME.test(host)) return null;
  return host;
}
