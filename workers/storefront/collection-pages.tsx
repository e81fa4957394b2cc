import type { Context } from "hono";
import { z } from "zod";
import { together, type Plan } from "#shared/db/plan";
import type { Q } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { primaryHostnamePlan } from "#shared/storefront/catalog";
import { mediaPath } from "#shared/media/limits";
import { collectionPagePlan, publishedCollectionsPlan, type CollectionView } from "#shared/storefront/collections";
import { contentParagraphs } from "#shared/storefront/content";
import { notFoundPage } from "./catalog-pages";
import { ShopPage, type ShopHead } from "./layout";
import { ProductPicture } from "./media";
import { Cards } from "./product-card";
import type { ShopEnv } from "./shop-env";

/**
 * The shopper's collection pages (issue 23 item 3; docs/collections.md): /collections, the published
 * collections, and /collections/<handle>, one collection's active products in the merchant's order with
 * paging as /products has. Each page is one read-only unit of the store, one round trip, with the primary
 * hostname for canonical links; unpublished and unknown collections are the store's 404.
 */
type ShopContext = Context<ShopEnv>;

const PAGE_SIZE = 24;
const pageQuery = z.object({ page: z.coerce.number().int().min(1).max(1000).catch(1) });

async function read<T>(c: ShopContext, build: (q: Q) => Plan<T>): Promise<{ data: T; base: string }> {
  const { db, store, hostname } = c.var.shop;
  const { data, primary } = await sendStoreUnit(db, store.id, (q) => together({ data: build(q), primary: primaryHostnamePlan(q) }));
  return { data, base: `https://${primary ?? hostname}` };
}

const head = (c: ShopContext, canonical: string, title: string, description: string, meta?: ShopHead["meta"]): ShopHead => ({
  storeName: c.var.shop.store.name,
  title,
  description,
  canonical,
  ...(meta ? { meta } : {}),
});

/** A collection's share card (Open Graph, Twitter): its image as JPEG at the widest width up to 1280 px (chat apps' size). */
function collectionOpenGraph(collection: CollectionView, url: string, storeName: string, description: string): [string, string][] {
  const width = collection.image ? [...collection.image.widths].reverse().find((w) => w <= 1280) ?? collection.image.widths[0]! : undefined;
  const image = collection.image && width ? `${new URL(url).origin}${mediaPath(collection.image.hash, width, "jpg")}` : undefined;
  return [
    ["og:type", "website"],
    ["og:title", collection.title],
    ["og:description", description],
    ["og:url", url],
    ["og:site_name", storeName],
    ...(image ? ([["og:image", image]] as [string, string][]) : []),
    ["twitter:card", image ? "summary_large_image" : "summary"],
  ];
}

export async function collectionsPage(c: ShopContext) {
  const { store } = c.var.shop;
  const { data: collections, base } = await read(c, (q) => publishedCollectionsPlan(q));
  return c.html(
    <ShopPage head={head(c, `${base}/collections`, "Collections", `The collections of ${store.name}.`)}>
      <h1>Collections</h1>
      {collections.length === 0 ? (
        <p>
          No collections yet. <a href="/products">Browse all products</a>.
        </p>
      ) : (
        <ul class="collections">
          {collections.map((col) => (
            <li>
              {col.image ? <ProductPicture image={{ ...col.image, id: col.image.hash }} sizes="(min-width: 48rem) 16rem, 90vw" class="collection-image" /> : null}
              <a href={`/collections/${col.handle}`}>
                <strong>{col.title}</strong>
              </a>
              {col.description ? <p class="muted">{firstParagraph(col.description)}</p> : null}
            </li>
          ))}
        </ul>
      )}
    </ShopPage>,
  );
}

const firstParagraph = (text: string) => {
  const first = contentParagraphs(text)[0] ?? "";
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
};

export async function collectionPage(c: ShopContext) {
  const { store } = c.var.shop;
  const handle = c.req.param("handle") ?? "";
  const { page } = pageQuery.parse(c.req.query());
  const { data, base } = await read(c, (q) => collectionPagePlan(q, handle, { page, pageSize: PAGE_SIZE }));
  if (!data) return notFoundPage(c);
  const { collection, items, total } = data;
  const path = `/collections/${collection.handle}`;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const description = firstParagraph(collection.description).slice(0, 160) || `${collection.title} at ${store.name}.`;
  const canonical = `${base}${page > 1 ? `${path}?page=${page}` : path}`;
  return c.html(
    <ShopPage head={head(c, canonical, collection.title, description, collectionOpenGraph(collection, canonical, store.name, description))}>
      <h1>{collection.title}</h1>
      {collection.image && page === 1 ? <ProductPicture image={{ ...collection.image, id: collection.image.hash }} sizes="(min-width: 64rem) 60rem, 100vw" eager class="collection-hero" /> : null}
      {contentParagraphs(collection.description).map((para) => (
        <p>{para}</p>
      ))}
      <p class="muted">
        {total} product{total === 1 ? "" : "s"}
      </p>
      {items.length ? <Cards items={items} currency={store.currency} /> : <p>Nothing here yet. <a href="/products">Browse all products</a>.</p>}
      {pages > 1 ? (
        <nav class="pager" aria-label="Pages">
          {page > 1 ? <a href={`${path}?page=${page - 1}`}>Previous</a> : null}
          <span>
            Page {page} of {pages}
          </span>
          {page < pages ? <a href={`${path}?page=${page + 1}`}>Next</a> : null}
        </nav>
      ) : null}
    </ShopPage>,
  );
}
