/** A content page's body as the storefront shows it: paragraphs split by a blank line. The admin's preview uses the same. */
export const contentParagraphs = (body: string): string[] => body.split(/\n{2,}/);
