import type { FC } from "hono/jsx";
import { inlineScript } from "#shared/http/security-headers";
import type { ProductImage } from "#shared/storefront/media";
import { ProductPicture } from "./media";

/**
 * A product page's photos (issue 23 item 4): the chosen variant's image first and large, the others after
 * it. Without JavaScript every photo is on the page and the default variant's leads; with it, choosing a
 * variant brings that variant's photo to the front (the small script below, one for every store: the map
 * of variant to image is data on the gallery, never code). It listens on the document: the variants' form
 * comes after the gallery, so its radios do not exist yet when the script runs.
 */
const SWITCH_SCRIPT = inlineScript(`(function(){var g=document.querySelector("ol.gallery[data-variant-images]");if(!g)return;var map;try{map=JSON.parse(g.getAttribute("data-variant-images"))}catch(e){return}
document.addEventListener("change",function(e){var r=e.target;if(!r||r.name!=="variantId")return;var id=map[r.value];var li=id&&g.querySelector('li[data-image="'+id+'"]');if(li&&li!==g.firstElementChild){g.prepend(li)}})})();`);

export const Gallery: FC<{ images: readonly ProductImage[]; variantImage: Readonly<Record<string, string>>; chosenVariant: string | undefined }> = ({ images, variantImage, chosenVariant }) => {
  if (images.length === 0) return null;
  const leading = chosenVariant ? variantImage[chosenVariant] : undefined;
  const ordered = leading ? [...images.filter((i) => i.id === leading), ...images.filter((i) => i.id !== leading)] : images;
  return (
    <>
      <ol class="gallery" aria-label="Photos" data-variant-images={JSON.stringify(variantImage)}>
        {ordered.map((image, i) => (
          <li data-image={image.id}>
            <ProductPicture image={image} sizes={i === 0 ? "(min-width: 60rem) 56rem, 100vw" : "(min-width: 60rem) 14rem, 25vw"} eager={i === 0} />
          </li>
        ))}
      </ol>
      {Object.keys(variantImage).length > 0 ? <script dangerouslySetInnerHTML={{ __html: SWITCH_SCRIPT }} /> : null}
    </>
  );
};
