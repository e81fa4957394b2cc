import type { BodyData } from "hono/utils/body";
import { AppError, isAppError, type ErrorCode } from "#shared/core/errors";
import { MAX_MEDIA_BYTES } from "#shared/media/limits";
import { base64Of } from "#shared/media/store";
import type { Permission } from "#shared/auth/permissions";
import { permissionDenied } from "#shared/pipeline/principal";
import { postSession, type AdminContext, type SignedIn } from "../context";
import { sessionForm, type SessionForm } from "../session-form";
import { storePage } from "./chrome";

/**
 * The one-image upload forms (Settings → Storefront's images, a collection's image): the multipart post's
 * file as media procedures take it, the refusals a page shows, and the session-checked thumbnails.
 */

/** The refusals an image procedure answers that a page shows by its form (anything else is an error page). */
export const IMAGE_REFUSALS = ["BAD_REQUEST", "CONFLICT", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const satisfies readonly ErrorCode[];

/**
 * A one-image form's post (multipart): refused before its body is read when longer than one image at the
 * largest; the session's CSRF token checked; then `change` uploads the form's `image` (or, for the Remove
 * button, `image` is undefined). A refusal shows the page again (`refused`) with why; else 303 to `done`.
 */
export async function imageFormPost(
  c: AdminContext,
  refused: (text: string, status?: 400 | 409) => Promise<Response>,
  change: (signedIn: Pick<SignedIn, "id">, text: SessionForm<unknown>["text"], image: { base64: string } | undefined) => Promise<unknown> | string,
  done: (removed: boolean) => string,
): Promise<Response> {
  if (Number(c.req.header("content-length") ?? "0") > MAX_MEDIA_BYTES + 64 * 1024) return refused(`Not uploaded: an image may be at most ${MAX_MEDIA_BYTES / 1048576} MB.`);
  const { signedIn, form, text } = await sessionForm(c, postSession);
  const removed = text("action") === "remove";
  const upload = removed ? undefined : await uploadedImage(form);
  if (upload && "refused" in upload) return refused(upload.refused);
  try {
    const answer = await change(signedIn, text, upload);
    if (typeof answer === "string") return refused(answer);
  } catch (e) {
    if (isAppError(e) && (IMAGE_REFUSALS as readonly string[]).includes(e.code)) return refused(`Not uploaded: ${e.message}`, e.code === "CONFLICT" ? 409 : 400);
    throw e;
  }
  return c.redirect(done(removed), 303);
}

/** The form's `image` file as base64, or why not. */
async function uploadedImage(form: BodyData<{ all: true }>): Promise<{ base64: string } | { refused: string }> {
  const file = form["image"];
  if (typeof file !== "object" || file === null || !("arrayBuffer" in file) || file.size === 0) return { refused: "Choose an image to upload." };
  if (file.size > MAX_MEDIA_BYTES) return { refused: `${file.name} is ${(file.size / 1048576).toFixed(1)} MB; upload an image of at most ${MAX_MEDIA_BYTES / 1048576} MB.` };
  return { base64: base64Of(new Uint8Array(await file.arrayBuffer())) };
}

/** One file of the member's active store from R2 (a thumbnail), for members with `permission`: `key` is made from the store's id. */
export async function adminStoreFile(c: AdminContext, permission: Permission, key: (storeId: string) => string | undefined, type: string): Promise<Response> {
  const { me } = await storePage(c);
  if (!me.permissions.includes(permission)) throw permissionDenied(permission);
  const name = key(me.store.id);
  const object = name ? await c.env.MEDIA.get(name) : null;
  if (!object) throw new AppError("NOT_FOUND", "No such image.");
  return new Response(object.body, { headers: { "content-type": type, "cache-control": "private, max-age=31536000, immutable" } });
}
