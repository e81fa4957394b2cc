import type { FC } from "hono/jsx";
import { PRODUCT_STATUSES, TAX_CLASSES, type TaxClass } from "#shared/db/schema";
import type { FieldIssue } from "#shared/core/errors";
import { CheckField, SelectField, TextArea, TextField } from "./fields";
import type { Field, FailedPost } from "./form-post";
import { amountText, minorUnitsOf } from "./money";

/**
 * The product form of `/products/new` and `/products/<id>` (./product-edit.tsx): the product's fields and a
 * row per variant, prices in rupees. Without JavaScript, "Add another variant" posts the form back with one
 * more row; blank new rows are left out. A refused post shows each message by its field, keeping what was
 * typed, whether the refusal came from here (an amount that is not money) or from the procedure.
 */
export interface VariantDraft {
  id: string;
  title: string;
  sku: string;
  price: string;
  compareAt: string;
  taxClass: string;
  preorder: boolean;
}

export interface ProductDraft {
  title: string;
  handle: string;
  description: string;
  status: string;
  vendor: string;
  hsnCode: string;
  variants: VariantDraft[];
}

export type Errors = Record<string, string>;

export interface ProductFormState {
  draft: ProductDraft;
  errors: Errors;
}

export const MAX_ROWS = 50;
const TAX_LABELS: Record<TaxClass, string> = {
  gst_exempt: "GST exempt", gst_0: "GST 0 %", gst_5: "GST 5 %", gst_18: "GST 18 %", gst_40: "GST 40 %",
  gst_3: "GST 3 % (gold, silver, jewellery)", gst_1_5: "GST 1.5 % (cut and polished diamonds)",
  gst_0_25: "GST 0.25 % (rough diamonds, precious stones)",
  gst_apparel: "Apparel: GST 5 % up to ₹2,500 a piece, 18 % above", gst_footwear: "Footwear: GST 5 % up to ₹2,500 a pair, 18 % above",
};
const blankVariant = (): VariantDraft => ({ id: "", title: "", sku: "", price: "", compareAt: "", taxClass: "gst_18", preorder: false });

export function emptyDraft(rows = 2): ProductDraft {
  return { title: "", handle: "", description: "", status: "draft", vendor: "", hsnCode: "", variants: Array.from({ length: rows }, blankVariant) };
}

interface StoredProduct {
  title: string;
  handle: string;
  description: string;
  status: string;
  vendor: string | null;
  hsnCode: string | null;
  variants: { id: string; title: string; sku: string | null; priceMinor: number; compareAtMinor: number | null; taxClass: string; preorder: boolean }[];
}

export function draftOfProduct(p: StoredProduct, currency: string, extraRows = 1): ProductDraft {
  return {
    title: p.title,
    handle: p.handle,
    description: p.description,
    status: p.status,
    vendor: p.vendor ?? "",
    hsnCode: p.hsnCode ?? "",
    variants: [
      ...p.variants.map((v) => ({
        id: v.id,
        title: v.title,
        sku: v.sku ?? "",
        price: amountText(v.priceMinor, currency),
        compareAt: amountText(v.compareAtMinor, currency),
        taxClass: v.taxClass,
        preorder: v.preorder,
      })),
      ...Array.from({ length: extraRows }, blankVariant),
    ],
  };
}

/** What the form sent; `extra` more blank rows (the "Add another variant" button). */
export function draftOfForm(field: Field, extra = 0): ProductDraft {
  const rows = Math.max(1, Math.min(MAX_ROWS, Number.parseInt(field("rows") ?? "1", 10) || 1));
  const variants: VariantDraft[] = [];
  for (let i = 0; i < rows; i++) {
    const f = (name: string) => field(`v${i}.${name}`) ?? "";
    variants.push({ id: f("id"), title: f("title"), sku: f("sku"), price: f("price"), compareAt: f("compareAt"), taxClass: f("taxClass") || "gst_18", preorder: f("preorder") === "yes" });
  }
  for (let i = 0; i < extra && variants.length < MAX_ROWS; i++) variants.push(blankVariant());
  const text = (name: string) => field(name) ?? "";
  return { title: text("title"), handle: text("handle"), description: text("description"), status: text("status") || "draft", vendor: text("vendor"), hsnCode: text("hsnCode"), variants };
}

const isBlankNew = (v: VariantDraft) => !v.id && !v.title.trim() && !v.sku.trim() && !v.price.trim() && !v.compareAt.trim();

/**
 * The procedure's input from the draft (create, or update with `id`), or the errors found on the way (an
 * amount that is not money). `rowOf[i]` is the form row of the input's variant i, for the procedure's issues.
 */
export function inputOf(draft: ProductDraft, currency: string, id?: string): { input: Record<string, unknown>; rowOf: number[] } | { errors: Errors } {
  const errors: Errors = {};
  const rowOf: number[] = [];
  const variants: Record<string, unknown>[] = [];
  draft.variants.forEach((v, row) => {
    if (isBlankNew(v)) return;
    const price = minorUnitsOf(v.price, currency);
    const compareAt = minorUnitsOf(v.compareAt, currency);
    if ("error" in price) errors[`v${row}.price`] = price.error;
    else if (price.minor === null) errors[`v${row}.price`] = "Enter a price.";
    if ("error" in compareAt) errors[`v${row}.compareAt`] = compareAt.error;
    if ("error" in price || "error" in compareAt || price.minor === null) return;
    rowOf.push(row);
    const sku = v.sku.trim();
    variants.push({
      ...(v.id ? { id: v.id } : {}),
      title: v.title.trim() || "Default",
      ...(sku ? { sku } : v.id ? { sku: null } : {}),
      priceMinor: price.minor,
      ...(compareAt.minor !== null ? { compareAtMinor: compareAt.minor } : v.id ? { compareAtMinor: null } : {}),
      taxClass: v.taxClass,
      preorder: v.preorder,
    });
  });
  if (Object.keys(errors).length > 0) return { errors };
  if (!id && variants.length === 0) return { errors: { "v0.price": "A product needs at least one variant with a price." } };
  const optional = (value: string) => (value.trim() ? value.trim() : id ? null : undefined);
  const input: Record<string, unknown> = {
    ...(id ? { id } : {}),
    title: draft.title,
    ...(draft.handle.trim() ? { handle: draft.handle.trim() } : {}),
    description: draft.description,
    status: draft.status,
    vendor: optional(draft.vendor),
    hsnCode: optional(draft.hsnCode),
    variants,
  };
  for (const key of Object.keys(input)) if (input[key] === undefined) delete input[key];
  return { input, rowOf };
}

const VARIANT_FIELD: Record<string, string> = { priceMinor: "price", compareAtMinor: "compareAt", sku: "sku", title: "title", taxClass: "taxClass", preorder: "preorder", id: "title" };

/** The procedure's issues as form fields: `variants.1.priceMinor` → `v<row>.price`. */
export function errorsOfFailure(failed: FailedPost, rowOf: readonly number[]): Errors {
  const errors: Errors = {};
  for (const issue of (failed.error.data?.issues as readonly FieldIssue[] | undefined) ?? []) {
    const m = /^variants\.(\d+)\.(\w+)$/.exec(issue.path);
    const name = m ? `v${rowOf[Number(m[1])] ?? Number(m[1])}.${VARIANT_FIELD[m[2]!] ?? "title"}` : issue.path === "variants" ? "v0.price" : issue.path;
    errors[name] ??= issue.message;
  }
  if (failed.error.code === "CONFLICT" && /handle/i.test(failed.error.message)) errors["handle"] ??= failed.error.message;
  return errors;
}

export const ProductForm: FC<{ csrf: string; currency: string; action: string; state: ProductFormState; submit: string; canWrite: boolean; removeHref?: (variantId: string) => string }> = ({
  csrf,
  currency,
  action,
  state,
  submit,
  canWrite,
  removeHref,
}) => {
  const { draft, errors } = state;
  return (
    <form method="post" action={action} class="card" id="product-form">
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="currency" value={currency} />
      <input type="hidden" name="rows" value={String(draft.variants.length)} />
      <TextField id="title" label="Title" value={draft.title} error={errors["title"]} required maxlength={255} />
      <TextArea id="description" label="Description" value={draft.description} error={errors["description"]} />
      <SelectField id="status" label="Status" value={draft.status} error={errors["status"]} options={PRODUCT_STATUSES.map((s) => [s, s === "active" ? "Active (on sale)" : s === "draft" ? "Draft (hidden)" : "Archived"] as const)} />
      <TextField id="vendor" label="Vendor (optional)" value={draft.vendor} error={errors["vendor"]} maxlength={255} />
      <TextField id="handle" label="Handle (optional; made from the title)" value={draft.handle} error={errors["handle"]} maxlength={100} help="The product's address on the storefront: /products/<handle>." />
      <TextField id="hsnCode" label="HSN code (optional)" value={draft.hsnCode} error={errors["hsnCode"]} inputmode="numeric" maxlength={8} />
      <h2>Variants</h2>
      <p class="muted">Prices in rupees, GST included. Leave a new row blank to skip it.</p>
      {draft.variants.map((v, i) => (
        <fieldset data-variant-row={String(i)}>
          <legend>{v.id ? `Variant ${v.title || i + 1}` : `New variant ${i + 1}`}</legend>
          {v.id ? <input type="hidden" name={`v${i}.id`} value={v.id} /> : null}
          <TextField id={`v${i}-title`} name={`v${i}.title`} label="Title (e.g. Size M)" value={v.title} error={errors[`v${i}.title`]} maxlength={255} />
          <TextField id={`v${i}-sku`} name={`v${i}.sku`} label="SKU" value={v.sku} error={errors[`v${i}.sku`]} maxlength={64} />
          <TextField id={`v${i}-price`} name={`v${i}.price`} label="Price (₹)" value={v.price} error={errors[`v${i}.price`]} inputmode="decimal" />
          <TextField id={`v${i}-compareAt`} name={`v${i}.compareAt`} label="Compare-at price (₹, optional)" value={v.compareAt} error={errors[`v${i}.compareAt`]} inputmode="decimal" />
          <SelectField id={`v${i}-taxClass`} name={`v${i}.taxClass`} label="GST class" value={v.taxClass} error={errors[`v${i}.taxClass`]} options={TAX_CLASSES.map((t) => [t, TAX_LABELS[t]] as const)} />
          <CheckField id={`v${i}-preorder`} name={`v${i}.preorder`} label="Sell as a pre-order while out of stock" checked={v.preorder} error={errors[`v${i}.preorder`]} />
          {v.id && removeHref ? (
            <p>
              <a href={removeHref(v.id)} class="danger" aria-label={`Remove this variant: ${v.title || i + 1}…`}>
                Remove this variant…
              </a>
            </p>
          ) : null}
        </fieldset>
      ))}
      {canWrite ? (
        <p>
          <button type="submit" name="action" value="save">
            {submit}
          </button>{" "}
          {draft.variants.length < MAX_ROWS ? (
            <button type="submit" name="action" value="more" class="secondary">
              Add another variant
            </button>
          ) : null}
        </p>
      ) : null}
    </form>
  );
};
