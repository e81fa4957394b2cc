import type { Context } from "hono";
import { tryGetContext } from "hono/context-storage";
import type { Child, FC } from "hono/jsx";
import { iconPath } from "#shared/media/limits";
import { themeCss, themeStamp, type Theme } from "#shared/storefront/theme";
import { imageSources, ProductPicture } from "./media";
import type { ShopEnv } from "./shop-env";

/**
 * The store's published look on the storefront (issue 23 item 2; docs/storefront-theme.md). It rides with
 * the store's held facts (the HOSTS namespace), so no page reads it from the database, and a publish bumps
 * the catalogue version, which renews both the facts and the edge cache's keys.
 *
 * Every page's shell (layout.tsx ShopPage) finds it through the request's context (hono's context storage,
 * set on the internal app in shop.tsx), so a page written tomorrow carries the look without passing it on.
 */
export function publishedTheme(): Theme | null {
  return tryGetContext<ShopEnv>()?.var.shop?.store.theme ?? null;
}

/**
 * The theme's custom properties are per store, so they cannot be an inline style registered for the CSP when
 * a module loads (shared/http/security-headers.ts); they are a stylesheet of the store's own origin
 * (`style-src 'self'`), its address stamped with the CSS it holds, so a browser keeps it for a year and asks
 * again exactly when the look changes.
 */
export const themeHref = (theme: Theme) => `/theme.css?t=${themeStamp(theme)}`;

/** The page head's link to the published theme (after the shell's own style, so its properties win). */
export const ThemeStylesheet: FC = () => {
  const theme = publishedTheme();
  return theme ? <link rel="stylesheet" href={themeHref(theme)} /> : null;
};

const IMMUTABLE = "public, max-age=31536000, immutable";

/** GET /theme.css: the published theme's properties; empty while none is published. */
export function themeStylesheet(c: Context<ShopEnv>) {
  const theme = c.var.shop.store.theme ?? null;
  c.header("content-type", "text/css; charset=utf-8");
  // An old stamp (a page rendered before the publish) gets today's look, never stored under its address.
  c.header("cache-control", theme && c.req.query("t") === themeStamp(theme) ? IMMUTABLE : "no-cache");
  return c.body(theme ? themeCss(theme) : "");
}

/** A link the merchant gave: a path of the store or an https address (the theme's schema allows no other). */
const StoreLink: FC<{ href: string; class?: string; children?: Child }> = ({ href, class: className, children }) => (
  <a href={href} class={className} rel={href.startsWith("https://") ? "noopener" : undefined}>
    {children}
  </a>
);

/** The announcement bar at the top of every page, while it is on. */
export const AnnouncementBar: FC = () => {
  const theme = publishedTheme();
  if (!theme?.announcementEnabled || !theme.announcementText) return null;
  return (
    <aside class="announcement" aria-label="Announcement">
      {theme.announcementLink ? <StoreLink href={theme.announcementLink}>{theme.announcementText}</StoreLink> : theme.announcementText}
    </aside>
  );
};

/** The logo's height in the header, in CSS pixels (THEME_RULES: 2.5rem). */
const LOGO_HEIGHT = 40;

/**
 * The header's brand: the published logo (its alt text the store's name; width and height given, so the header
 * never shifts; the widths offered for the size it shows at), else the name.
 */
export const StoreLogo: FC<{ storeName: string }> = ({ storeName }) => {
  const logo = publishedTheme()?.logo;
  if (!logo) return <>{storeName}</>;
  const width = Math.max(1, Math.round((LOGO_HEIGHT * logo.width) / logo.height));
  const sizes = `${width}px`;
  const webp = imageSources(logo, "webp");
  const jpeg = imageSources(logo, "jpg");
  return (
    <picture>
      <source type="image/webp" srcset={webp.srcset} sizes={sizes} />
      <img src={jpeg.src} srcset={jpeg.srcset} sizes={sizes} width={width} height={LOGO_HEIGHT} alt={storeName} decoding="async" />
    </picture>
  );
};

/** The published favicon: 32 px for the tab, 180 px for a phone's home screen. */
export const FaviconLinks: FC = () => {
  const favicon = publishedTheme()?.favicon;
  if (!favicon) return null;
  return (
    <>
      <link rel="icon" type="image/png" sizes="32x32" href={iconPath(favicon.hash, 32)} />
      <link rel="apple-touch-icon" sizes="180x180" href={iconPath(favicon.hash, 180)} />
    </>
  );
};

/** The home page's banner, while it has a heading: its image first (above the fold: fetched at once), then the words. */
export const HomeBanner: FC = () => {
  const theme = publishedTheme();
  if (!theme?.bannerHeading) return null;
  return (
    <section class="banner" aria-labelledby="banner-heading">
      {theme.bannerImage ? <ProductPicture image={{ ...theme.bannerImage, id: theme.bannerImage.hash }} sizes="(min-width: 64rem) 60rem, 100vw" eager /> : null}
      <h2 id="banner-heading">{theme.bannerHeading}</h2>
      {theme.bannerText ? <p>{theme.bannerText}</p> : null}
      {theme.bannerLink && theme.bannerLinkLabel ? (
        <p>
          <StoreLink class="cta" href={theme.bannerLink}>
            {theme.bannerLinkLabel}
          </StoreLink>
        </p>
      ) : null}
    </section>
  );
};
