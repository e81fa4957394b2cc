import type { RenderedError } from "./app";
import { inlineStyle } from "./security-headers";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

export const BASE_CSS = inlineStyle(`
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#5b6470;--bg:#f7f7f8;--card:#fff;--line:#e3e5e8;--accent:#2f5bea;--on-accent:#fff}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#9aa3ad;--bg:#15171a;--card:#1d2024;--line:#2c3036;--accent:#7d9bff;--on-accent:#15171a}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:40rem;margin:8vh auto;padding:0 1.25rem}.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:2rem}
h1{font-size:1.5rem;margin:0 0 .5rem}p{margin:.5rem 0}.muted{color:var(--muted);font-size:.875rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}input{width:100%;padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;font:inherit;background:var(--bg);color:var(--fg)}
button{margin-top:1.25rem;padding:.65rem 1.1rem;border:0;border-radius:8px;background:var(--accent);color:var(--accent-text,var(--on-accent));font:inherit;font-weight:600;cursor:pointer}
`);

/** A small, self-contained error page for people (the JSON renderer serves APIs). */
export function errorPage(error: RenderedError, heading?: string): string {
  const title = heading ?? (error.status === 404 ? "Page not found" : error.status >= 500 ? "Something went wrong" : "Request refused");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${BASE_CSS}</style></head><body><main><div class="card">
<h1>${escapeHtml(title)}</h1><p>${escapeHtml(error.message)}</p>
<p><a href="/">Back to the start page</a></p>
<p class="muted">Error ${error.status} · ${escapeHtml(error.code)} · request ${escapeHtml(error.requestId)}</p>
</div></main></body></html>`;
}
