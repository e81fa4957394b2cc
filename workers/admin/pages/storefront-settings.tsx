import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AppError, badRequest, issuesOf } from "#shared/core/errors";
import { iconKey, mediaKey } from "#shared/media/limits";
import { inlineStyle } from "#shared/http/security-headers";
import { permissionDenied } from "#shared/pipeline/principal";
import { discardThemeDraft, getTheme, publishTheme, removeThemeImage, setThemeImage, updateThemeDraft } from "#shared/procedures/theme";
import { parseHex } from "#shared/storefront/contrast";
import { THEME_DEFAULTS, THEME_IMAGE_SLOTS, THEME_RULES, themeCss, themeFields, themeSchema, type Theme } from "#shared/storefront/theme";
import { pageCall, postSession, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { CheckField, issueErrors, TextArea, TextField } from "./fields";
import { doneNotice, handleFormPost, Notice, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime } from "./order-words";
import { Section } from "./parts";
import { adminStoreFile, IMAGE_REFUSALS, imageFormPost } from "./image-upload";
import { adminThemeFileSrc, IMAGES_PATH, ThemeImagesForm } from "./storefront-images";

/**
 * Settings → Storefront (`/settings/storefront`; issue 23 item 2, docs/storefront-theme.md): the store's look
 * as a draft (theme.updateDraft), previewed here, then published (theme.publish). The preview is rendered in
 * this page rather than behind a link on the storefront: the storefront runs on the store's own domains,
 * where the admin's session never goes, so a members-only link there would need a bearer secret in its
 * address (shared, kept in history); here the draft stays behind the session and settings.read, and can
 * never reach the storefront's edge cache. The preview uses the storefront's own theme rules (THEME_RULES)
 * with the draft's properties from `/settings/storefront/preview.css`. Staff (no settings.read) get the 403 page.
 */
export const storefrontSettingsPage = new Hono<AdminEnv>();

const PATH = "/settings/storefront";
/** The form's fields (the images have forms of their own: storefront-images.tsx). */
const FIELDS = Object.keys(themeFields) as (keyof typeof themeFields)[];
type Values = Record<keyof typeof themeFields, string | boolean>;
/** The preview's box shows the storefront's theme rules (registered for the CSP when this module loads). */
const PREVIEW_STYLE = inlineStyle(`${THEME_RULES}.theme-preview{border:1px solid var(--line);border-radius:12px;padding:0 0 1rem;overflow:hidden;background:var(--bg)}.theme-preview .inner{padding:0 1rem}.theme-preview a{color:var(--brand-ink)}`);

/** The form's fields as theme.updateDraft takes them (the checkbox is on when sent). */
function themeOf(field: Field): Values {
  const values = Object.fromEntries(FIELDS.map((f) => [f, field(f) ?? ""])) as Values;
  values.announcementEnabled = field("announcementEnabled") !== undefined;
  return values;
}

/** The preview's stylesheet address: the two colours, checked again by the route. */
const previewHref = (theme: Pick<Theme, "brandColour" | "accentColour">) =>
  `${PATH}/preview.css?brand=${encodeURIComponent(theme.brandColour.replace("#", ""))}&accent=${encodeURIComponent(theme.accentColour.replace("#", ""))}`;

const Preview: FC<{ theme: Theme; storeName: string; typed: boolean }> = ({ theme, storeName, typed }) => (
  <Section id="preview" title={typed ? "Preview (not saved)" : "Preview of the draft"}>
    <link rel="stylesheet" href={previewHref(theme)} />
    <div class="theme-preview" data-preview="">
      {theme.announcementEnabled && theme.announcementText ? (
        <p class="announcement" data-preview-bar="">
          {theme.announcementLink ? <a href={theme.announcementLink}>{theme.announcementText}</a> : theme.announcementText}
        </p>
      ) : null}
      <div class="inner">
        <header class="shop">
          <a href="#preview" class="brand">
            {theme.logo ? (
              <img src={adminThemeFileSrc(theme.logo.hash, `${theme.logo.widths[Math.min(1, theme.logo.widths.length - 1)]}.webp`)} width={Math.max(1, Math.round((40 * theme.logo.width) / theme.logo.height))} height={40} alt={storeName} />
            ) : (
              storeName
            )}
          </a>
        </header>
        {theme.bannerHeading ? (
          <div class="banner" data-preview-banner="">
            {theme.bannerImage ? (
              <img src={adminThemeFileSrc(theme.bannerImage.hash, `${theme.bannerImage.widths[Math.min(2, theme.bannerImage.widths.length - 1)]}.webp`)} width={theme.bannerImage.width} height={theme.bannerImage.height} alt={theme.bannerImage.alt} />
            ) : null}
            <h3>{theme.bannerHeading}</h3>
            {theme.bannerText ? <p>{theme.bannerText}</p> : null}
            {theme.bannerLink && theme.bannerLinkLabel ? (
              <a class="cta" href={theme.bannerLink}>
                {theme.bannerLinkLabel}
              </a>
            ) : null}
          </div>
        ) : null}
        <p>
          A product link: <a href="#preview">Silk saree</a>
        </p>
        <button type="button">Add to cart</button>
      </div>
    </div>
  </Section>
);

const ThemeForm: FC<{ csrf: string; values: Values; errors: Record<string, string> }> = ({ csrf, values, errors }) => {
  const text = (f: keyof Values) => String(values[f]);
  return (
    <form method="post" action={PATH} class="card" id="theme-form">
      <input type="hidden" name="csrf" value={csrf} />
      <h2>Colours</h2>
      <p class="muted">
        As # and six hex digits. Each colour is used behind white text (the announcement bar, the banner, buttons) and as text on the page (links,
        the store's name), so both must reach WCAG 2.1 AA contrast (4.5:1): a colour too light for that is refused.
      </p>
      <TextField id="brandColour" label="Brand colour" value={text("brandColour")} maxlength={7} placeholder="#1a4d8f" autocomplete="off" error={errors["brandColour"]} />
      <TextField id="accentColour" label="Accent colour (buttons)" value={text("accentColour")} maxlength={7} placeholder="#2f5bea" autocomplete="off" error={errors["accentColour"]} />
      <h2>Announcement bar</h2>
      <CheckField id="announcementEnabled" label="Show the announcement bar on every page" checked={values.announcementEnabled === true} error={errors["announcementEnabled"]} />
      <TextField id="announcementText" label="Announcement" value={text("announcementText")} maxlength={200} error={errors["announcementText"]} />
      <TextField id="announcementLink" label="Announcement link (optional)" value={text("announcementLink")} maxlength={500} help="A path of the store (/collections/sale) or an https:// address." error={errors["announcementLink"]} />
      <h2>Home page banner</h2>
      <p class="muted">Shown on the home page while it has a heading, with the banner image (under Images) above it.</p>
      <TextField id="bannerHeading" label="Heading" value={text("bannerHeading")} maxlength={100} error={errors["bannerHeading"]} />
      <TextArea id="bannerText" label="Text" value={text("bannerText")} rows={3} error={errors["bannerText"]} />
      <TextField id="bannerLinkLabel" label="Link words (e.g. Shop the sale)" value={text("bannerLinkLabel")} maxlength={60} error={errors["bannerLinkLabel"]} />
      <TextField id="bannerLink" label="Link (optional)" value={text("bannerLink")} maxlength={500} help="A path of the store or an https:// address." error={errors["bannerLink"]} />
      <button type="submit" name="action" value="save">
        Save draft
      </button>{" "}
      <button type="submit" name="action" value="preview" class="secondary">
        Preview without saving
      </button>
    </form>
  );
};

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost, typed?: Theme) {
  const { chrome, me, read } = await storePage(c, { theme: call(getTheme, {}) });
  const state = read.theme();
  const canWrite = me.permissions.includes("settings.write");
  // What was typed stays in the form after a refusal or a preview; otherwise the saved draft.
  const values: Values = failed ? themeOf(failed.field) : { ...(typed ?? state.draft) };
  // A preview of what was typed keeps the draft's images (they are uploaded, not typed).
  const shown: Theme = typed ? { ...typed, ...Object.fromEntries(THEME_IMAGE_SLOTS.map((s) => [s, state.draft[s]])) } : state.draft;
  if (failed) notice = { ok: false, text: `Not saved: ${failed.error.message}` };
  return c.html(
    <AdminPage title="Storefront" chrome={chrome}>
      <p>
        <a href="/settings">← Settings</a>
      </p>
      <h1>Storefront</h1>
      <p class="muted">
        {state.published ? (
          <>
            Published <IstTime at={state.publishedAt} />.{" "}
            {state.unpublishedChanges ? "The draft has changes shoppers do not see yet." : "Shoppers see the draft as it is."}
          </>
        ) : (
          "Not published yet: shoppers see the platform's look."
        )}
      </p>
      <Notice notice={notice ?? (typed ? { ok: true, text: "Preview only: nothing is saved until you save the draft." } : undefined)} />
      {canWrite ? <ThemeForm csrf={chrome.csrf} values={values} errors={issueErrors(failed?.error)} /> : null}
      {canWrite ? <ThemeImagesForm csrf={chrome.csrf} theme={state.draft} /> : null}
      {canWrite ? (
        <form method="post" action={PATH} class="card">
          <input type="hidden" name="csrf" value={chrome.csrf} />
          <h2>Publish</h2>
          <p class="muted">Publishing puts the saved draft on the storefront; shoppers see it on their next page.</p>
          <button type="submit" name="action" value="publish" disabled={!state.unpublishedChanges}>
            Publish the draft
          </button>{" "}
          {state.published && state.unpublishedChanges ? (
            <button type="submit" name="action" value="discard" class="secondary">
              Discard the draft's changes
            </button>
          ) : null}
        </form>
      ) : null}
      <Preview theme={shown} storeName={chrome.storeName} typed={typed !== undefined} />
      <style dangerouslySetInnerHTML={{ __html: PREVIEW_STYLE }} />
    </AdminPage>,
    status,
  );
}

const DONE = {
  saved: "Draft saved. Preview it below, then publish it.",
  "image-saved": "Image uploaded to the draft. Preview it below, then publish it.",
  "image-removed": "Image removed from the draft. Publish to take it off the storefront.",
  published: "Published: shoppers see the new look on their next page.",
  discarded: "The draft's changes are gone: it is the published look again.",
};
const DONE_OF: Record<string, keyof typeof DONE> = { publish: "published", discard: "discarded" };

// GET /settings/storefront (settings.read; without it the 403 page).
storefrontSettingsPage.get(PATH, (c) => render(c, doneNotice(c, DONE)));

// POST /settings/storefront: save the draft, preview what was typed without saving, publish, or discard the draft's
// changes (session CSRF token required).
storefrontSettingsPage.post(PATH, (c) =>
  handleFormPost(
    c,
    render,
    (action) => `${PATH}?done=${DONE_OF[action] ?? "saved"}`,
    {
      save: (signedIn, field) => pageCall(c, signedIn, updateThemeDraft, themeOf(field), ["BAD_REQUEST"]),
      preview: async (_signedIn, field, base) => {
        if (!(await base()).me.permissions.includes("settings.write")) throw permissionDenied("settings.write");
        // Refused as a save would be (400, by field), so a preview never shows a colour that could not be saved.
        const parsed = themeSchema.safeParse(themeOf(field));
        if (!parsed.success) throw badRequest(issuesOf(parsed.error));
        return { render: await render(c, undefined, 200, undefined, parsed.data) };
      },
      publish: (signedIn) => pageCall(c, signedIn, publishTheme, {}, ["CONFLICT"]),
      discard: (signedIn) => pageCall(c, signedIn, discardThemeDraft, {}, ["CONFLICT"]),
    },
    "Choose Save draft, Preview, Publish or Discard.",
  ),
);

// GET /settings/storefront/preview.css?brand=…&accent=…: the preview's properties, a pure function of two colours
// (anything but six hex digits falls back to the default), so it holds nothing of any store.
storefrontSettingsPage.get(`${PATH}/preview.css`, async (c) => {
  await postSession(c);
  const colour = (name: string, fallback: string) => {
    const value = `#${c.req.query(name) ?? ""}`.toLowerCase();
    return parseHex(value) ? value : fallback;
  };
  const theme = { ...THEME_DEFAULTS, brandColour: colour("brand", THEME_DEFAULTS.brandColour), accentColour: colour("accent", THEME_DEFAULTS.accentColour) };
  c.header("content-type", "text/css; charset=utf-8");
  c.header("cache-control", "private, max-age=86400");
  return c.body(themeCss(theme, ".theme-preview"));
});

// POST /settings/storefront/images: upload (multipart) or remove the draft's logo, favicon or banner image
// (theme.setImage / theme.removeImage; settings.write, checked by the procedures). A refusal shows the page
// again with why.
storefrontSettingsPage.post(IMAGES_PATH, (c) =>
  imageFormPost(
    c,
    (text, status = 400) => render(c, { ok: false, text }, status),
    (signedIn, text, image) => {
      const slot = THEME_IMAGE_SLOTS.find((s) => s === text("slot"));
      if (!slot) return "Choose the logo, the favicon or the banner image.";
      return image ? pageCall(c, signedIn, setThemeImage, { slot, alt: text("alt") ?? "", image }, IMAGE_REFUSALS) : pageCall(c, signedIn, removeThemeImage, { slot }, IMAGE_REFUSALS);
    },
    (removed) => `${PATH}?done=${removed ? "image-removed" : "image-saved"}#theme-images`,
  ),
);

const FILE = /^([0-9a-f]{64})\/(?:([1-9][0-9]{0,3})\.(webp|jpg)|icon-(32|180)\.png)$/;

// GET /settings/storefront/media/<hash>/<file>: a theme file of the member's active store, for the page's thumbnails (settings.read).
storefrontSettingsPage.get("/settings/storefront/media/:hash/:file", (c) => {
  const file = FILE.exec(`${c.req.param("hash")}/${c.req.param("file")}`);
  if (!file) throw new AppError("NOT_FOUND", "No such image.");
  const [, hash, width, ext, icon] = file as unknown as [string, string, string | undefined, "webp" | "jpg" | undefined, string | undefined];
  const type = icon ? "image/png" : ext === "webp" ? "image/webp" : "image/jpeg";
  return adminStoreFile(c, "settings.read", (storeId) => (icon ? iconKey(storeId, hash, Number(icon) as 32 | 180) : mediaKey(storeId, hash, `${Number(width)}.${ext!}`)), type);
});
