import type { BodyData } from "hono/utils/body";
import { AppError, isAppError, type ErrorCode } from "#shared/core/errors";
import { MAX_MEDIA_BYTES } from "#shared/media/limits";
import type { Permission } from "#shared/auth/permissions";
import { permissionDenied } from "#shared/pipeline/principal";
import type { AdminContext } from "../context";
import { storePage } from "./chrome";
import { toBase64 } from "./product-media";

/**
 * The one-image upload forms (Settings → Storefront's images, a collection's image): the multipart post's
 * file as media procedures take it, the refusals a page shows, and the session-checked thumbnails.
 */

/** The refusals an image procedure answers that a page shows by its form (anything else is an error page). */
export const IMAGE_REFUSALS = ["BAD_REQUEST", "CONFLICT", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const satisfies readonly ErrorCode[];

const tooLarge = (what: string) => `${what}; upload an image of at most ${MAX_MEDIA_BYTES / 1048576} MB.`;

/** A post longer than one image at the largest (and its fields) is refused before its body is read. */
export const postTooLarge = (c: AdminContext) =>
  Number(c.req.header("content-length") ?? "0") > MAX_MEDIA_BYTES + 64 * 1024 ? `Not uploaded: an image may be at most ${MAX_MEDIA_BYTES / 1048576} MB.` : undefined;

/** The form's `image` file as base64, or why not. */
export async function uploadedImage(form: BodyData<{ all: true }>): Promise<{ base64: string } | { refused: string }> {
  const file = form["image"];
  if (typeof file !== "object" || file === null || !("arrayBuffer" in file) || file.size === 0) return { refused: "Choose an image to upload." };
  if (file.size > MAX_MEDIA_BYTES) return { refused: tooLarge(`${file.name} is ${(file.size / 1048576).toFixed(1)} MB`) };
  return { base64: toBase64(new Uint8Array(await file.arrayBuffer())) };
}

/** Runs an image change; a refusal the page shows becomes its message and status. */
export async function imageChange(change: () => Promise<unknown>): Promise<{ refused: string; status: 400 | 409 } | undefined> {
  try {
    await change();
    return undefined;
  } catch (e) {
    if (isAppError(e) && (IMAGE_REFUSALS as readonly string[]).includes(e.code)) return { refused: `Not uploaded: ${e.message}`, status: e.code === "CONFLICT" ? 409 : 400 };
    throw e;
  }
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
