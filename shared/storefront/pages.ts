import { and, asc, eq } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { page } from "../db/schema";
import type { Q } from "../db/steps";

/**
 * The store's published content pages, as a shopper reads them at /pages/<handle> (refunds, shipping,
 * privacy, terms, contact…): what the Storefront MCP answers when an agent asks for the store's policies.
 * Drafts never; at most PUBLISHED_PAGES_MAX of them, by title.
 */
export const PUBLISHED_PAGES_MAX = 100;

export interface PublishedPage {
  handle: string;
  title: string;
  body: string;
  updatedAt: Date;
}

export function publishedPagesPlan(q: Q): Plan<PublishedPage[]> {
  return plan(
    [
      q
        .select({ handle: page.handle, title: page.title, body: page.body, updatedAt: page.updatedAt })
        .from(page)
        .where(and(eq(page.storeId, CURRENT_STORE), eq(page.status, "published")))
        .orderBy(asc(page.title), asc(page.handle))
        .limit(PUBLISHED_PAGES_MAX),
    ] as const,
    ([rows]) => rows,
  );
}

/** A query's words, lower-cased (letters and digits), to rank pages by; none when the query has no word. */
const wordsOf = (text: string) => [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1))];

/**
 * The pages a query is about, best first: a word in the title or handle counts three times one in the body.
 * No query (or no word in it): every page, as read. A query that matches nothing answers every page too,
 * so an agent can still read the store's policies when its words are not the store's.
 */
export function pagesAbout(pages: readonly PublishedPage[], query: string | undefined): { pages: PublishedPage[]; matched: boolean } {
  const words = wordsOf(query ?? "");
  if (words.length === 0) return { pages: [...pages], matched: true };
  const scored = pages.map((p) => {
    const head = `${p.title} ${p.handle.replaceAll("-", " ")}`.toLowerCase();
    const body = p.body.toLowerCase();
    return { p, score: words.reduce((sum, w) => sum + (head.includes(w) ? 3 : 0) + (body.includes(w) ? 1 : 0), 0) };
  });
  const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
  return hits.length ? { pages: hits.map((s) => s.p), matched: true } : { pages: [...pages], matched: false };
}
