/**
 * A content page's body as the storefront shows it: paragraphs split by a blank line (a line of spaces counts
 * as blank). Browsers send a textarea's line breaks as CRLF, so both kinds of line end are read the same.
 * The admin's preview uses the same function.
 */
export const contentParagraphs = (body: string): string[] =>
  body
    .replace(/\r\n?/g, "\n")
    .split(/\n[ \t]*\n\s*/)
    .filter((p) => p.trim() !== "");
