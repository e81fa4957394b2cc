import type { MiddlewareHandler } from "hono";
import { readBoundedText } from "#shared/http/body";
import { AppError, badRequest, type FieldIssue } from "#shared/core/errors";
import { hasUnstorableText, NUL_MESSAGE, unstorableIssue } from "#shared/core/storable";

/**
 * The storefront's one check of what a shopper sends, before the hostname is looked up or anything else
 * touches the database (docs/decisions/0023-inputs-at-the-door.md): the path, the query and a JSON or
 * form body carry no text Postgres cannot hold and no nesting past the limit (shared/core/storable.ts).
 * A path with a NUL names no page (404); anything else is a 400 naming the field, as JSON under /api/ and
 * as the error page elsewhere. Bodies are read from a copy, so the routes read them as before.
 */

/** A shopper's form or JSON body is small (the checkout form is the largest, ~2 KB); more is refused (413). */
export const STOREFRONT_BODY_LIMIT = 64 * 1024;

const FORM = new Set(["application/x-www-form-urlencoded", "multipart/form-data"]);

/** A NUL can reach a URL's path or query only percent-encoded: the URL parser encodes a raw one. */
const ENCODED_NUL = /%00/;

/** The first name or value of a query or form that Postgres cannot hold, as a field issue. */
function fieldsIssue(fields: Iterable<[string, unknown]>): FieldIssue | undefined {
  for (const [name, value] of fields) {
    if (hasUnstorableText(name) || (typeof value === "string" && hasUnstorableText(value))) return { path: name.replaceAll("\u0000", "\\u0000"), message: NUL_MESSAGE };
  }
  return undefined;
}

async function bodyIssue(req: Request): Promise<FieldIssue | undefined> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!req.body || (type !== "application/json" && !FORM.has(type))) return undefined;
  const text = await readBoundedText(req.clone(), STOREFRONT_BODY_LIMIT);
  if (type === "multipart/form-data") {
    const form = await new Response(text, { headers: { "content-type": req.headers.get("content-type")! } }).formData().catch(() => undefined);
    return form ? fieldsIssue(form) : undefined;
  }
  if (type !== "application/json") return fieldsIssue(new URLSearchParams(text));
  try {
    return unstorableIssue(JSON.parse(text));
  } catch {
    // Not JSON: the route says so.
    return undefined;
  }
}

export const inputGuard: MiddlewareHandler = async function inputGuard(c, next) {
  const url = new URL(c.req.url);
  if (ENCODED_NUL.test(url.pathname)) {
    if (url.pathname.startsWith("/api/")) throw badRequest([{ path: "path", message: NUL_MESSAGE }]);
    throw new AppError("NOT_FOUND", "There is no page at this address.");
  }
  const issue = fieldsIssue(url.searchParams) ?? (await bodyIssue(c.req.raw));
  if (issue) throw badRequest([issue]);
  await next();
};
