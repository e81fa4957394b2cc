/** Helpers shared by the Settings → MCP & API suites (api-settings-*.test.ts). */

/** The HTML of the page's `<section id="…">`, up to its first closing tag ("" when there is none). */
export const section = (html: string, id: string) => {
  const start = html.indexOf(`<section id="${id}"`);
  return start < 0 ? "" : html.slice(start, html.indexOf("</section>", start));
};
