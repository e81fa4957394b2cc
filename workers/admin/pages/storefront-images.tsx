import type { FC } from "hono/jsx";
import { MAX_MEDIA_BYTES } from "#shared/media/limits";
import type { Theme, ThemeImageSlot } from "#shared/storefront/theme";

/**
 * Settings → Storefront's images (docs/storefront-theme.md): the draft's logo, favicon and banner image, each
 * with its thumbnail, an upload form (multipart, no JavaScript needed) and Remove. Posted to
 * /settings/storefront/images (storefront-settings.tsx), through theme.setImage / theme.removeImage.
 */

export const IMAGES_PATH = "/settings/storefront/images";

/** Where the admin shows one of the store's theme files (its own session-checked route). */
export const adminThemeFileSrc = (hash: string, file: string) => `/settings/storefront/media/${hash}/${file}`;

const SLOTS: { slot: ThemeImageSlot; title: string; help: string }[] = [
  { slot: "logo", title: "Logo", help: "Shown in the header instead of the store's name (which stays its alt text), 40 px high. A wide PNG or WebP with a transparent background reads best." },
  { slot: "favicon", title: "Favicon", help: "The icon in the browser's tab and on a phone's home screen: the middle square of the image, made 32 and 180 px." },
  { slot: "bannerImage", title: "Banner image", help: "Above the banner's heading on the home page, as wide as the page. Give alt text if it shows something the heading does not say." },
];

/** The thumbnail of a slot's draft image. */
const Thumb: FC<{ theme: Theme; slot: ThemeImageSlot; title: string }> = ({ theme, slot, title }) => {
  if (slot === "favicon") {
    return theme.favicon ? <img src={adminThemeFileSrc(theme.favicon.hash, "icon-180.png")} width={90} height={90} alt={`${title} (draft)`} /> : null;
  }
  const image = theme[slot];
  if (!image) return null;
  const width = image.widths[0]!;
  return <img src={adminThemeFileSrc(image.hash, `${width}.webp`)} width={width} height={Math.max(1, Math.round((image.height * width) / image.width))} alt={`${title} (draft)`} />;
};

/** The draft's three images, each with its upload and Remove forms. */
export const ThemeImagesForm: FC<{ csrf: string; theme: Theme }> = ({ csrf, theme }) => (
  <section class="card" id="theme-images" aria-labelledby="theme-images-heading">
    <h2 id="theme-images-heading">Images</h2>
    <p class="muted">
      JPEG, PNG, WebP or AVIF, at most {MAX_MEDIA_BYTES / 1048576} MB and 12 megapixels. An upload changes the draft: shoppers see it once you publish.
    </p>
    {SLOTS.map(({ slot, title, help }) => (
      <div class={`theme-image theme-image-${slot}`}>
        <h3>{title}</h3>
        <Thumb theme={theme} slot={slot} title={title} />
        <form method="post" action={IMAGES_PATH} enctype="multipart/form-data">
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="slot" value={slot} />
          <label for={`image-${slot}`}>{theme[slot] ? `Replace the ${title.toLowerCase()}` : `Upload a ${title.toLowerCase()}`}</label>
          <input id={`image-${slot}`} type="file" name="image" accept="image/jpeg,image/png,image/webp,image/avif" required aria-describedby={`image-${slot}-help`} />
          <p class="muted" id={`image-${slot}-help`}>
            {help}
          </p>
          {slot === "bannerImage" ? (
            <>
              <label for="image-bannerImage-alt">Alt text (optional)</label>
              <input id="image-bannerImage-alt" name="alt" maxlength={200} value={theme.bannerImage?.alt ?? ""} />
            </>
          ) : null}
          <button type="submit" name="action" value="upload">
            Upload
          </button>
        </form>
        {theme[slot] ? (
          <form method="post" action={IMAGES_PATH}>
            <input type="hidden" name="csrf" value={csrf} />
            <input type="hidden" name="slot" value={slot} />
            <button type="submit" name="action" value="remove" class="secondary">
              Remove the {title.toLowerCase()}
            </button>
          </form>
        ) : null}
      </div>
    ))}
  </section>
);
