import { and, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { plan, thenPlan } from "../db/plan";
import { storeTheme } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError, badRequest, issuesOf } from "../core/errors";
import { storeIcon } from "../media/store";
import { readTheme, THEME_DEFAULTS, THEME_IMAGE_SLOTS, themeFields, themeSchema, type Theme, type ThemeImage } from "../storefront/theme";
import { storeProcedure } from "./define";
import { imageSource, upload } from "./media";
import * as out from "./outputs";

/**
 * Settings → Storefront (issue 23 item 2; docs/storefront-theme.md): the store's look as a draft and a
 * published copy. Saving changes only the draft (the storefront never sees it); publishing copies the draft
 * to the published copy, which bumps the catalogue version (migration 0041's trigger) so the edge cache and
 * the held store facts carry the new look at once. Owners and Admins (settings.read / settings.write).
 */

export interface ThemeState {
  /** What the merchant edits and previews: the saved draft, else the published copy, else the defaults. */
  draft: Theme;
  /** What shoppers see; null while nothing has been published. */
  published: Theme | null;
  publishedAt: Date | null;
  /** True while the draft differs from what shoppers see. */
  unpublishedChanges: boolean;
}

/** The fields theme.updateDraft takes (the images have procedures of their own: each is an upload). */
const FIELDS = Object.keys(themeFields) as (keyof typeof themeFields)[];
const sameTheme = (a: Theme, b: Theme | null) => b !== null && (Object.keys(THEME_DEFAULTS) as (keyof Theme)[]).every((f) => JSON.stringify(a[f]) === JSON.stringify(b[f]));

const ofStore = (store: SQL) => eq(storeTheme.storeId, store);

/** The store's theme and its row's stored draft as read (null: no row yet), to check a change against. */
function themeRowPlan(q: Q, store: SQL) {
  return plan(
    [q.select({ draft: storeTheme.draft, published: storeTheme.published, publishedAt: storeTheme.publishedAt }).from(storeTheme).where(ofStore(store))] as const,
    ([[row]]) => {
      const published = readTheme(row?.published);
      const draft = readTheme(row?.draft) ?? published ?? THEME_DEFAULTS;
      const state: ThemeState = { draft, published, publishedAt: row?.publishedAt ?? null, unpublishedChanges: !sameTheme(draft, published) };
      return { state, storedDraft: row ? (row.draft as unknown) : null };
    },
  );
}

const themeStatePlan = (q: Q, store: SQL) => {
  const read = themeRowPlan(q, store);
  return { steps: read.steps, finish: (results: unknown[]) => read.finish(results).state };
};

/** The theme as its procedures answer it (ThemeState): each copy read through the theme's own schema. */
const themeOutput = z.object({ draft: themeSchema, published: themeSchema.nullable(), publishedAt: out.instant.nullable(), unpublishedChanges: z.boolean() });

export const getTheme = storeProcedure({
  router: "theme",
  name: "get",
  description:
    "The storefront's look: the draft (brand and accent colours, announcement bar, home page banner) and the published copy shoppers see (null until first published), and whether the draft has unpublished changes.",
  access: "settings.read",
  mutates: false,
  output: themeOutput,
  input: z.strictObject({}),
  read: (q, { store }) => themeStatePlan(q, store),
});

const draftInput = z
  .strictObject(Object.fromEntries(FIELDS.map((f) => [f, themeFields[f].optional()])) as { [K in keyof typeof themeFields]: z.ZodOptional<(typeof themeFields)[K]> })
  .refine((v) => FIELDS.some((f) => v[f] !== undefined), { message: `Give at least one of ${FIELDS.join(", ")}.` });

export const updateThemeDraft = storeProcedure({
  router: "theme",
  name: "updateDraft",
  description:
    "Change the storefront look's draft: give any of brandColour and accentColour (#rrggbb, refused under WCAG 2.1 AA contrast: white text on it and it as text on the page must reach 4.5:1), announcementEnabled, announcementText, announcementLink, bannerHeading, bannerText, bannerLinkLabel, bannerLink; the others stay. Shoppers see nothing until theme.publish.",
  access: "settings.write",
  mutates: true,
  output: themeOutput,
  input: draftInput,
  write: {
    // The draft is read first (the fields not given stay as they are), the whole result checked, and the change
    // checks the stored draft is still the one read (else it runs again).
    prepare: (q, { store }) => themeRowPlan(q, store),
    apply(q, { store }, input, before: { state: ThemeState; storedDraft: unknown }) {
      const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
      const parsed = themeSchema.safeParse({ ...before.state.draft, ...given });
      if (!parsed.success) throw badRequest(issuesOf(parsed.error));
      return saveDraftPlan(q, store, before.storedDraft, parsed.data);
    },
  },
});

/** The draft saved, if the stored draft is still the one read (else the change runs again); answers the state. */
function saveDraftPlan(q: Q, store: SQL, storedDraft: unknown, draft: Theme) {
  const asRead =
    storedDraft === null
      ? sql`not exists (select 1 from ${storeTheme} where ${ofStore(store)})`
      : sql`exists (select 1 from ${storeTheme} where ${ofStore(store)} and ${storeTheme.draft} = ${JSON.stringify(storedDraft)}::jsonb for update)`;
  return thenPlan(
    [
      unchanged(q, asRead),
      q
        .insert(storeTheme)
        .values({ storeId: store, draft })
        .onConflictDoUpdate({ target: storeTheme.storeId, set: { draft, updatedAt: sql`now()` } }),
    ],
    themeStatePlan(q, store),
  );
}

const slot = z.enum(THEME_IMAGE_SLOTS).describe("logo (the header, beside or instead of the name), favicon (the browser tab and home screen) or bannerImage (the home page banner)");

export const setThemeImage = storeProcedure({
  router: "theme",
  name: "setImage",
  description:
    "Upload the draft's logo, favicon or home page banner image (JPEG, PNG, WebP or AVIF, checked by content, at most 10 MB and 12 MP): the logo and banner are resized to widths up to 1920 px in WebP and JPEG, the favicon cropped to its middle square as 32 and 180 px PNGs. Shoppers see it after theme.publish.",
  access: "settings.write",
  mutates: true,
  output: themeOutput,
  input: z.strictObject({
    slot,
    image: imageSource,
    alt: z.string().trim().max(200).optional().describe("The banner image's alt text (empty: decoration, the banner's heading says what matters); the logo's alt is the store's name"),
  }),
  write: {
    prepare: (q, { store }) => themeRowPlan(q, store),
    async decide(before: { state: ThemeState; storedDraft: unknown }, services, input, storeId) {
      if (input.slot === "favicon") return { before, image: await upload(services, storeId, input.image, storeIcon) };
      const { hash, width, height, widths } = await upload(services, storeId, input.image);
      const image: ThemeImage = { hash, width, height, widths, alt: input.slot === "bannerImage" ? (input.alt ?? "") : "" };
      return { before, image };
    },
    apply: (q, { store }, input, decided: { before: { state: ThemeState; storedDraft: unknown }; image: unknown }) =>
      saveDraftPlan(q, store, decided.before.storedDraft, themeSchema.parse({ ...decided.before.state.draft, [input.slot]: decided.image })),
  },
});

export const removeThemeImage = storeProcedure({
  router: "theme",
  name: "removeImage",
  description: "Take the logo, favicon or banner image out of the draft (shoppers keep seeing the published one until theme.publish).",
  access: "settings.write",
  mutates: true,
  output: themeOutput,
  input: z.strictObject({ slot }),
  write: {
    prepare: (q, { store }) => themeRowPlan(q, store),
    apply: (q, { store }, input, before: { state: ThemeState; storedDraft: unknown }) =>
      saveDraftPlan(q, store, before.storedDraft, { ...before.state.draft, [input.slot]: null }),
  },
});

const nothingToPublish = () => new AppError("CONFLICT", "There is no draft to publish yet: save the storefront's look first.");

export const publishTheme = storeProcedure({
  router: "theme",
  name: "publish",
  description:
    "Publish the storefront look's draft: shoppers see it on their next page (the storefront's cached pages are renewed). Publishing a draft that is already published changes nothing.",
  access: "settings.write",
  mutates: true,
  output: themeOutput,
  input: z.strictObject({}),
  write: {
    apply(q, { store }) {
      const differs = sql`${storeTheme.published} is distinct from ${storeTheme.draft}`;
      return thenPlan(
        [
          ensure(q, sql`exists (select 1 from ${storeTheme} where ${ofStore(store)} for update)`, nothingToPublish()),
          emitStep(q, "theme.published", {}, { when: sql`exists (select 1 from ${storeTheme} where ${ofStore(store)} and ${differs})` }),
          q
            .update(storeTheme)
            .set({ published: sql`${storeTheme.draft}`, publishedAt: sql`now()`, updatedAt: sql`now()` })
            .where(and(ofStore(store), differs)),
        ],
        themeStatePlan(q, store),
      );
    },
  },
});

const nothingPublished = () => new AppError("CONFLICT", "Nothing is published yet: there is no published look to go back to.");

export const discardThemeDraft = storeProcedure({
  router: "theme",
  name: "discardDraft",
  description: "Throw away the draft's unpublished changes: the draft becomes the published look again. Shoppers see no change.",
  access: "settings.write",
  mutates: true,
  output: themeOutput,
  input: z.strictObject({}),
  write: {
    apply(q, { store }) {
      return thenPlan(
        [
          ensure(q, sql`exists (select 1 from ${storeTheme} where ${ofStore(store)} and ${storeTheme.published} is not null for update)`, nothingPublished()),
          q
            .update(storeTheme)
            .set({ draft: sql`${storeTheme.published}`, updatedAt: sql`now()` })
            .where(and(ofStore(store), sql`${storeTheme.draft} is distinct from ${storeTheme.published}`)),
        ],
        themeStatePlan(q, store),
      );
    },
  },
});

export const themeProcedures = [getTheme, updateThemeDraft, setThemeImage, removeThemeImage, publishTheme, discardThemeDraft];
