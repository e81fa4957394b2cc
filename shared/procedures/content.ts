import { and, desc, eq, ilike, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { constant, plan, thenPlan } from "../db/plan";
import { page, PAGE_STATUSES } from "../db/schema";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import { freeHandlePlan, handleSchema } from "./slug";
import * as out from "./outputs";

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


const ofPage = (store: SQL, id: string) => and(eq(page.storeId, store), eq(page.id, id));

/** The page exists in the store; it is locked for the rest of the change. */
const pageFound = (q: Q, store: SQL, id: string) => ensure(q, sql`exists (select 1 from ${page} where ${ofPage(store, id)} for update)`, pageNotFound());

/** One store page with its body. */
function storePagePlan(q: Q, store: SQL, id: string) {
  return plan(
    [
      q
        .select({ ...summaryColumns, body: page.body })
        .from(page)
        .where(ofPage(store, id)),
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

const pageRow = z.object({ id: out.id, title: z.string(), handle: z.string(), status: z.enum(PAGE_STATUSES), publishedAt: out.instant.nullable(), createdAt: out.instant, updatedAt: out.instant });
/** A page as its procedures answer it, with its body. */
const pageOutput = pageRow.extend({ body: z.string() });

export const listPages = storeProcedure({
  router: "content",
  name: "list",
  description:
    "List the store's pages (About, policies...), most recently changed first, with paging and without their bodies. Filter by status (draft/published) or search title and handle.",
  access: "content.read",
  mutates: false,
  output: out.paged(pageRow),
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
  output: pageOutput,
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
  output: pageOutput,
  input: z.strictObject({
    title: pageFields.title,
    handle: pageFields.handle.optional(),
    body: pageFields.body.default(""),
  }),
  write: {
    // A handle derived from the title must be free: the handles in use are read first, and the change checks
    // that the one chosen is still free (else it runs again). A handle given is left to the unique key (409).
    prepare: (q, { store }, input) => (input.handle ? constant(input.handle) : freeHandlePlan(q, page, store, input.title)),
    apply(q, { store }, input, handle: string) {
      const id = crypto.randomUUID();
      return thenPlan(
        [
          ...(input.handle ? [] : [unchanged(q, sql`not exists (select 1 from ${page} where ${page.storeId} = ${store} and ${page.handle} = ${handle})`)]),
          q.insert(page).values({ ...input, id, handle, status: "draft", storeId: store }),
          emitStep(q, "page.created", { pageId: id }),
        ],
        storePagePlan(q, store, id),
      );
    },
  },
});

export const updatePage = storeProcedure({
  router: "content",
  name: "update",
  description: "Change a page's title, handle or body. Its published state does not change; use content.publish for that.",
  access: "content.write",
  mutates: true,
  output: pageOutput,
  input: z.strictObject({
    id: z.uuid(),
    title: pageFields.title.optional(),
    handle: pageFields.handle.optional(),
    body: pageFields.body.optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, ...fields } = input;
      return thenPlan(
        [
          pageFound(q, store, id),
          q.update(page).set({ ...fields, updatedAt: sql`now()` }).where(ofPage(store, id)),
          emitStep(q, "page.updated", { pageId: id, fields: Object.keys(fields) }),
        ],
        storePagePlan(q, store, id),
      );
    },
  },
});

export const publishPage = storeProcedure({
  router: "content",
  name: "publish",
  description:
    "Publish a page on the storefront, or pass published: false to take it back to draft. publishedAt is when the page was first published. Repeating the current state changes nothing.",
  access: "content.write",
  mutates: true,
  output: pageOutput,
  input: z.strictObject({ id: z.uuid(), published: z.boolean().default(true) }),
  write: {
    // One trip: the page locked, the event written only when the state changes (before the update, which
    // would hide it), then the change.
    apply(q, { store }, input) {
      const status = input.published ? "published" : "draft";
      return thenPlan(
        [
          ensure(q, sql`exists (select 1 from ${page} where ${ofPage(store, input.id)} for update)`, pageNotFound()),
          emitStep(q, input.published ? "page.published" : "page.unpublished", { pageId: input.id.toLowerCase() }, {
            when: sql`exists (select 1 from ${page} where ${ofPage(store, input.id)} and ${page.status} <> ${status})`,
          }),
          // published_at is the first publication: set once, kept on re-publish and on unpublish.
          q
            .update(page)
            .set({ status, ...(input.published ? { publishedAt: sql`coalesce(${page.publishedAt}, now())` } : {}), updatedAt: sql`now()` })
            .where(and(ofPage(store, input.id), sql`${page.status} <> ${status}`)),
        ],
        storePagePlan(q, store, input.id),
      );
    },
  },
});

export const contentProcedures = [listPages, getPage, createPage, updatePage, publishPage];
