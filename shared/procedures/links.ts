import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure } from "../db/changes";
import { mapPlan, plan, thenPlan, together } from "../db/plan";
import { shortLink, storeDomain } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { LINK_SLUG, linkTargetSchema } from "../storefront/short-links";
import { storeProcedure } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

/**
 * Short links (issue 10 part 5): `/l/<slug>` on the storefront counts a click and redirects to the
 * target with the link's UTM tags. Views are page views the storefront's beacon credited to the link.
 */

const tag = z.string().trim().min(1).max(200);
const utmSchema = z.strictObject({
  source: tag,
  medium: tag,
  campaign: tag,
  term: tag.nullish(),
  content: tag.nullish(),
});
const slugSchema = z.string().trim().regex(LINK_SLUG, "Use 1 to 64 lower-case letters, digits and hyphens (for example summer-sale)");

const linkFields = {
  slug: slugSchema.describe("The path segment after /l/, e.g. summer-sale"),
  target: linkTargetSchema.describe("An absolute http(s) URL, or a path on the store such as /collections/sale"),
  utm: utmSchema.describe("UTM tags added to the target's query; they replace the target's own utm_* keys of the same name"),
};

const columns = {
  id: shortLink.id,
  slug: shortLink.slug,
  target: shortLink.target,
  utmSource: shortLink.utmSource,
  utmMedium: shortLink.utmMedium,
  utmCampaign: shortLink.utmCampaign,
  utmTerm: shortLink.utmTerm,
  utmContent: shortLink.utmContent,
  clicks: shortLink.clicks,
  // Spelled out: drizzle leaves the table off columns in a one-table select, which a subquery would misread.
  views: sql<number>`(select count(*)::int from page_view v where v.store_id = short_link.store_id and v.link_id = short_link.id)`,
  createdAt: shortLink.createdAt,
  updatedAt: shortLink.updatedAt,
};


interface UtmColumns {
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
  utmTerm: string | null;
  utmContent: string | null;
}

function present<R extends UtmColumns>(row: R) {
  const { utmSource, utmMedium, utmCampaign, utmTerm, utmContent, ...rest } = row;
  return { ...rest, utm: { source: utmSource, medium: utmMedium, campaign: utmCampaign, term: utmTerm, content: utmContent } };
}

const linkNotFound = () => new AppError("NOT_FOUND", "Short link not found in this store.");

const ofLink = (store: SQL, id: string) => and(eq(shortLink.storeId, store), eq(shortLink.id, id));

/** One short link as the procedures answer it. */
function linkPlan(q: Q, store: SQL, id: string) {
  return plan([q.select(columns).from(shortLink).where(ofLink(store, id))] as const, ([[row]]) => {
    if (!row) throw linkNotFound();
    return present(row);
  });
}

/** The link exists in the store; it is locked for the rest of the change. */
const linkFound = (q: Q, store: SQL, id: string) => ensure(q, sql`exists (select 1 from ${shortLink} where ${ofLink(store, id)} for update)`, linkNotFound());

function utmValues(utm: z.infer<typeof utmSchema>) {
  return { utmSource: utm.source, utmMedium: utm.medium, utmCampaign: utm.campaign, utmTerm: utm.term ?? null, utmContent: utm.content ?? null };
}

/** A short link as its procedures answer it: the UTM tags as one object, with its counts. */
const linkOutput = z.object({
  id: out.id,
  slug: z.string(),
  target: z.string(),
  utm: z.object({ source: z.string(), medium: z.string(), campaign: z.string(), term: z.string().nullable(), content: z.string().nullable() }),
  clicks: z.number().int(),
  views: z.number().int(),
  createdAt: out.instant,
  updatedAt: out.instant,
});

export const listLinks = storeProcedure({
  router: "links",
  name: "list",
  description:
    "The store's short links (/l/<slug> on the storefront) by slug, with paging, their target, UTM tags, clicks, the page views credited to them, and the full short URL on the store's primary domain (null without one).",
  access: "content.read",
  mutates: false,
  output: out.paged(linkOutput.extend({ shortUrl: z.string().nullable() })),
  input: z.strictObject({ ...pagingInput }),
  read(q, { store }, input) {
    const where = eq(shortLink.storeId, store);
    const primaryDomain = q
      .select({ hostname: storeDomain.hostname })
      .from(storeDomain)
      .where(and(eq(storeDomain.storeId, store), eq(storeDomain.isPrimary, true), eq(storeDomain.status, "verified")));
    return mapPlan(
      together({
        links: pagePlan(
          q.select(columns).from(shortLink).where(where).orderBy(asc(shortLink.slug)).limit(input.pageSize).offset(offsetOf(input)),
          q.select(countColumn()).from(shortLink).where(where),
          input,
        ),
        primary: plan([primaryDomain] as const, ([[domain]]) => domain),
      }),
      ({ links, primary }) => ({
        ...links,
        items: links.items.map((row) => ({ ...present(row), shortUrl: primary ? `https://${primary.hostname}/l/${row.slug}` : null })),
      }),
    );
  },
});

export const createLink = storeProcedure({
  router: "links",
  name: "create",
  description: "Create a short link: /l/<slug> on the storefront counts a click and redirects to the target with the UTM tags added. A slug is unique within the store.",
  access: "content.write",
  mutates: true,
  output: linkOutput,
  input: z.strictObject(linkFields),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      return thenPlan(
        [
          q.insert(shortLink).values({ id, storeId: store, slug: input.slug, target: input.target, ...utmValues(input.utm) }),
          emitStep(q, "link.created", { linkId: id, slug: input.slug }),
        ],
        linkPlan(q, store, id),
      );
    },
  },
});

export const updateLink = storeProcedure({
  router: "links",
  name: "update",
  description: "Change a short link's slug, target or UTM tags (the UTM tags are replaced as a whole). Clicks and credited views are kept.",
  access: "content.write",
  mutates: true,
  output: linkOutput,
  input: z.strictObject({ id: z.uuid(), slug: linkFields.slug.optional(), target: linkFields.target.optional(), utm: linkFields.utm.optional() }),
  write: {
    apply(q, { store }, input) {
      const { id, utm, ...fields } = input;
      return thenPlan(
        [
          linkFound(q, store, id),
          q
            .update(shortLink)
            .set({ ...fields, ...(utm ? utmValues(utm) : {}), updatedAt: sql`now()` })
            .where(ofLink(store, id)),
          emitStep(q, "link.updated", { linkId: id, fields: [...Object.keys(fields), ...(utm ? ["utm"] : [])] }),
        ],
        linkPlan(q, store, id),
      );
    },
  },
});

export const deleteLink = storeProcedure({
  router: "links",
  name: "delete",
  description: "Delete a short link: /l/<slug> stops redirecting. Page views it was credited with are kept, uncredited.",
  access: "records.delete",
  mutates: true,
  output: out.deleted,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const where = ofLink(store, input.id);
      return plan(
        [
          linkFound(q, store, input.id),
          // The event names the link as it was: written before the row goes.
          emitStep(q, "link.deleted", sql`(select jsonb_build_object('linkId', ${shortLink.id}, 'slug', ${shortLink.slug}) from ${shortLink} where ${where})`),
          q.delete(shortLink).where(where).returning({ id: shortLink.id }),
        ] as const,
        ([, , [deleted]]) => ({ id: deleted!.id, deleted: true }),
      );
    },
  },
});

export const linkProcedures = [listLinks, createLink, updateLink, deleteLink];
