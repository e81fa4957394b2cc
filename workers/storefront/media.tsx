import type { Context } from "hono";
import { AppError } from "#shared/core/errors";
import { iconKey, mediaKey, mediaPath, SERVED_TYPES, type IconSize, type ServedExtension } from "#shared/media/limits";
import type { ProductImage } from "#shared/storefront/media";
import type { StorefrontEnv } from "./context";

/**
 * Product images on the store's own hostnames (docs/media.md, decision 0034):
 * `/media/<sha256>/<width>.<webp|jpg>`, read from R2 under the current store's prefix only (another store's
 * hash is simply not there: 404), immutable (a key's content never changes), kept in the edge cache per
 * hostname. And the markup pages use: `srcset`/`sizes` with the original's width and height, so the browser
 * reserves the space before the file arrives (no layout shift).
 */

const FILE = /^([1-9][0-9]{0,3})\.(webp|jpg)$/;
/** A favicon's PNG (Settings → Storefront). */
const ICON = /^icon-(32|180)\.png$/;
const HASH = /^[0-9a-f]{64}$/;
const IMMUTABLE = "public, max-age=31536000, immutable";

const notFound = () => new AppError("NOT_FOUND", "There is no image at this address.");

/** GET /media/:hash/:file (after the storefront gate: the store of the hostname is known). */
export async function mediaFile(c: Context<StorefrontEnv>): Promise<Response> {
  const hash = c.req.param("hash") ?? "";
  const file = FILE.exec(c.req.param("file") ?? "");
  const icon = ICON.exec(c.req.param("file") ?? "");
  if (!HASH.test(hash) || !(file || icon)) throw notFound();
  const key = file ? mediaKey(c.var.storeId, hash, `${Number(file[1])}.${file[2] as ServedExtension}`) : iconKey(c.var.storeId, hash, Number(icon![1]) as IconSize);
  const type = file ? SERVED_TYPES[file[2] as ServedExtension] : "image/png";
  // Kept by the store's R2 key, never by the URL alone: two stores' hostnames may ask the same path.
  const cache = await caches.open("media");
  const cacheKey = new Request(`https://media.invalid/${key}`);
  const cached = await cache.match(cacheKey);
  if (cached) return cached;
  const object = await c.env.MEDIA.get(key);
  if (!object) throw notFound();
  const headers = new Headers({ "content-type": type, "cache-control": IMMUTABLE, etag: object.httpEtag, "content-length": String(object.size) });
  if (c.req.header("if-none-match") === object.httpEtag) return new Response(null, { status: 304, headers });
  const response = new Response(c.req.method === "HEAD" ? null : object.body, { headers });
  if (c.req.method === "GET") {
    const [answer, kept] = response.body ? response.body.tee() : [null, null];
    c.var.defer(cache.put(cacheKey, new Response(kept, { headers })));
    return new Response(answer, { headers });
  }
  return response;
}

/** What markup needs of an image: a product's, or the theme's logo and banner. */
type Sized = Pick<ProductImage, "hash" | "width" | "height" | "widths">;

const srcset = (image: Sized, ext: ServedExtension) => image.widths.map((w) => `${mediaPath(image.hash, w, ext)} ${w}w`).join(", ");

/** The attributes of one image at the widths it was made in: `src` (a middle width), `srcset` and the original's size. */
export function imageSources(image: Sized, ext: ServedExtension = "webp") {
  const middle = image.widths.find((w) => w >= 640) ?? image.widths[image.widths.length - 1]!;
  return { src: mediaPath(image.hash, middle, ext), srcset: srcset(image, ext), width: image.width, height: image.height };
}

/**
 * A product image as a <picture>: WebP first, JPEG for browsers without it, explicit width and height.
 * `sizes` says how wide it shows (e.g. "(min-width: 48rem) 25vw, 50vw" on a card grid); `eager` for the
 * image above the fold (the product page's first), lazy otherwise.
 */
export function ProductPicture(props: { image: ProductImage; sizes: string; eager?: boolean; class?: string }) {
  const { image, sizes } = props;
  const jpeg = imageSources(image, "jpg");
  return (
    <picture>
      <source type="image/webp" srcset={srcset(image, "webp")} sizes={sizes} />
      <img
        src={jpeg.src}
        srcset={jpeg.srcset}
        sizes={sizes}
        width={image.width}
        height={image.height}
        alt={image.alt}
        loading={props.eager ? "eager" : "lazy"}
        decoding="async"
        {...(props.eager ? { fetchpriority: "high" } : {})}
        {...(props.class ? { class: props.class } : {})}
      />
    </picture>
  );
}
