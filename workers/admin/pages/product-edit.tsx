import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AppError } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { listLocations } from "#shared/procedures/inventory";
import { archiveProduct, deleteProduct, removeVariant } from "#shared/procedures/product-removal";
import { createProduct, getProduct, updateProduct } from "#shared/procedures/products";
import { pageCall, type AdminContext, type AdminEnv, type SignedIn } from "../context";
import { call, optional, storePage } from "./chrome";
import { SelectField } from "./fields";
import { AdjustFields } from "./inventory";
import { ConfirmCard, doneNotice, formCurrency, handleFormPost, idParam, Notice, RowAction, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage, formatMoney } from "./layout";
import { draftOfForm, draftOfProduct, emptyDraft, errorsOfFailure, inputOf, ProductForm, type Errors, type ProductDraft } from "./product-form";
import { Section, Table } from "./parts";
import { listMedia } from "#shared/procedures/media";
import { MediaSection } from "./product-media-view";

/**
 * A product's pages (issue 13 item 1): `/products/new` creates one with its variants; `/products/<id>` edits
 * it, shows its stock per location (products.get answers both in one call), archives it, and deletes it or
 * one of its variants behind a confirmation naming what goes (roles with `records.delete` only).
 */
export const productEditPage = new Hono<AdminEnv>();

type Product = Awaited<ReturnType<typeof getProduct.run>>;

/** A refused post's form: what was typed and each message by its field. */
interface Refused {
  draft: ProductDraft;
  errors: Errors;
}

type Locations = Awaited<ReturnType<typeof listLocations.run>>;

/** Stock of a variant at a location not stocked yet (a new product's first stock): posted to /inventory, back here. */
const AddStock: FC<{ product: Product; locations: Locations; csrf: string }> = ({ product, locations, csrf }) => (
  <form method="post" action="/inventory" class="card" id="add-stock">
    <input type="hidden" name="csrf" value={csrf} />
    <input type="hidden" name="action" value="adjust" />
    <input type="hidden" name="return" value={`/products/${product.id}`} />
    <h3>Add or remove stock</h3>
    <SelectField id="stock-variant" name="variantId" label="Variant" value="" options={product.variants.map((v) => [v.id, v.sku ? `${v.title} (${v.sku})` : v.title] as const)} />
    <SelectField id="stock-location" name="locationId" label="Location" value="" options={[...locations.items].sort((a, b) => Number(b.sellsOnline) - Number(a.sellsOnline)).map((l) => [l.id, l.sellsOnline ? l.name : `${l.name} (not sold online)`] as const)} />
    <AdjustFields keyId="stock" delta="" reason="received" errors={{}} showLabels />
    <button type="submit">Save stock change</button>
  </form>
);

const Stock: FC<{ product: Product }> = ({ product }) => {
  const rows = product.variants.flatMap((v) => v.inventory.map((l) => ({ v, l })));
  return (
    <Section id="stock" title="Stock by location">
      {rows.length === 0 ? (
        <p class="muted">No stock recorded yet. Add some on the Inventory page.</p>
      ) : (
        <Table columns={[{ label: "Variant" }, { label: "Location" }, { label: "On hand", num: true }, { label: "Reserved", num: true }, { label: "Available", num: true }]}>
          {rows.map(({ v, l }) => (
            <tr data-stock={`${v.sku ?? v.title}@${l.locationName}`}>
              <td>
                <a href={`/inventory?query=${encodeURIComponent(v.sku ?? product.title)}`}>{v.title}</a>
                {v.sku ? <div class="muted">{v.sku}</div> : null}
              </td>
              <td>{l.locationName}</td>
              <td class="num">{l.onHand}</td>
              <td class="num">{l.reserved}</td>
              <td class="num">{l.available}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
};

/** What deleting takes with it, said before it happens. */
const DeleteConfirm: FC<{ product: Product; csrf: string }> = ({ product, csrf }) => {
  const levels = product.variants.reduce((n, v) => n + v.inventory.length, 0);
  return (
    <ConfirmCard id="confirm-delete" heading={`Delete “${product.title}” for good?`} to={`/products/${product.id}`} csrf={csrf} action="delete" label={`Delete ${product.title}`} keep="Keep it">
      This deletes the product, its {product.variants.length} variant{product.variants.length === 1 ? "" : "s"} and {levels} stock record{levels === 1 ? "" : "s"}. It
      cannot be undone. Orders already placed keep their lines. To take it off sale but keep it, archive it instead.
    </ConfirmCard>
  );
};

/** What removing one variant takes with it, said before it happens. */
const RemoveVariantConfirm: FC<{ product: Product; variant: Product["variants"][number]; csrf: string }> = ({ product, variant, csrf }) => {
  const onHand = variant.inventory.reduce((n, l) => n + l.onHand, 0);
  const levels = variant.inventory.length;
  return (
    <ConfirmCard
      id="confirm-remove"
      heading={`Remove the variant “${variant.title}”${variant.sku ? ` (${variant.sku})` : ""} for good?`}
      to={`/products/${product.id}`}
      csrf={csrf}
      action="removeVariant"
      fields={{ variantId: variant.id }}
      label={`Remove ${variant.title}`}
      keep="Keep it"
    >
      This deletes the variant and its {levels} stock record{levels === 1 ? "" : "s"} ({onHand} on hand). It cannot be undone. Orders already placed keep their
      lines; shoppers' carts lose it.
    </ConfirmCard>
  );
};

export async function renderEdit(c: AdminContext, id: string, notice?: FormNotice, status: 200 | 400 | 409 = 200, refused?: Refused) {
  const { chrome, me, read } = await storePage(c, { product: call(getProduct, { id }), locations: optional(listLocations, {}), media: call(listMedia, { productId: id }) });
  const can = { write: me.permissions.includes("products.write"), delete: me.permissions.includes("records.delete"), stock: me.permissions.includes("inventory.write") };
  const product = read.product();
  const locations = can.stock ? read.locations() : null;
  const confirm = c.req.query("confirm");
  if ((confirm === "delete" || confirm === "remove") && !can.delete) throw permissionDenied("records.delete");
  const confirming = confirm === "delete";
  const removing = confirm === "remove" && product.variants.length > 1 ? product.variants.find((v) => v.id === c.req.query("variant")) : undefined;
  // A variant can be removed while the product keeps another: the link sits in the variant's own rows.
  const removeHref = can.delete && product.variants.length > 1 ? (variantId: string) => `/products/${product.id}?confirm=remove&variant=${variantId}#confirm-remove` : undefined;
  const currency = me.store.currency;
  const state = refused ?? { draft: draftOfProduct(product, currency), errors: {} };
  const prices = product.variants.map((v) => formatMoney(v.priceMinor, currency));
  return c.html(
    <AdminPage title={product.title} chrome={chrome}>
      <p>
        <a href="/products">← Products</a>
      </p>
      <h1>{product.title}</h1>
      <p class="muted">
        <span class={`badge ${product.status}`}>{product.status}</span> · {product.variants.length} variant{product.variants.length === 1 ? "" : "s"} · {prices.join(", ")} ·{" "}
        {product.status === "active" ? <span>on the storefront at /products/{product.handle}</span> : <span>not on the storefront</span>}
      </p>
      <Notice notice={notice} />
      {confirming ? <DeleteConfirm product={product} csrf={chrome.csrf} /> : null}
      {removing ? <RemoveVariantConfirm product={product} variant={removing} csrf={chrome.csrf} /> : null}
      <ProductForm csrf={chrome.csrf} currency={me.store.currency} action={`/products/${product.id}`} state={state} submit="Save product" canWrite={can.write} {...(removeHref ? { removeHref } : {})} />
      <MediaSection product={product} media={read.media().items} csrf={chrome.csrf} canWrite={can.write} />
      <Stock product={product} />
      {locations && locations.items.length > 0 && product.variants.length > 0 ? <AddStock product={product} locations={locations} csrf={chrome.csrf} /> : null}
      {can.write || can.delete ? (
        <Section id="danger" title="Take it off sale">
          {can.write && product.status !== "archived" ? <RowAction to={`/products/${product.id}`} csrf={chrome.csrf} fields={{}} action="archive" label="Archive" /> : null}{" "}
          {can.delete && !confirming ? (
            <a href={`/products/${product.id}?confirm=delete#confirm-delete`} class="danger">
              Delete…
            </a>
          ) : null}
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

async function renderNew(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, refused?: Refused) {
  const { chrome, me } = await storePage(c);
  if (!me.permissions.includes("products.write")) throw permissionDenied("products.write");
  return c.html(
    <AdminPage title="New product" chrome={chrome}>
      <p>
        <a href="/products">← Products</a>
      </p>
      <h1>New product</h1>
      <Notice notice={notice} />
      <ProductForm csrf={chrome.csrf} currency={me.store.currency} action="/products/new" state={refused ?? { draft: emptyDraft(), errors: {} }} submit="Create product" canWrite />
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = {
  created: "Product created.",
  saved: "Product saved.",
  archived: "Product archived: it is off the storefront.",
  adjusted: "Stock saved.",
  "variant-removed": "Variant removed, with its stock records.",
  "image-added": "Image added, in every width.",
  "images-added": "Images added, in every width.",
  "image-saved": "Image saved.",
  "images-reordered": "Images reordered.",
  "image-removed": "Image removed.",
};
const DONE_OF_ACTION: Record<string, string> = { archive: "archived", removeVariant: "variant-removed" };

productEditPage.get("/products/new", (c) => renderNew(c));

productEditPage.get("/products/:id", (c) => {
  return renderEdit(c, idParam(c, "Product"), doneNotice(c, DONE));
});

/**
 * Saves through the procedure, or re-renders with the errors: those found here (amounts) at once, the
 * procedure's (400, 409) by their fields. `render` shows the page with a refused draft.
 */
async function save(
  c: AdminContext,
  signedIn: Pick<SignedIn, "id">,
  field: Field,
  currency: string,
  id: string | undefined,
  render: (notice: FormNotice, status: 400 | 409, refused: Refused) => Promise<Response>,
): Promise<{ redirectTo: string } | { render: Response }> {
  const draft = draftOfForm(field);
  const built = inputOf(draft, currency, id);
  const refuse = (errors: Errors, status: 400 | 409, text = "Not saved: correct the fields marked below.") => render({ ok: false, text }, status, { draft, errors }).then((r) => ({ render: r }));
  if ("errors" in built) return refuse(built.errors, 400);
  try {
    const saved = id ? await pageCall(c, signedIn, updateProduct, built.input, ["BAD_REQUEST", "CONFLICT"]) : await pageCall(c, signedIn, createProduct, built.input, ["BAD_REQUEST", "CONFLICT"]);
    return { redirectTo: `/products/${saved.id}?done=${id ? "saved" : "created"}` };
  } catch (e) {
    if (!(e instanceof AppError) || (e.code !== "BAD_REQUEST" && e.code !== "CONFLICT")) throw e;
    const failed: FailedPost = { action: "save", field, error: e };
    return refuse(errorsOfFailure(failed, built.rowOf), e.code === "CONFLICT" ? 409 : 400, e.code === "CONFLICT" ? e.message : undefined);
  }
}

// POST /products/new: create (products.write), or the same form with one more variant row.
productEditPage.post("/products/new", (c) =>
  handleFormPost(
    c,
    (ctx, n, s) => renderNew(ctx, n, s),
    "/products",
    {
      save: async (signedIn, field, base) => save(c, signedIn, field, await formCurrency(field, base), undefined, (n, s, r) => renderNew(c, n, s, r)),
      more: async (_signedIn, field) => ({ render: await renderNew(c, undefined, 200, { draft: draftOfForm(field, 1), errors: {} }) }),
    },
    "Choose Create product or Add another variant.",
  ),
);

// POST /products/<id>: save, more rows, archive, delete, remove a variant (the last two need records.delete; the procedure checks every permission).
productEditPage.post("/products/:id", (c) => {
  const id = idParam(c, "Product");
  const again = (n?: FormNotice, s: 200 | 400 | 409 = 200, r?: Refused) => renderEdit(c, id, n, s, r);
  return handleFormPost(
    c,
    (ctx, n, s) => renderEdit(ctx, id, n, s),
    (action) => (action === "delete" ? "/products?done=deleted" : `/products/${id}?done=${DONE_OF_ACTION[action] ?? "saved"}`),
    {
      save: async (signedIn, field, base) => save(c, signedIn, field, await formCurrency(field, base), id, again),
      more: async (_signedIn, field) => ({ render: await again(undefined, 200, { draft: draftOfForm(field, 1), errors: {} }) }),
      archive: (signedIn) => pageCall(c, signedIn, archiveProduct, { id }, ["NOT_FOUND"]),
      delete: (signedIn) => pageCall(c, signedIn, deleteProduct, { id }, ["NOT_FOUND"]),
      removeVariant: (signedIn, field) => pageCall(c, signedIn, removeVariant, { productId: id, variantId: field("variantId") ?? "" }, ["NOT_FOUND", "BAD_REQUEST", "CONFLICT"]),
    },
    "Choose Save, Archive, Delete or Remove a variant.",
  );
});
