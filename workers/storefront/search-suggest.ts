import { Hono } from "hono";
import { z } from "zod";
import { AppError, badRequest } from "#shared/core/errors";
import { sendStoreUnit } from "#shared/db/unit";
import { searchPlan, searchWords } from "#shared/storefront/search";
import type { StorefrontEnv } from "./context";
import { cachedPage } from "./edge-cache";
import { hasPasswordCookie } from "./password";

/**
 * Suggestions as the shopper types (issue 23 item 5): `GET /api/search/suggest?q=kur` answers the first
 * products the search page would show for those words, as JSON, one round trip (shared/storefront/search.ts).
 * The search form works without it; the search page's script fills the input's list from it. Answers are
 * kept in the edge cache under the store's catalogue version and the query's words, as the catalogue's pages
 * are, so a shopper typing costs the database once per new prefix per store, not per keystroke per shopper.
 * Closed with the store's password as the pages are.
 */
export const SUGGESTIONS = 6;

const input = z.object({ q: z.string().max(200, "Search for at most 200 characters.") });

export const suggestRoutes = new Hono<StorefrontEnv>();

suggestRoutes.get("/api/search/suggest", async (c) => {
  const parsed = input.safeParse({ q: c.req.query("q") ?? "" });
  if (!parsed.success) throw badRequest(parsed.error.issues.map((i) => ({ path: "q", message: i.message })));
  const { store, hostname, db } = c.var;
  const locked = store.passwordCookieHash !== null;
  if (locked && !(await hasPasswordCookie(c, store))) {
    throw new AppError("UNAUTHORIZED", "This store is open only to people with its password.", { reason: "password_required" }, { "cache-control": "no-store" });
  }
  const words = searchWords(parsed.data.q);
  const render = async () => {
    const found = words.length ? await sendStoreUnit(db, store.id, (q) => searchPlan(q, { text: words.join(" "), page: 1, pageSize: SUGGESTIONS })) : { items: [] };
    return Response.json({ suggestions: found.items.map((p) => ({ title: p.title, url: `/products/${p.handle}` })) });
  };
  if (locked) return render();
  const key = new Request(`https://${hostname}/-edge/${store.id}/${store.version}/api/search/suggest?q=${encodeURIComponent(words.join(" "))}`);
  return (await cachedPage(key, render)).res;
});
