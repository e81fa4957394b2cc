import { Hono } from "hono";
import { AppError, isAppError } from "#shared/core/errors";
import { MAX_MEDIA_BYTES, mediaKey } from "#shared/media/limits";
import { base64Of } from "#shared/media/store";
import { permissionDenied } from "#shared/pipeline/principal";
import { attachMedia, listMedia, removeMedia, reorderMedia, updateMedia } from "#shared/procedures/media";
import { pageCall, postSession, type AdminEnv } from "../context";
import { sessionForm } from "../session-form";
import { storePage } from "./chrome";
import { idParam } from "./form-post";
import { renderEdit } from "./product-edit";

/**
 * The product page's image forms (product-media-view.tsx) and the files' thumbnails. Uploads are multipart
 * posts: several files at once, each checked, resized and stored by media.attach; a refusal shows the page
 * again with why, naming the file.
 */
export const productMediaPage = new Hono<AdminEnv>();

/** At most this many files per post: each takes about 2 s of CPU to resize (decision 0034). */
const FILES_PER_POST = 5;
/** A post's body, read before anything (5 files at the largest, and the form's fields). */
const POST_LIMIT = FILES_PER_POST * MAX_MEDIA_BYTES + 64 * 1024;

const HASH = /^[0-9a-f]{64}$/;
const FILE = /^[1-9][0-9]{0,3}\.(webp|jpg)$/;

// GET /products/<id>/media/<hash>/<width>.<webp|jpg>: a file of the member's active store, for the page's thumbnails.
productMediaPage.get("/products/:id/media/:hash/:file", async (c) => {
  const hash = c.req.param("hash");
  const file = c.req.param("file");
  if (!HASH.test(hash) || !FILE.test(file)) throw new AppError("NOT_FOUND", "No such image.");
  const { me } = await storePage(c);
  if (!me.permissions.includes("products.read")) throw permissionDenied("products.read");
  const object = await c.env.MEDIA.get(mediaKey(me.store.id, hash, file as `${number}.webp`));
  if (!object) throw new AppError("NOT_FOUND", "No such image.");
  return new Response(object.body, {
    headers: { "content-type": file.endsWith(".webp") ? "image/webp" : "image/jpeg", "cache-control": "private, max-age=31536000, immutable" },
  });
});

// POST /products/<id>/media: upload, alt, variants, move, remove (products.write; the procedures check it).
productMediaPage.post("/products/:id/media", async (c) => {
  const id = idParam(c, "Product");
  const refused = (text: string) => renderEdit(c, id, { ok: false, text }, 400);
  if (Number(c.req.header("content-length") ?? "0") > POST_LIMIT) {
    return refused(`Not uploaded: send at most ${FILES_PER_POST} images of at most ${MAX_MEDIA_BYTES / 1048576} MB each at once.`);
  }
  const { signedIn, form, text } = await sessionForm(c, postSession, { all: true });
  const mediaId = text("mediaId") ?? "";
  const expected = ["BAD_REQUEST", "CONFLICT", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const;
  let done: string;
  try {
    switch (text("action")) {
      case "upload": {
        const files = [form["images"]].flat().filter((f): f is File => typeof f === "object" && f !== null && "arrayBuffer" in f && f.size > 0);
        if (files.length === 0) return refused("Choose one or more images to upload.");
        if (files.length > FILES_PER_POST) return refused(`Choose at most ${FILES_PER_POST} images at once.`);
        for (const [n, f] of files.entries()) {
          if (f.size > MAX_MEDIA_BYTES) return refused(`${f.name} is ${(f.size / 1048576).toFixed(1)} MB; upload images of at most ${MAX_MEDIA_BYTES / 1048576} MB.${n ? ` The ${n} before it were added.` : ""}`);
          try {
            await pageCall(c, signedIn, attachMedia, { productId: id, alt: text("alt") ?? "", image: { base64: base64Of(new Uint8Array(await f.arrayBuffer())) } }, expected);
          } catch (e) {
            if (isAppError(e) && n > 0) throw new AppError(e.code, `${f.name}: ${e.message} The ${n} before it were added.`, e.data);
            if (isAppError(e) && e.code !== "BAD_REQUEST") throw new AppError(e.code, `${f.name}: ${e.message}`, e.data);
            throw e;
          }
        }
        done = files.length === 1 ? "image-added" : "images-added";
        break;
      }
      case "alt":
        await pageCall(c, signedIn, updateMedia, { productId: id, id: mediaId, alt: text("alt") ?? "" }, expected);
        done = "image-saved";
        break;
      case "variants":
        await pageCall(c, signedIn, updateMedia, { productId: id, id: mediaId, variantIds: [form["variantIds"] ?? []].flat().filter((v) => typeof v === "string") }, expected);
        done = "image-saved";
        break;
      case "move": {
        const { items } = await pageCall(c, signedIn, listMedia, { productId: id }, expected);
        const ids = items.map((i) => i.id);
        const from = ids.indexOf(mediaId);
        const to = from + (text("direction") === "up" ? -1 : 1);
        if (from < 0 || to < 0 || to >= ids.length) return refused("That image cannot move further.");
        [ids[from], ids[to]] = [ids[to]!, ids[from]!];
        await pageCall(c, signedIn, reorderMedia, { productId: id, ids }, expected);
        done = "images-reordered";
        break;
      }
      case "remove":
        await pageCall(c, signedIn, removeMedia, { productId: id, id: mediaId }, expected);
        done = "image-removed";
        break;
      default:
        return refused("Choose Upload, Save alt text, Save variants, Move or Remove.");
    }
  } catch (e) {
    if (isAppError(e) && (expected as readonly string[]).includes(e.code)) {
      // A missing alt text names its field the way the form does.
      const altMissing = (e.data?.issues as { path: string }[] | undefined)?.some((i) => i.path === "alt");
      return renderEdit(c, id, { ok: false, text: altMissing ? "Not saved: give the image alt text (what it shows, for people who cannot see it)." : e.message }, e.code === "CONFLICT" ? 409 : 400);
    }
    throw e;
  }
  return c.redirect(`/products/${id}?done=${done}#images`, 303);
});
