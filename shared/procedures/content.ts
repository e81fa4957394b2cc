import { and, desc, eq, ilike, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emit } from "../db/outbox";
import { plan } from "../db/plan";
import { page, PAGE_STATUSES } from "../db/schema";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { storeProcedure } from "./define";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import { firstFreeHandle, handleFrom, handleSchema } from "./slug";

const pageFields = {
  title: z.string().trim().min(1).max(255),
  handle: handleSchema.describe("The page's URL path segment, e.g. shipping-policy"),
  body: z.string().max(100_000).describe("The page text (at most 100000 characters)"),
};

const pageNotFound = () => new AppError("NOT_FOUND", "Page not found in this store.");

const summaryColumns = {
  id: page.id,
  title: page.title,
  handle: page.handle,
  status: page.status,
  publishedAt: page.publishedAt,
  createdAt: page.createdAt,
  updatedAt: page.updatedAt,
};

async function freeHandle(tx: StoreTx, title: string): Promise<string> {
  const base = handleFrom(title);
  const rows = await tx
    .select({ handle: page.handle })
    .from(page)
    .where(and(eq(page.storeId, tx.storeId), or(eq(page.handle, base), ilike(page.handle, `${base}-%`))));
  return firstFreeHandle(base, rows.map((r) => r.handle));
}

/** One store page with its body. */
function storePagePlan(q: Q, store: SQL, id: string) {
  return plan(
    [
      q
        .select({ ...summaryColumns, body: page.body })
        .from(page)
        .where(and(eq(page.storeId, store), eq(page.id, id))),
    ] as const,
    ([[row]]) => {
      if (!row) throw pageNotFound();
      return row;
    },
  );
}

/** The same, inside a transaction that is open already (a change answers the page as it now is). */
export function loadPage(tx: StoreTx, id: string) {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => storePagePlan(q, sql`${tx.storeId}::uuid`, id));
}

export const listPages = storeProcedure({
  router: "content",
  name: "list",
  description:
    "List the store's pages (About, policies...), most recently changed first, with paging and without their bodies. Filter by status (draft/published) or search title and handle.",
  access: "content.read",
  mutates: false,
  input: z.strictObject({
    ...pagingInput,
    status: z.enum(PAGE_STATUSES).optional(),
    query: z.string().trim().max(200).optional(),
  }),
  read(q, { store }, input) {
    const conditions: (SQL | undefined)[] = [eq(page.storeId, store)];
    if (input.status) conditions.push(eq(page.status, input.status));
    if (input.query) {
      const pattern = likePattern(input.query);
      conditions.push(or(ilike(page.title, pattern), ilike(page.handle, pattern)));
    }
    const where = and(...conditions);
    return pagePlan(
      q.select(summaryColumns).from(page).where(where).orderBy(desc(page.updatedAt), desc(page.id)).limit(input.pageSize).offset(offsetOf(input)),
      q.select(countColumn()).from(page).where(where),
      input,
    );
  },
});

export const getPage = storeProcedure({
  router: "content",
  name: "get",
  description: "One store page by id, with its body.",
  access: "content.read",
  mutates: false,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, { store }, input) => storePagePlan(q, store, input.id),
});

export const createPage = storeProcedure({
  router: "content",
  name: "create",
  description:
    "Create a store page as a draft; publish it with content.publish. The handle is derived from the title when not given.",
  access: "content.write",
  mutates: true,
  input: z.strictObject({
    title: pageFields.title,
    handle: pageFields.handle.optional(),
    body: pageFields.body.default(""),
  }),
  async run({ tx }, input) {
    const handle = input.handle ?? (await freeHandle(tx, input.title));
    const [created] = await tx
      .insert(page)
      .values({ ...input, handle, status: "draft", storeId: tx.storeId })
      .returning({ id: page.id });
    const id = created!.id;
    await emit(tx, "page.created", { pageId: id });
    return loadPage(tx, id);
  },
});

export const updatePage = storeProcedure({
  router: "content",
  name: "update",
  description: "Change a page's title, handle or body. Its published state does not change; use content.publish for that.",
  access: "content.write",
  mutates: true,
  input: z.strictObject({
    id: z.uuid(),
    title: pageFields.title.optional(),
    handle: pageFields.handle.optional(),
    body: pageFields.body.optional(),
  }),
  async run({ tx }, input) {
    const { id, ...fields } = input;
    const [updated] = await tx
      .update(page)
      .set({ ...fields, updatedAt: sql`now()` })
      .where(and(eq(page.storeId, tx.storeId), eq(page.id, id)))
      .returning({ id: page.id });
    if (!updated) throw pageNotFound();
    await emit(tx, "page.updated", { pageId: id, fields: Object.keys(fields) });
    return loadPage(tx, id);
  },
});

export const publishPage = storeProcedure({
  router: "content",
  name: "publish",
  description:
    "Publish a page on the storefront, or pass published: false to take it back to draft. publishedAt is when the page was first published. Repeating the current state changes nothing.",
  access: "content.write",
  mutates: true,
  input: z.strictObject({ id: z.uuid(), published: z.boolean().default(true) }),
  async run({ tx }, input) {
    const status = input.published ? "published" : "draft";
    // published_at is the first publication: set once, kept on re-publish and on unpublish.
    const [changed] = await tx
      .update(page)
      .set({ status, ...(input.published ? { publishedAt: sql`coalesce(${page.publishedAt}, now())` } : {}), updatedAt: sql`now()` })
      .where(and(eq(page.storeId, tx.storeId), eq(page.id, input.id), sql`${page.status} <> ${status}`))
      .returning({ id: page.id });
    if (changed) await emit(tx, input.published ? "page.published" : "page.unpublished", { pageId: changed.id });
    return loadPage(tx, input.id);
  },
});

export const contentProcedures = [listPages, getPage, createPage, updatePage, publishPage];
