import { z } from "zod";

/** The longest return path followed; anything longer sends the member home. */
export const MAX_REDIRECT_PATH = 2048;

/** The query of pages that take a `next` (GET /login, GET /select-store): too long is a 400 naming it. */
export const nextQuery = z.object({ next: z.string().max(MAX_REDIRECT_PATH).optional() });

/** Printable ASCII except the backslash: no control characters, whitespace, `\` or non-ASCII. */
const PLAIN_PATH = /^[\x21-\x5B\x5D-\x7E]*$/;
/** What a query may decode to: no control characters and no backslash (spaces are fine there). */
const PLAIN_QUERY = /^[^\x00-\x1F\x7F\\]*$/;
/** Layers of percent-encoding undone before giving up (`%25252F` is three). */
const MAX_DECODING = 4;

/** One layer of percent-decoding, byte by byte: never throws, and each byte stays one character. */
const decodeOnce = (s: string) => s.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The text and every decoding of it, or null when it keeps decoding further than anyone needs. */
function decodings(text: string): string[] | null {
  const layers = [text];
  for (let i = 0; i < MAX_DECODING; i++) {
    const next = decodeOnce(layers[layers.length - 1]!);
    if (next === layers[layers.length - 1]) return layers;
    layers.push(next);
  }
  return null;
}

/**
 * Where a member may be sent: the one decision for every `next` and return path the admin follows
 * (sign-in, store picking, the OAuth consent's return). Only a path of the admin's own origin is
 * accepted, and only when neither its text nor any decoding of it holds a control character, a
 * backslash or (in the path) whitespace or non-ASCII, and no decoding starts with `//`: browsers
 * drop tabs and newlines and read `\` as `/`, and servers and proxies decode, so any of these can
 * turn into a protocol-relative URL somewhere. Answers the normalised `pathname + search` (the
 * fragment is dropped: the server never sees one), or `/`.
 */
export function safeRedirectPath(raw: string | null | undefined, origin: string): string {
  if (!raw || raw.length > MAX_REDIRECT_PATH || !raw.startsWith("/")) return "/";
  const hash = raw.indexOf("#");
  const beforeHash = hash === -1 ? raw : raw.slice(0, hash);
  const query = beforeHash.indexOf("?");
  const path = decodings(query === -1 ? beforeHash : beforeHash.slice(0, query));
  const search = decodings(query === -1 ? "" : beforeHash.slice(query));
  if (!path || !search || !PLAIN_PATH.test(raw)) return "/";
  if (path.some((p) => !PLAIN_PATH.test(p) || p.startsWith("//"))) return "/";
  if (search.some((q) => !PLAIN_QUERY.test(q))) return "/";
  let url: URL;
  try {
    url = new URL(beforeHash, origin);
  } catch {
    return "/";
  }
  // Dot segments can still make `//`: `/.//evil.example` resolves to the path `//evil.example`.
  if (url.origin !== origin || url.pathname.startsWith("//")) return "/";
  return url.pathname + url.search;
}
