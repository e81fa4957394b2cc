import type { Context } from "hono";
import type { z } from "zod";
import { AppError, badRequest } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";

export type BodyKind = "json" | "form";

export interface Body {
  kind: BodyKind;
  fields: Record<string, unknown>;
  /** Form posts only: where to send the shopper back (a same-site path). */
  returnTo: string;
  /** Form posts only: the method the form stands for (forms can only POST). */
  method: string | undefined;
}

const FALLBACK_RETURN = "/cart";
const SAFE_PATH = /^\/(?![/\\])[^\\\s]{0,500}$/;

/**
 * Only a relative path starting with a single `/` is followed; anything else goes to /cart. The URL
 * parser normalises (`/.//x` becomes `//x`), so the result is checked again after it.
 */
export function safeReturn(raw: unknown, error?: string): string {
  const path = typeof raw === "string" && SAFE_PATH.test(raw) ? raw : FALLBACK_RETURN;
  const url = new URL(path, "http://return.invalid");
  if (error) url.searchParams.set("cartError", error);
  const out = `${url.pathname}${url.search}${url.hash}`;
  return url.host === "return.invalid" && SAFE_PATH.test(out) ? out : error ? `${FALLBACK_RETURN}?cartError=${encodeURIComponent(error)}` : FALLBACK_RETURN;
}

/** Form values are strings: whole numbers become numbers, so one schema checks both kinds of body. */
const fromForm = (value: unknown): unknown => (typeof value === "string" && /^-?\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : value);

/** Reads a JSON or form body (415 for anything else); a body-less request counts as an empty JSON object. */
export async function readBody(c: Context): Promise<Body> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded" || type === "multipart/form-data") {
    const form = await c.req.parseBody().catch(() => {
      throw badRequest([{ path: "body", message: "not a readable form" }]);
    });
    const { return: returnTo, _method: method, ...rest } = form;
    const fields = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, fromForm(v)]));
    return { kind: "form", fields, returnTo: safeReturn(returnTo), method: typeof method === "string" ? method.toUpperCase() : undefined };
  }
  const text = await c.req.text();
  if (type !== "application/json" && !(type === "" && text === "")) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send application/json or a form.", { reason: "content_type" });
  }
  let parsed: unknown = {};
  if (text.trim() !== "") {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest([{ path: "body", message: "not valid JSON" }]);
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest([{ path: "body", message: "expected a JSON object" }]);
  }
  return { kind: "json", fields: parsed as Record<string, unknown>, returnTo: FALLBACK_RETURN, method: undefined };
}

export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(issuesOf(result.error));
  return result.data;
}
