import type { FC } from "hono/jsx";
import type { listMedia } from "#shared/procedures/media";
import { MAX_MEDIA_BYTES } from "#shared/media/limits";
import { inlineScript } from "#shared/http/security-headers";
import { Section } from "./parts";

/**
 * The product page's images (docs/media.md): each with its thumbnail, alt text, the variants that show it,
 * Move up / Move down and Remove, and an upload form for several images at once. Plain forms posted to
 * /products/<id>/media (product-media.tsx): everything works without JavaScript.
 */

type Media = Awaited<ReturnType<typeof listMedia.run>>["items"];
interface ProductOfPage {
  id: string;
  title: string;
  variants: readonly { id: string; title: string }[];
}

/** Where the admin shows an image's file (its own session-checked route: the storefront's hostnames are the store's). */
export const adminMediaSrc = (productId: string, hash: string, width: number) => `/products/${productId}/media/${hash}/${width}.webp`;

/** The alt text offered for a new image: the product's title, with the variant's when there is one. */
export const altSuggestion = (product: ProductOfPage, variantTitle?: string) =>
  variantTitle && variantTitle !== "Default" ? `${product.title}, ${variantTitle}` : product.title;

/**
 * Progressive: files dropped on the upload card go into its file input (the form still posts as without
 * JavaScript); the status line says how many were chosen.
 */
const DROP_SCRIPT = inlineScript(`(function(){var f=document.getElementById("upload-images"),i=document.getElementById("media-files"),s=document.getElementById("media-drop-status");
if(!f||!i||!window.DataTransfer)return;
var say=function(){if(s)s.textContent=i.files.length?i.files.length+" image"+(i.files.length===1?"":"s")+" chosen.":""};
f.addEventListener("dragover",function(e){e.preventDefault();f.classList.add("dropping")});
f.addEventListener("dragleave",function(){f.classList.remove("dropping")});
f.addEventListener("drop",function(e){e.preventDefault();f.classList.remove("dropping");if(e.dataTransfer&&e.dataTransfer.files.length){i.files=e.dataTransfer.files;say()}});
i.addEventListener("change",say)})();`);

const Hidden: FC<{ csrf: string; action: string; mediaId?: string }> = ({ csrf, action, mediaId }) => (
  <>
    <input type="hidden" name="csrf" value={csrf} />
    <input type="hidden" name="action" value={action} />
    {mediaId ? <input type="hidden" name="mediaId" value={mediaId} /> : null}
  </>
);

const ImageRow: FC<{ product: ProductOfPage; image: Media[number]; index: number; count: number; csrf: string; canWrite: boolean }> = ({ product, image, index, count, csrf, canWrite }) => {
  const to = `/products/${product.id}/media`;
  const thumb = image.widths[0]!;
  const label = `Image ${index + 1}`;
  return (
    <li class="card media-row" data-media={image.hash.slice(0, 12)}>
      <img src={adminMediaSrc(product.id, image.hash, thumb)} width={thumb} height={Math.round((image.height * thumb) / image.width)} alt={image.alt} loading="lazy" />
      <div>
        <p class="muted">
          {label}
          {index === 0 ? " (main image)" : ""} · {image.width}×{image.height} px · {image.originalType.replace("image/", "").toUpperCase()}
        </p>
        {canWrite ? (
          <>
            <form method="post" action={to}>
              <Hidden csrf={csrf} action="alt" mediaId={image.id} />
              <label for={`alt-${image.id}`}>Alt text of {label.toLowerCase()}</label>
              <input id={`alt-${image.id}`} name="alt" value={image.alt} required maxlength={500} />
              <button type="submit">Save alt text</button>
            </form>
            {product.variants.length > 0 ? (
              <form method="post" action={to}>
                <Hidden csrf={csrf} action="variants" mediaId={image.id} />
                <fieldset>
                  <legend>Variants that show {label.toLowerCase()}</legend>
                  {product.variants.map((v) => (
                    <label class="check" for={`show-${image.id}-${v.id}`}>
                      <input id={`show-${image.id}-${v.id}`} type="checkbox" name="variantIds" value={v.id} checked={image.variantIds.includes(v.id)} /> {v.title}
                    </label>
                  ))}
                </fieldset>
                <button type="submit">Save variants</button>
              </form>
            ) : null}
            <form method="post" action={to} class="row-actions">
              <Hidden csrf={csrf} action="move" mediaId={image.id} />
              <button type="submit" name="direction" value="up" disabled={index === 0} aria-label={`Move up: ${label.toLowerCase()}`}>
                Move up
              </button>{" "}
              <button type="submit" name="direction" value="down" disabled={index === count - 1} aria-label={`Move down: ${label.toLowerCase()}`}>
                Move down
              </button>
            </form>
            <form method="post" action={to}>
              <Hidden csrf={csrf} action="remove" mediaId={image.id} />
              <button type="submit" class="danger" aria-label={`Remove ${label.toLowerCase()}`}>
                Remove
              </button>
            </form>
          </>
        ) : (
          <p>{image.alt}</p>
        )}
      </div>
    </li>
  );
};

export const MediaSection: FC<{ product: ProductOfPage; media: Media; csrf: string; canWrite: boolean }> = ({ product, media, csrf, canWrite }) => (
  <Section id="images" title="Images">
    {media.length === 0 ? <p class="muted">No images yet. The first image is the one product cards show.</p> : null}
    <ol class="media-list">
      {media.map((image, index) => (
        <ImageRow product={product} image={image} index={index} count={media.length} csrf={csrf} canWrite={canWrite} />
      ))}
    </ol>
    {canWrite ? (
      <form method="post" action={`/products/${product.id}/media`} enctype="multipart/form-data" class="card" id="upload-images">
        <Hidden csrf={csrf} action="upload" />
        <h3>Add images</h3>
        <p class="muted">Choose files, or drop them on this box.</p>
        <label for="media-files">Images (JPEG, PNG, WebP or AVIF; up to 5 at once, each at most {MAX_MEDIA_BYTES / 1048576} MB and 12 megapixels)</label>
        <input id="media-files" type="file" name="images" multiple required accept="image/jpeg,image/png,image/webp,image/avif" />
        <label for="media-alt">Alt text (what the image shows, for people who cannot see it)</label>
        <input id="media-alt" name="alt" value={altSuggestion(product)} required maxlength={500} aria-describedby="media-alt-help" />
        <p class="muted" id="media-alt-help">
          Each image uploaded now gets this text; change any of them afterwards, e.g. “{altSuggestion(product, product.variants[0]?.title ?? "red")}, back”.
        </p>
        <p class="muted" id="media-drop-status" role="status" aria-live="polite"></p>
        <button type="submit">Upload</button>
      </form>
    ) : null}
    {canWrite ? <script dangerouslySetInnerHTML={{ __html: DROP_SCRIPT }} /> : null}
  </Section>
);
