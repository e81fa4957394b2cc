import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// Every relative link in README.md and docs/ must name a file or folder of the repository, and a `#anchor`
// into a markdown page must name one of its headings, so text moved between pages cannot leave a dead link.

const repo = resolve(import.meta.dirname, "..");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(markdown).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The text with fenced blocks blanked out (a `# comment` in a shell block is no heading). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, " "));
}

/** The text with code blanked out: links shown as code are not links. */
function withoutCode(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, (code) => " ".repeat(code.length));
}

/** The links of one page that point nowhere, as "target: why". `read` answers a file's text, undefined when absent. */
export function deadLinks(page: string, markdown: string, read: (path: string) => string | undefined, exists: (path: string) => boolean): string[] {
  const dead: string[] = [];
  for (const match of withoutCode(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [path, anchor] = target.split("#", 2) as [string, string | undefined];
    const file = path === "" ? page : join(dirname(page), decodeURIComponent(path));
    if (path !== "" && !exists(file)) {
      dead.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined || !file.endsWith(".md")) continue;
    const text = file === page ? markdown : read(file);
    if (text !== undefined && !anchors(text).has(anchor)) dead.push(`${target}: no heading #${anchor}`);
  }
  return dead;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

describe("relative links in README.md and docs/", () => {
  const pages = [join(repo, "README.md"), ...markdownFiles(join(repo, "docs"))];

  for (const page of pages) {
    it(`${relative(repo, page)} links only to what exists`, () => {
      expect(deadLinks(page, readFileSync(page, "utf8"), read, existsSync)).toEqual([]);
    });
  }

  it("finds a missing file, a missing heading and a link to the wrong folder, and ignores code and URLs", () => {
    const files: Record<string, string> = {
      "/r/README.md": "# Edge Commerce\n\n## Two commands\n",
      "/r/docs/admin.md": "# The admin app\n\n## Roles and permissions\n\n## Connect an AI client (remote MCP)\n",
    };
    const page = [
      "## Roles and permissions",
      "[ok](../README.md#two-commands) [ok](#roles-and-permissions) [ok](admin.md#connect-an-ai-client-remote-mcp)",
      "[gone](orders.md) [moved](docs/admin.md) [heading](../README.md#the-admin-app) ![img](images/x.png)",
      "`[code](nowhere.md)` [web](https://example.com/x.md) [mail](mailto:a@b.test)",
      "```\n[fenced](nowhere.md)\n```",
    ].join("\n");
    const dead = deadLinks("/r/docs/api.md", page, (p) => files[p], (p) => p in files);
    expect(dead).toEqual([
      "orders.md: no such file",
      "docs/admin.md: no such file",
      "../README.md#the-admin-app: no heading #the-admin-app",
      "images/x.png: no such file",
    ]);
  });

  it("names headings as GitHub does", () => {
    expect([...anchors("# Checkout, orders and payments\n## `npm run docs` & more\n## Tests\n## Tests\n")]).toEqual([
      "checkout-orders-and-payments",
      "npm-run-docs--more",
      "tests",
      "tests-1",
    ]);
  });
});
