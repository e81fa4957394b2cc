import { z } from "zod";
import { constant, together } from "#shared/db/plan";
import { inlineScript } from "#shared/http/security-headers";
import { publishedCollectionsPlan } from "#shared/storefront/collections";
import { searchPlan } from "#shared/storefront/search";
import { head, major, PAGE_SIZE, read, toMinor, type ShopContext } from "./catalog-read";
import { ShopPage } from "./layout";
import { Cards } from "./product-card";

const searchQuery = z.object({
  q: z.string().catch("").transform((t) => t.trim().slice(0, 200)),
  page: z.coerce.number().int().min(1).max(84).catch(1),
  min: major.catch(undefined),
  max: major.catch(undefined),
  stock: z.literal("1").optional().catch(undefined),
  collection: z.string().regex(/^[a-z0-9-]{1,100}$/).optional().catch(undefined),
});

/**
 * Fills the search input's list with suggestions as the shopper types (GET /api/search/suggest, search-suggest.ts):
 * a pause of 150 ms, only the newest answer kept; without it the form works the same.
 */
const SUGGEST_SCRIPT = inlineScript(`(function(){var i=document.getElementById("search-q"),l=document.getElementById("search-suggestions");if(!i||!l||!window.fetch)return;var t,n=0;
i.addEventListener("input",function(){clearTimeout(t);var v=i.value.trim();if(v.length<2){l.textContent="";return}t=setTimeout(function(){var m=++n;
fetch("/api/search/suggest?q="+encodeURIComponent(v),{headers:{accept:"application/json"}}).then(function(r){return r.ok?r.json():{suggestions:[]}}).then(function(d){if(m!==n)return;
l.textContent="";(d.suggestions||[]).forEach(function(s){var o=document.createElement("option");o.value=s.title;l.appendChild(o)})}).catch(function(){})},150)})})()`);

/**
 * Search (issue 23 item 5; shared/storefront/search.ts): the shopper's words with typos forgiven, what can be
 * bought first, then by relevance; filters for price, stock and collection; one round trip.
 */
export async function searchPage(c: ShopContext) {
  const { store } = c.var.shop;
  const f = searchQuery.parse(c.req.query());
  const term = f.q;
  const query = { text: term, page: f.page, pageSize: PAGE_SIZE, minPrice: toMinor(f.min, store.currency), maxPrice: toMinor(f.max, store.currency), inStockOnly: f.stock === "1", collection: f.collection };
  const { data: found, base } = await read(c, (q) => together({ results: term ? searchPlan(q, query) : constant({ items: [], total: 0, more: false }), collections: publishedCollectionsPlan(q) }));
  const { results: data, collections } = found;
  const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
  const link = (page: number) => {
    const params = new URLSearchParams({ q: term, ...(f.min !== undefined ? { min: String(f.min) } : {}), ...(f.max !== undefined ? { max: String(f.max) } : {}), ...(f.stock ? { stock: "1" } : {}), ...(f.collection ? { collection: f.collection } : {}), page: String(page) });
    return `/search?${params}`;
  };
  return c.html(
    <ShopPage head={{ ...head(c, "/search", base, term ? `Search: ${term}` : "Search", `Search the products of ${store.name}.`), noindex: true }}>
      <h1>{term ? `Results for “${term}”` : "Search"}</h1>
      <form class="filters" method="get" action="/search" role="search" aria-label="Search and filter">
        <label for="search-q">Words</label>
        <input id="search-q" name="q" type="search" value={term} maxlength={200} list="search-suggestions" autocomplete="off" />
        <datalist id="search-suggestions"></datalist>
        <label for="search-min">Min price</label>
        <input id="search-min" name="min" type="number" min="0" step="any" inputmode="decimal" value={f.min ?? ""} />
        <label for="search-max">Max price</label>
        <input id="search-max" name="max" type="number" min="0" step="any" inputmode="decimal" value={f.max ?? ""} />
        <label class="check" for="search-stock">
          <input id="search-stock" name="stock" type="checkbox" value="1" checked={f.stock === "1"} /> In stock only
        </label>
        {collections.length ? (
          <>
            <label for="search-collection">Collection</label>
            <select id="search-collection" name="collection">
              <option value="">All products</option>
              {collections.map((k) => (
                <option value={k.handle} selected={k.handle === f.collection}>
                  {k.title}
                </option>
              ))}
            </select>
          </>
        ) : null}
        <button type="submit">Search</button>
      </form>
      {term ? (
        <p class="muted" role="status">
          {data.more ? `${data.total.toLocaleString("en-IN")}+` : data.total} product{data.total === 1 && !data.more ? "" : "s"} found
        </p>
      ) : null}
      {term && data.items.length === 0 ? <p>Nothing matches. Try fewer words, another spelling or a SKU.</p> : <Cards items={data.items} currency={store.currency} />}
      {pages > 1 ? (
        <nav class="pager" aria-label="Pages">
          {f.page > 1 ? <a href={link(f.page - 1)}>Previous</a> : null}
          <span>
            Page {f.page} of {pages}
          </span>
          {f.page < pages ? <a href={link(f.page + 1)}>Next</a> : null}
        </nav>
      ) : null}
      <script dangerouslySetInnerHTML={{ __html: SUGGEST_SCRIPT }} />
    </ShopPage>,
  );
}

