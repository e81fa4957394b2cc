import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AppError } from "#shared/core/errors";
import { listCollections } from "#shared/procedures/collections";
import { listPages } from "#shared/procedures/content";
import { getMenu, replaceMenu, type MenuItemInput } from "#shared/procedures/menu";
import { pageCall, type AdminContext, type AdminEnv, type SignedIn } from "../context";
import { call, storePage } from "./chrome";
import { SelectField, TextField } from "./fields";
import { doneNotice, handleFormPost, Notice, RowAction, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { FieldError, Section, Table } from "./parts";

/**
 * The storefront's navigation menu (issue 23 item 3; docs/collections.md), beside the store's pages: its
 * items in order, each moved up or down or removed with a plain form, and one more added (a collection, a
 * page or a link, with its label). A refused item is shown by its field with what was typed. Owners and
 * admins change it (content.write); staff see it.
 */
export const navigationPage = new Hono<AdminEnv>();

type MenuView = Awaited<ReturnType<typeof getMenu.run>>;
type Item = MenuView["items"][number];

const KINDS = [
  ["collection", "A collection"],
  ["page", "A page"],
  ["link", "A link"],
] as const;

/** An item of the menu as `menu.replace` takes it back. */
const inputOfItem = (i: Item): MenuItemInput =>
  i.kind === "collection"
    ? { kind: "collection", label: i.label, collectionId: i.collectionId }
    : i.kind === "page"
      ? { kind: "page", label: i.label, pageId: i.pageId }
      : { kind: "link", label: i.label, url: i.url };

/** The item the add form describes (only the chosen kind's target is sent; the procedure checks the rest). */
function newItem(field: Field): unknown {
  const kind = field("kind") ?? "";
  const label = field("label") ?? "";
  if (kind === "collection") return { kind, label, collectionId: field("collectionId") ?? "" };
  if (kind === "page") return { kind, label, pageId: field("pageId") ?? "" };
  if (kind === "link") return { kind, label, url: field("url") ?? "" };
  return { kind, label };
}

/** A refused item's messages by the add form's fields: `items.3.url` is the url field's. */
function itemErrors(failed: FailedPost | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of (failed?.error.data?.issues as readonly { path: string; message: string }[] | undefined) ?? []) {
    const last = issue.path.split(".").pop() ?? "";
    const field = ["label", "kind", "url", "collectionId", "pageId"].includes(last) ? last : "form";
    errors[field] ??= issue.message;
  }
  return errors;
}

const Target: FC<{ item: Item }> = ({ item }) => (
  <>
    {item.kind === "link" ? "Link: " : item.kind === "collection" ? "Collection: " : "Page: "}
    {item.target} <span class="muted">{item.href}</span>
    {item.shown ? null : <div class="muted">Not shown: the {item.kind} is not published.</div>}
  </>
);

interface AddForm {
  csrf: string;
  failed: FailedPost | undefined;
  collections: readonly { id: string; title: string }[];
  pages: readonly { id: string; title: string }[];
}

const AddItemForm: FC<AddForm> = ({ csrf, failed, collections, pages }) => {
  const typed = (name: string) => (failed?.action === "add" ? (failed.field(name) ?? "") : "");
  const errors = failed?.action === "add" ? itemErrors(failed) : {};
  const kind = typed("kind") || "collection";
  return (
    <form method="post" action="/navigation" class="card" id="menu-item-form">
      <input type="hidden" name="csrf" value={csrf} />
      <TextField id="label" label="Label" value={typed("label")} error={errors["label"]} maxlength={60} help="What shoppers see in the menu (at most 60 characters)." />
      <fieldset aria-describedby={errors["kind"] ? "kind-error" : undefined}>
        <legend>Points at</legend>
        {KINDS.map(([value, label]) => (
          <label class="check" for={`kind-${value}`}>
            <input type="radio" id={`kind-${value}`} name="kind" value={value} checked={kind === value} /> {label}
          </label>
        ))}
        <FieldError id="kind-error" error={errors["kind"]} />
      </fieldset>
      <SelectField
        id="collectionId"
        label="Collection (for a collection)"
        value={typed("collectionId")}
        error={errors["collectionId"]}
        options={[["", collections.length ? "Choose a collection" : "No collections yet"], ...collections.map((col) => [col.id, col.title] as const)]}
      />
      <SelectField
        id="pageId"
        label="Page (for a page)"
        value={typed("pageId")}
        error={errors["pageId"]}
        options={[["", pages.length ? "Choose a page" : "No pages yet"], ...pages.map((p) => [p.id, p.title] as const)]}
      />
      <TextField id="url" label="Address (for a link)" value={typed("url")} error={errors["url"]} maxlength={2000} placeholder="/products or https://…" help="A path of this store such as /products, or an https:// address." />
      {errors["form"] ? <p class="alert" role="alert">{errors["form"]}</p> : null}
      <button type="submit" name="action" value="add">
        Add to the menu
      </button>
    </form>
  );
};

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const { chrome, me, read } = await storePage(c, {
    menu: call(getMenu, {}),
    collections: call(listCollections, { page: 1, pageSize: 100 }),
    pages: call(listPages, { page: 1, pageSize: 100 }),
  });
  const canWrite = me.permissions.includes("content.write");
  const { items } = read.menu();
  const last = items.length - 1;
  return c.html(
    <AdminPage title="Navigation" chrome={chrome}>
      <p>
        <a href="/pages">← Pages</a>
      </p>
      <h1>Navigation</h1>
      <p class="muted">The menu in the storefront's header, in this order. An item whose collection or page is not published is left out until it is.</p>
      <Notice notice={notice} />
      {items.length === 0 ? (
        <p class="card">The menu is empty.</p>
      ) : (
        <Table columns={[{ label: "Position" }, { label: "Label" }, { label: "Points at" }, ...(canWrite ? [{ label: "Order" }] : [])]}>
          {items.map((item, i) => (
            <tr data-menu-item={item.label}>
              <td>{i + 1}</td>
              <td>{item.label}</td>
              <td>
                <Target item={item} />
              </td>
              {canWrite ? (
                <td>
                  {i > 0 ? <RowAction to="/navigation" csrf={chrome.csrf} fields={{ itemId: item.id }} action="up" label="Move up" ariaLabel={`Move ${item.label} up`} /> : null}
                  {i < last ? <RowAction to="/navigation" csrf={chrome.csrf} fields={{ itemId: item.id }} action="down" label="Move down" ariaLabel={`Move ${item.label} down`} /> : null}
                  <RowAction to="/navigation" csrf={chrome.csrf} fields={{ itemId: item.id }} action="remove" label="Remove" ariaLabel={`Remove ${item.label} from the menu`} />
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
      {canWrite ? (
        <Section id="add-item" title="Add an item">
          <AddItemForm csrf={chrome.csrf} failed={failed} collections={read.collections().items} pages={read.pages().items} />
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

/** The menu as it is now with one change, sent back whole (read fresh, so two people's changes do not undo each other). */
async function change(c: AdminContext, signedIn: Pick<SignedIn, "id">, edit: (items: Item[]) => unknown[]) {
  const { items } = await pageCall(c, signedIn, getMenu, {});
  return pageCall(c, signedIn, replaceMenu, { items: edit(items) }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]);
}

/** Where the item is; a page opened before the menu last changed names items that are gone (each change makes them anew). */
function indexOf(items: Item[], id: string): number {
  const at = items.findIndex((i) => i.id === id);
  if (at < 0) throw new AppError("CONFLICT", "The menu has changed since this page was opened: here it is as it is now. Try again.");
  return at;
}

/** Moves the item one place up or down (nothing at either end). */
function moved(items: Item[], id: string, by: -1 | 1): MenuItemInput[] {
  const out = items.map(inputOfItem);
  const at = indexOf(items, id);
  const to = at + by;
  if (to >= 0 && to < out.length) [out[at], out[to]] = [out[to]!, out[at]!];
  return out;
}

function without(items: Item[], id: string): MenuItemInput[] {
  const at = indexOf(items, id);
  return items.filter((_, i) => i !== at).map(inputOfItem);
}

const DONE: Record<string, string> = { add: "Added to the menu.", up: "Moved up.", down: "Moved down.", remove: "Removed from the menu." };

navigationPage.get("/navigation", (c) => render(c, doneNotice(c, DONE)));
navigationPage.post("/navigation", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/navigation?done=${action}`,
    {
      add: (signedIn, field) => change(c, signedIn, (items) => [...items.map(inputOfItem), newItem(field)]),
      up: (signedIn, field) => change(c, signedIn, (items) => moved(items, field("itemId") ?? "", -1)),
      down: (signedIn, field) => change(c, signedIn, (items) => moved(items, field("itemId") ?? "", 1)),
      remove: (signedIn, field) => change(c, signedIn, (items) => without(items, field("itemId") ?? "")),
    },
    "Choose Add to the menu, Move up, Move down or Remove.",
  ),
);
