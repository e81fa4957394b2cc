import { z } from "zod";

/** A short link's slug: lower-case letters, digits and `-`, 1..64 (the SQL check says the same). */
export const LINK_SLUG = /^[a-z0-9-]{1,64}$/;

/** The `wc_lk` cookie: the id of the short link the shopper last arrived through (30 days). */
export const LINK_COOKIE = "wc_lk";
export const LINK_COOKIE_MAX_AGE = 30 * 24 * 60 * 60;

/**
 * A link's target: an absolute http(s) URL, or a path on the store's own host that starts with a
 * single `/` (`//host` would leave the store, so it is refused).
 */
export const linkTargetSchema = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .refine((t) => {
    if (/\s/.test(t)) return false;
    if (t.startsWith("/")) return !t.startsWith("//") && !t.startsWith("/\\");
    try {
      const u = new URL(t);
      return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "" && /^https?:\/\/[^/?#]/.test(t);
    } catch {
      return false;
    }
  }, "Enter an absolute http(s) URL or a path that starts with a single /.");

export interface LinkUtm {
  source: string;
  medium: string;
  campaign: string;
  term: string | null;
  content: string | null;
}

/**
 * Where a click goes: the target (a path resolves against the request's origin) with the link's UTM
 * tags merged into its query. Keys the target already has are kept, except the utm_* keys this link
 * sets, which replace the target's own; a UTM tag the link leaves empty (term, content) is left as the
 * target has it. The fragment stays.
 */
export function linkDestination(target: string, utm: LinkUtm, origin: string): string {
  const url = new URL(target, origin);
  const tags: [string, string | null][] = [
    ["utm_source", utm.source],
    ["utm_medium", utm.medium],
    ["utm_campaign", utm.campaign],
    ["utm_term", utm.term],
    ["utm_content", utm.content],
  ];
  for (const [key, value] of tags) if (value !== null) url.searchParams.set(key, value);
  return url.toString();
}
