import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure } from "../db/changes";
import { plan, thenPlan } from "../db/plan";
import { collection, menuItem, page } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { isMenuUrl } from "../storefront/menu";
import { storeProcedure } from "./define";
import * as out from "./outputs";

/**
 * The storefront's navigation menu (issue 23 item 3; docs/collections.md): one per store, shown in the
 * storefront's header, its items in order, each a collection, a content page or a link with a label. It is
 * the store's content, as its pages are: content.read to see it, content.write to change it (owners and
 * admins; staff read it, as they read pages). The storefront shows an item only while its collection or
 * page is published.
 */

export const MENU_ITEMS_MAX = 30;

const label = z.string().trim().min(1).max(60).describe("What the shopper sees in the menu (at most 60 characters)");

const menuItemInput = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("collection"), label, collectionId: z.uuid() }),
  z.strictObject({ kind: z.literal("page"), label, pageId: z.uuid() }),
  z.strictObject({
    kind: z.literal("link"),
    label,
    url: z
      .string()
      .trim()
      .max(2000)
      .refine(isMenuUrl, "Use an https:// address or a path of this store that starts with / (other schemes such as javascript: are refused)")
      .describe("An https:// address or a path of this store, e.g. /products"),
  }),
]);
export type MenuItemInput = z.infer<typeof menuItemInput>;

/** The menu as the admin sees it: each item with what it points at and whether shoppers see it now. */
export function menuPlan(q: Q, store: SQL) {
  return plan(
    [
      q
        .select({
          id: menuItem.id,
          label: menuItem.label,
          kind: menuItem.kind,
          collectionId: menuItem.collectionId,
          pageId: menuItem.pageId,
          url: menuItem.url,
          collectionTitle: collection.title,
          collectionHandle: collection.handle,
          collectionPublished: collection.published,
          pageTitle: page.title,
          pageHandle: page.handle,
          pageStatus: page.status,
        })
        .from(menuItem)
        .leftJoin(collection, and(eq(collection.storeId, menuItem.storeId), eq(collection.id, menuItem.collectionId)))
        .leftJoin(page, and(eq(page.storeId, menuItem.storeId), eq(page.id, menuItem.pageId)))
        .where(eq(menuItem.storeId, store))
        .orderBy(asc(menuItem.position)),
    ] as const,
    ([rows]) => ({
      items: rows.map((r) => {
        const base = { id: r.id, label: r.label };
        if (r.kind === "collection") {
          return { ...base, kind: "collection" as const, collectionId: r.collectionId!, target: r.collectionTitle ?? "", href: `/collections/${r.collectionHandle}`, shown: r.collectionPublished === true };
        }
        if (r.kind === "page") return { ...base, kind: "page" as const, pageId: r.pageId!, target: r.pageTitle ?? "", href: `/pages/${r.pageHandle}`, shown: r.pageStatus === "published" };
        return { ...base, kind: "link" as const, url: r.url!, target: r.url!, href: r.url!, shown: true };
      }),
    }),
  );
}

/** Every id of `ids` names a row of `table` in the store, or the change stops, naming the field. */
function allFound(q: Q, store: SQL, table: typeof collection | typeof page, ids: string[], what: string, field: string) {
  const distinct = [...new Set(ids)];
  return ensure(
    q,
    sql`(select count(*) from ${table} where ${and(eq(table.storeId, store), inArray(table.id, distinct))}) = ${distinct.length}`,
    new AppError("NOT_FOUND", `A menu item names a ${what} that is not in this store.`, { issues: [{ path: `items.${field}`, message: `not a ${what} of this store` }] }),
  );
}

/** The menu as its procedures answer it: each item with what it points at (`target`), its `href` and whether shoppers see it. */
const menuItemShown = { id: out.id, label: z.string(), target: z.string(), href: z.string(), shown: z.boolean() };
const menuOutput = z.object({
  items: z.array(
    z.discriminatedUnion("kind", [
      z.object({ ...menuItemShown, kind: z.literal("collection"), collectionId: out.id }),
      z.object({ ...menuItemShown, kind: z.literal("page"), pageId: out.id }),
      z.object({ ...menuItemShown, kind: z.literal("link"), url: z.string() }),
    ]),
  ),
});

export const getMenu = storeProcedure({
  router: "menu",
  name: "get",
  description:
    "The storefront's navigation menu in order: each item's label and what it points at (a collection, a page or a link), and whether shoppers see it now (an unpublished collection or page is left out).",
  access: "content.read",
  mutates: false,
  output: menuOutput,
  input: z.strictObject({}),
  read: (q, { store }) => menuPlan(q, store),
});

export const replaceMenu = storeProcedure({
  router: "menu",
  name: "replace",
  description: `Replace the storefront's navigation menu with these items, in this order (at most ${MENU_ITEMS_MAX}). Each is {kind: "collection", label, collectionId}, {kind: "page", label, pageId} or {kind: "link", label, url} with an https:// url or a path such as /products. An empty list clears the menu.`,
  access: "content.write",
  mutates: true,
  output: menuOutput,
  input: z.strictObject({ items: z.array(menuItemInput).max(MENU_ITEMS_MAX) }),
  write: {
    apply(q, { store }, input) {
      const collectionIds = input.items.flatMap((i) => (i.kind === "collection" ? [i.collectionId.toLowerCase()] : []));
      const pageIds = input.items.flatMap((i) => (i.kind === "page" ? [i.pageId.toLowerCase()] : []));
      const rows = input.items.map((item, position) => ({
        storeId: store,
        position,
        label: item.label,
        kind: item.kind,
        collectionId: item.kind === "collection" ? item.collectionId : null,
        pageId: item.kind === "page" ? item.pageId : null,
        url: item.kind === "link" ? item.url : null,
      }));
      return thenPlan(
        [
          ...(collectionIds.length ? [allFound(q, store, collection, collectionIds, "collection", "collectionId")] : []),
          ...(pageIds.length ? [allFound(q, store, page, pageIds, "page", "pageId")] : []),
          q.delete(menuItem).where(eq(menuItem.storeId, store)),
          ...(rows.length ? [q.insert(menuItem).values(rows)] : []),
          emitStep(q, "menu.updated", { items: rows.length }),
        ],
        menuPlan(q, store),
      );
    },
  },
});

export const menuProcedures = [getMenu, replaceMenu];
