import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import {
  createCollection,
  deleteCollection,
  getCollection,
  listCollections,
  removeCollectionImage,
  setCollectionImage,
  setCollectionProducts,
  updateCollection,
} from "#shared/procedures/collections";
import { listProducts } from "#shared/procedures/products";
import { AppError } from "#shared/core/errors";
import { MAX_MEDIA_BYTES, mediaKey } from "#shared/media/limits";
import { pageCall, type AdminContext, type AdminEnv, type SignedIn } from "../context";
import { adminStoreFile, IMAGE_REFUSALS, imageFormPost } from "./image-upload";
import { call, storePage } from "./chrome";
import { CheckField, issueErrors, TextArea, TextField } from "./fields";
import { ConfirmCard, doneNotice, handleFormPost, idParam, Notice, RowAction, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime, StatusBadge } from "./order-words";
import { Pager, SearchBar, Section, Table } from "./parts";

/**
 * Collections (issue 23 item 3; docs/collections.md): `/collections` lists them (search, paging) and
 * creates one; `/collections/<id>` edits its title, handle, description and whether it is published, and
 * its products: add from a search, remove, and move up or down, each a plain form (no JavaScript needed).
 * Staff curate them (products.write); deleting one needs records.delete.
 */
export const collectionsPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;
const listQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).catch(1), query: z.string().trim().max(200).catch("") });

interface Draft {
  title: string;
  handle: string;
  description: string;
  published: boolean;
}
const EMPTY: Draft = { title: "", handle: "", description: "", published: false };
const draftOf = (field: Field): Draft => ({
  title: field("title") ?? "",
  handle: field("handle") ?? "",
  description: field("description") ?? "",
  published: field("published") === "yes",
});
const inputOf = (d: Draft) => ({ title: d.title, ...(d.handle.trim() ? { handle: d.handle.trim() } : {}), description: d.description, published: d.published });

const CollectionForm: FC<{ csrf: string; to: string; draft: Draft; errors: Record<string, string>; create?: boolean }> = ({ csrf, to, draft, errors, create }) => (
  <form method="post" action={to} class="card" id="collection-form">
    <input type="hidden" name="csrf" value={csrf} />
    <TextField id="title" label="Title" value={draft.title} error={errors["title"]} maxlength={255} />
    <TextField id="handle" label="Handle (optional; made from the title)" value={draft.handle} error={errors["handle"]} maxlength={100} help="The collection's address: /collections/<handle>." />
    <TextArea id="description" label="Description" value={draft.description} error={errors["description"]} rows={5} help="Shown above the products; a blank line starts a new paragraph." />
    <CheckField id="published" label="Published: shown on the storefront" checked={draft.published} error={errors["published"]} />
    <button type="submit" name="action" value="save">
      {create ? "Create collection" : "Save collection"}
    </button>
  </form>
);

async function renderList(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const q = listQuery.parse({ page: c.req.query("page"), query: c.req.query("query") });
  const { chrome, me, read } = await storePage(c, { list: call(listCollections, { page: q.page, pageSize: PAGE_SIZE, ...(q.query ? { query: q.query } : {}) }) });
  const canWrite = me.permissions.includes("products.write");
  const result = read.list();
  const link = (page: number) => `/collections?${new URLSearchParams({ ...(q.query ? { query: q.query } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  return c.html(
    <AdminPage title="Collections" chrome={chrome}>
      <h1>Collections</h1>
      <p class="muted">Your own lists of products, in your order, at /collections/&lt;handle&gt; on the storefront once published. Add them to the storefront's menu under Navigation.</p>
      <Notice notice={notice} />
      <SearchBar action="/collections" id="collection-query" label="Search collections" placeholder="Title or handle" value={q.query} />
      {result.items.length === 0 ? (
        <p class="card">{q.query ? "No collection matches." : "No collections yet."}</p>
      ) : (
        <Table columns={[{ label: "Collection" }, { label: "Products" }, { label: "State" }, { label: "Changed" }]}>
          {result.items.map((col) => (
            <tr data-collection={col.handle}>
              <td>
                <a href={`/collections/${col.id}`}>{col.title}</a>
                <div class="muted">/collections/{col.handle}</div>
              </td>
              <td>{col.productCount}</td>
              <td>
                <StatusBadge value={col.published ? "published" : "draft"} label="State" />
              </td>
              <td>
                <IstTime at={col.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager list={result} noun="collections" link={link} />
      {canWrite ? (
        <Section id="new-collection" title="New collection">
          <CollectionForm csrf={chrome.csrf} to="/collections" draft={failed ? draftOf(failed.field) : EMPTY} errors={issueErrors(failed?.error)} create />
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

const findQuery = z.string().trim().max(200).catch("");

async function renderCollection(c: AdminContext, id: string, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const find = findQuery.parse(c.req.query("find") ?? "");
  const { chrome, me, read } = await storePage(c, {
    collection: call(getCollection, { id }),
    found: call(listProducts, { page: 1, pageSize: 20, ...(find ? { query: find } : {}) }),
  });
  const canWrite = me.permissions.includes("products.write");
  const canDelete = me.permissions.includes("records.delete");
  const stored = read.collection();
  const draft = failed?.action === "save" ? draftOf(failed.field) : { title: stored.title, handle: stored.handle, description: stored.description, published: stored.published };
  const inCollection = new Set(stored.products.map((p) => p.id));
  const addable = read.found().items.filter((p) => !inCollection.has(p.id));
  const to = `/collections/${id}`;
  const last = stored.products.length - 1;
  return c.html(
    <AdminPage title={stored.title} chrome={chrome}>
      <p>
        <a href="/collections">← Collections</a>
      </p>
      <h1>{stored.title}</h1>
      <p class="muted">
        <StatusBadge value={stored.published ? "published" : "draft"} label="State" />{" "}
        {stored.published ? `On the storefront at /collections/${stored.handle}` : "Not published: not on the storefront"}
      </p>
      <Notice notice={notice} />
      {canDelete && c.req.query("confirm") === "delete" ? (
        <ConfirmCard id="confirm-delete" heading={`Delete ${stored.title}?`} to={to} csrf={chrome.csrf} action="delete" label="Delete collection" keep="Keep it">
          The collection and its menu items go; its products stay.
        </ConfirmCard>
      ) : null}
      {canWrite ? <CollectionForm csrf={chrome.csrf} to={to} draft={draft} errors={failed?.action === "save" ? issueErrors(failed.error) : {}} /> : null}
      <CollectionImage id={id} image={stored.image} csrf={chrome.csrf} canWrite={canWrite} />
      <Section id="products" title={`Products (${stored.products.length})`}>
        <p class="muted">Shoppers see the active ones, in this order.</p>
        {stored.products.length === 0 ? (
          <p class="card">No products yet.</p>
        ) : (
          <Table columns={[{ label: "Position" }, { label: "Product" }, { label: "State" }, ...(canWrite ? [{ label: "Order" }] : [])]}>
            {stored.products.map((p, i) => (
              <tr data-product={p.handle}>
                <td>{i + 1}</td>
                <td>
                  <a href={`/products/${p.id}`}>{p.title}</a>
                </td>
                <td>
                  <StatusBadge value={p.status} label="State" />
                </td>
                {canWrite ? (
                  <td>
                    {i > 0 ? <RowAction to={to} csrf={chrome.csrf} fields={{ productId: p.id }} action="up" label="Move up" ariaLabel={`Move ${p.title} up`} /> : null}
                    {i < last ? <RowAction to={to} csrf={chrome.csrf} fields={{ productId: p.id }} action="down" label="Move down" ariaLabel={`Move ${p.title} down`} /> : null}
                    <RowAction to={to} csrf={chrome.csrf} fields={{ productId: p.id }} action="remove" label="Remove" ariaLabel={`Remove ${p.title} from the collection`} />
                  </td>
                ) : null}
              </tr>
            ))}
          </Table>
        )}
      </Section>
      {canWrite ? (
        <Section id="add-products" title="Add products">
          <SearchBar action={`${to}#add-products`} id="find" label="Find products" placeholder="Title, handle or SKU" value={find} />
          {addable.length === 0 ? (
            <p class="card">{find ? "No other product matches." : "Every recent product is in the collection; search for others."}</p>
          ) : (
            <Table columns={[{ label: "Product" }, { label: "State" }, { label: "Add" }]}>
              {addable.map((p) => (
                <tr data-addable={p.handle}>
                  <td>{p.title}</td>
                  <td>
                    <StatusBadge value={p.status} label="State" />
                  </td>
                  <td>
                    <RowAction to={to} csrf={chrome.csrf} fields={{ productId: p.id }} action="add" label="Add" ariaLabel={`Add ${p.title}`} />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Section>
      ) : null}
      {canDelete && c.req.query("confirm") !== "delete" ? (
        <p>
          <a href={`${to}?confirm=delete#confirm-delete`}>Delete this collection…</a>
        </p>
      ) : null}
    </AdminPage>,
    status,
  );
}

/** The collection's image: its thumbnail, an upload form (multipart, no JavaScript needed) and Remove. */
const CollectionImage: FC<{ id: string; image: { hash: string; width: number; height: number; widths: number[]; alt: string } | null; csrf: string; canWrite: boolean }> = ({ id, image, csrf, canWrite }) => {
  const to = `/collections/${id}/image`;
  const thumb = image?.widths[Math.min(1, image.widths.length - 1)];
  return (
    <Section id="image" title="Image">
      {image && thumb ? (
        <img src={`/collections/media/${image.hash}/${thumb}.webp`} width={thumb} height={Math.max(1, Math.round((image.height * thumb) / image.width))} alt={image.alt || "The collection's image"} />
      ) : (
        <p class="muted">No image: the collection shows its title alone.</p>
      )}
      {canWrite ? (
        <form method="post" action={to} enctype="multipart/form-data" class="card">
          <input type="hidden" name="csrf" value={csrf} />
          <label for="collection-image">{image ? "Replace the image" : "Upload an image"}</label>
          <input id="collection-image" type="file" name="image" accept="image/jpeg,image/png,image/webp,image/avif" required aria-describedby="collection-image-help" />
          <p class="muted" id="collection-image-help">
            JPEG, PNG, WebP or AVIF, at most {MAX_MEDIA_BYTES / 1048576} MB and 12 megapixels. Shown on the collections list and above its products.
          </p>
          <label for="collection-image-alt">Alt text (optional: leave empty when the title says it all)</label>
          <input id="collection-image-alt" name="alt" maxlength={500} value={image?.alt ?? ""} />
          <button type="submit" name="action" value="upload">
            Upload
          </button>
        </form>
      ) : null}
      {canWrite && image ? (
        <form method="post" action={to}>
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit" name="action" value="remove" class="secondary">
            Remove the image
          </button>
        </form>
      ) : null}
    </Section>
  );
};

/** The collection's product ids after one move: up, down, out or in (at the end). */
export function reordered(ids: readonly string[], productId: string, move: "up" | "down" | "remove" | "add"): string[] {
  const out = ids.filter((id) => id !== productId);
  if (move === "remove") return out;
  if (move === "add") return ids.includes(productId) ? [...ids] : [...ids, productId];
  const at = ids.indexOf(productId);
  if (at < 0) return [...ids];
  const to = Math.max(0, Math.min(out.length, move === "up" ? at - 1 : at + 1));
  out.splice(to, 0, productId);
  return out;
}

/** A move applied to the collection as it is now (read fresh, so two people's moves do not undo each other). */
async function move(c: AdminContext, signedIn: Pick<SignedIn, "id">, id: string, field: Field, kind: "up" | "down" | "remove" | "add") {
  const current = await pageCall(c, signedIn, getCollection, { id }, ["NOT_FOUND"]);
  const productIds = reordered(
    current.products.map((p) => p.id),
    (field("productId") ?? "").toLowerCase(),
    kind,
  );
  return pageCall(c, signedIn, setCollectionProducts, { id, productIds }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]);
}

const DONE: Record<string, string> = {
  created: "Collection created.",
  saved: "Collection saved.",
  up: "Moved up.",
  down: "Moved down.",
  remove: "Removed from the collection.",
  add: "Added to the collection.",
  deleted: "Collection deleted.",
  "image-saved": "Image uploaded: shoppers see it now.",
  "image-removed": "Image removed.",
};

collectionsPage.get("/collections", (c) => renderList(c, doneNotice(c, DONE)));
collectionsPage.post("/collections", (c) =>
  handleFormPost(
    c,
    renderList,
    "/collections",
    {
      save: async (signedIn, field) => {
        const made = await pageCall(c, signedIn, createCollection, inputOf(draftOf(field)), ["BAD_REQUEST", "CONFLICT"]);
        return { redirectTo: `/collections/${made.id}?done=created` };
      },
    },
    "Choose Create collection.",
  ),
);

collectionsPage.get("/collections/:id", (c) => renderCollection(c, idParam(c, "Collection"), doneNotice(c, DONE)));
collectionsPage.post("/collections/:id", (c) => {
  const id = idParam(c, "Collection");
  const to = `/collections/${id}`;
  return handleFormPost(
    c,
    (ctx, n, s, f) => renderCollection(ctx, id, n, s, f),
    (action) => `${to}?done=${action === "save" ? "saved" : action}${["up", "down", "remove"].includes(action) ? "#products" : ""}`,
    {
      save: (signedIn, field) => pageCall(c, signedIn, updateCollection, { id, ...inputOf(draftOf(field)) }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      up: (signedIn, field) => move(c, signedIn, id, field, "up"),
      down: (signedIn, field) => move(c, signedIn, id, field, "down"),
      remove: (signedIn, field) => move(c, signedIn, id, field, "remove"),
      add: (signedIn, field) => move(c, signedIn, id, field, "add"),
      delete: async (signedIn) => {
        await pageCall(c, signedIn, deleteCollection, { id }, ["NOT_FOUND"]);
        return { redirectTo: "/collections?done=deleted" };
      },
    },
    "Choose Save, Move up, Move down, Remove, Add or Delete.",
  );
});

// POST /collections/<id>/image: upload (multipart) or remove the collection's image (products.write, checked by
// the procedures). A refusal shows the page again with why.
collectionsPage.post("/collections/:id/image", (c) => {
  const id = idParam(c, "Collection");
  return imageFormPost(
    c,
    (text, status = 400) => renderCollection(c, id, { ok: false, text }, status),
    (signedIn, text, image) =>
      image ? pageCall(c, signedIn, setCollectionImage, { id, alt: text("alt") ?? "", image }, IMAGE_REFUSALS) : pageCall(c, signedIn, removeCollectionImage, { id }, IMAGE_REFUSALS),
    (removed) => `/collections/${id}?done=${removed ? "image-removed" : "image-saved"}#image`,
  );
});

const FILE = /^([0-9a-f]{64})\/([1-9][0-9]{0,3})\.(webp|jpg)$/;

// GET /collections/media/<hash>/<width>.<webp|jpg>: a file of the member's active store, for the image's thumbnail (products.read).
collectionsPage.get("/collections/media/:hash/:file", (c) => {
  const file = FILE.exec(`${c.req.param("hash")}/${c.req.param("file")}`);
  if (!file) throw new AppError("NOT_FOUND", "No such image.");
  return adminStoreFile(c, "products.read", (storeId) => mediaKey(storeId, file[1]!, `${Number(file[2])}.${file[3] as "webp" | "jpg"}`), file[3] === "webp" ? "image/webp" : "image/jpeg");
});
