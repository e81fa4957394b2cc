/**
 * The storefront's navigation menu as shoppers see it (issue 23 item 3; docs/collections.md): the links of
 * the store's menu whose collection or page is published, in the merchant's order. It rides with the store's
 * held facts (the HOSTS namespace; the facts statement in shared/db/statements.ts reads it), so no page
 * reads it from the database: a change to the menu, a collection or a page bumps the catalogue version,
 * which pushes fresh facts and renews the edge cache's keys.
 */

export interface MenuLink {
  label: string;
  href: string;
}

/** Spaces and control characters (a link is one word), and the backslash browsers read as a slash. */
const UNSAFE = /[\s\u0000-\u001f\u007f\\]/;

/**
 * A link a shopper may follow from the menu: an https address, or a path of the store's own site. Never
 * javascript:, data:, http: or any other scheme, nor a protocol-relative //host. Migration 0042's check says
 * the same in the database.
 */
export function isMenuUrl(url: string): boolean {
  if (url.length === 0 || url.length > 2000 || UNSAFE.test(url)) return false;
  if (url.startsWith("/")) return !url.startsWith("//");
  if (!/^https:\/\/[^/?#]+/.test(url)) return false;
  try {
    return new URL(url).protocol === "https:";
  } catch {
    return false;
  }
}

/** The menu of a facts row or a held entry; null when it does not read as one (the entry is loaded afresh). */
export function readMenu(value: unknown): MenuLink[] | null {
  if (!Array.isArray(value)) return null;
  const links = value.filter(
    (v): v is MenuLink => typeof v === "object" && v !== null && typeof v.label === "string" && typeof v.href === "string" && isMenuUrl(v.href),
  );
  return links.length === value.length ? links.map(({ label, href }) => ({ label, href })) : null;
}
