import { Hono } from "hono";
import { z } from "zod";
import { PRODUCT_STATUSES } from "#shared/db/schema";
import { validate } from "#shared/http/validate";
import { hasNextPage } from "#shared/procedures/paging";
import { listProducts } from "#shared/procedures/products";
import type { AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { AdminPage, formatMoney } from "./layout";
import { pageCountText } from "./parts";

export const productsPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;

const query = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  query: z.string().trim().max(200).optional(),
  status: z.enum(PRODUCT_STATUSES).or(z.literal("")).optional(),
});

const linkTo = (params: { page: number; query?: string | undefined; status?: string | undefined }) => {
  const search = new URLSearchParams();
  if (params.query) search.set("query", params.query);
  if (params.status) search.set("status", params.status);
  if (params.page > 1) search.set("page", String(params.page));
  const text = search.toString();
  return text ? `/products?${text}` : "/products";
};

// GET /products: the catalog with search, a status filter and paging (products.list).
productsPage.get("/products", validate("query", query), async (c) => {
  const filters = c.req.valid("query");
  const status = filters.status || undefined;
  const { chrome, me, read } = await storePage(c, {
    products: call(listProducts, { page: filters.page, pageSize: PAGE_SIZE, ...(filters.query ? { query: filters.query } : {}), ...(status ? { status } : {}) }),
  });
  const result = read.products();
  const currency = me.store.currency;
  return c.html(
    <AdminPage title="Products" chrome={chrome}>
      <h1>Products</h1>
      {c.req.query("done") === "deleted" ? (
        <p class="notice" role="status">
          Product deleted.
        </p>
      ) : null}
      {me.permissions.includes("products.write") ? (
        <p>
          <a href="/products/new">New product</a>
        </p>
      ) : null}
      <form class="toolbar" method="get" action="/products" role="search">
        <input name="query" type="search" placeholder="Search title, handle or SKU" value={filters.query ?? ""} aria-label="Search products" />
        <select name="status" aria-label="Status">
          <option value="">All statuses</option>
          {PRODUCT_STATUSES.map((s) => (
            <option value={s} selected={s === status}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit">Search</button>
      </form>
      {result.items.length === 0 ? (
        <p class="card">{filters.query || status ? "No products match these filters." : "No products yet."}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Product</th>
              <th>Status</th>
              <th class="num">Variants</th>
              <th class="num">Price</th>
              <th class="num">On hand</th>
            </tr>
          </thead>
          <tbody>
            {result.items.map((p) => (
              <tr>
                <td>
                  <a href={`/products/${p.id}`}>{p.title}</a>
                  <div class="muted">{p.vendor ?? p.handle}</div>
                </td>
                <td>
                  <span class={`badge ${p.status}`}>{p.status}</span>
                </td>
                <td class="num">{p.variantCount}</td>
                <td class="num">
                  {p.priceMinMinor === p.priceMaxMinor
                    ? formatMoney(p.priceMinMinor, currency)
                    : `${formatMoney(p.priceMinMinor, currency)} – ${formatMoney(p.priceMaxMinor, currency)}`}
                </td>
                <td class="num">{p.onHand}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {result.page > 1 ? (
          <a rel="prev" href={linkTo({ page: result.page - 1, query: filters.query, status })}>
            ← Previous
          </a>
        ) : (
          <span />
        )}
        <span class="muted">{pageCountText(result, "products")}</span>
        {hasNextPage(result) ? (
          <a rel="next" href={linkTo({ page: result.page + 1, query: filters.query, status })}>
            Next →
          </a>
        ) : (
          <span />
        )}
      </nav>
    </AdminPage>,
  );
});
