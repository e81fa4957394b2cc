import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import { BASE_CSS } from "#shared/http/html";
import { inlineStyle } from "#shared/http/security-headers";

const ADMIN_CSS = `
:root{--good:#1f7a45;--warn:#8a5a00;--bad:#b3382f}@media (prefers-color-scheme:dark){:root{--good:#5cc98a;--warn:#e0a84a;--bad:#ff8a80}}
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
form.inline{display:inline-flex;gap:.4rem;align-items:center;flex-wrap:wrap}form.inline input[type=number]{width:6rem}form.inline button,form.inline select{margin:0}
fieldset{border:1px solid var(--line);border-radius:8px;margin:1rem 0;padding:.5rem 1rem 1rem}textarea{width:100%;font:inherit;padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;background:var(--bg);color:var(--fg)}
.preview{line-height:1.6}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dd{margin:0}
button.secondary{background:transparent;color:var(--fg);border:1px solid var(--line)}
a{color:var(--accent)}a.card{display:block;color:inherit;text-decoration:none}a.card:hover{border-color:var(--accent)}
main.wide{max-width:64rem;margin:1.5rem auto}
header.bar{display:flex;flex-wrap:wrap;gap:.75rem 1.5rem;align-items:center;justify-content:space-between;max-width:64rem;margin:0 auto;padding:1rem 1.25rem;border-bottom:1px solid var(--line)}
header.bar nav{display:flex;gap:1rem;flex-wrap:wrap}header.bar a{color:var(--fg);text-decoration:none;font-weight:600}header.bar a:hover{color:var(--accent)}
header.bar form{display:inline}header.bar button{margin:0;padding:.35rem .75rem;background:transparent;color:var(--muted);border:1px solid var(--line)}
.brand{font-weight:700}.who{color:var(--muted);font-size:.875rem}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:12px;overflow:hidden}
th,td{text-align:left;padding:.6rem .8rem;border-bottom:1px solid var(--line);font-size:.9375rem}th{font-size:.8125rem;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.75rem;border:1px solid var(--line)}
.badge.active,.badge.published{border-color:var(--good);color:var(--good)}.badge.archived{color:var(--muted)}
.toolbar{display:flex;gap:.5rem;align-items:flex-end;margin:1rem 0}.toolbar input,.toolbar select{width:auto;flex:1}.toolbar button{margin:0}
select{padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;font:inherit;background:var(--bg);color:var(--fg)}
.pager{display:flex;justify-content:space-between;align-items:center;margin:1rem 0}.pager a{color:var(--accent);font-weight:600;text-decoration:none}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:1rem;margin:1rem 0}
.check{display:flex;gap:.6rem;align-items:flex-start;font-weight:400;margin:.75rem 0}.check input{width:auto;margin-top:.3rem}
.notice{padding:.75rem 1rem;border-radius:8px;border:1px solid var(--good);color:var(--good);margin:1rem 0}
.alert{padding:.75rem 1rem;border-radius:8px;border:1px solid var(--bad);color:var(--bad);margin:1rem 0}
.field-error{color:var(--bad);font-size:.875rem;margin:.25rem 0 0}input[aria-invalid=true]{border-color:var(--bad)}
ul.stores{list-style:none;padding:0}ul.stores li{margin:.5rem 0}ul.stores button{width:100%;text-align:left;margin:0;background:var(--card);color:var(--fg);border:1px solid var(--line)}
.badge.revoked{border-color:var(--bad);color:var(--bad)}.badge.expired{color:var(--muted)}
section,article.mail{margin:1.5rem 0}h2{font-size:1.125rem;margin:0 0 .5rem}.scroll{overflow-x:auto}
.mono,code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}.mono{font-size:.8125rem}
pre{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;overflow-x:auto;font-size:.8125rem;margin:.75rem 0}
fieldset{border:1px solid var(--line);border-radius:8px;margin:1rem 0;padding:.5rem 1rem 1rem}legend{font-weight:600;padding:0 .25rem}
table.areas{width:auto;min-width:16rem}table.areas td,table.areas th{padding:.35rem .8rem}table.areas input{width:auto;margin:0}
form.inline{display:inline;margin:0}button.small{margin:0;padding:.3rem .7rem;font-size:.8125rem}button.danger{background:#c8453b;color:#fff}
.secret{border:2px solid var(--accent)}.copy{display:flex;gap:.5rem;align-items:center}.copy input{flex:1;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}.copy button{margin:0}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.badge.approved{border-color:var(--good);color:var(--good)}.badge.rejected,.badge.failed{border-color:var(--bad);color:var(--bad)}
article.proposal{padding:1.25rem;margin:1rem 0}article.proposal h3{font-size:1rem;margin:0 0 .25rem}table.diff{margin:.75rem 0}
table.diff th[scope=row]{color:var(--fg);vertical-align:top}table.diff td{white-space:pre-wrap;overflow-wrap:anywhere;vertical-align:top}
@media (max-width:40rem){table.diff thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}table.diff tr,table.diff th,table.diff td{display:block}table.diff tr{border-bottom:1px solid var(--line);padding:.4rem 0}table.diff th,table.diff td{border-bottom:0;padding:.2rem .8rem}table.diff td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.8125rem}}
.linediff pre{white-space:pre-wrap;overflow-wrap:anywhere;padding:.4rem 0;margin:.25rem 0}.linediff .ln{display:block;padding:0 .75rem 0 2rem;text-indent:-1.5rem;text-decoration:none;color:inherit;min-height:1.5em}
.linediff .sign{display:inline-block;width:1.5rem;text-indent:0;font-weight:700;user-select:none}.linediff del.ln{background:rgba(200,69,59,.15)}.linediff ins.ln{background:rgba(46,157,91,.17)}
.linediff .gap,.linediff .where{color:var(--muted);font-size:.8125rem;margin:.5rem 0 0}.linediff details{margin:.5rem 0}.linediff summary{cursor:pointer;font-size:.875rem}
.badge.good{border-color:var(--good);color:var(--good)}.badge.wait{border-color:var(--warn);color:var(--warn)}.badge.bad{border-color:var(--bad);color:var(--bad)}.badge.off{color:var(--muted)}
.filters{display:flex;flex-wrap:wrap;gap:.5rem .75rem;align-items:flex-end;margin:1rem 0}.filters label{margin:0 0 .2rem;font-size:.8125rem;color:var(--muted)}.filters .wide{flex:1 1 16rem}
.filters input[type=date]{width:auto}.filters button{margin:0}
.card.compact{padding:1rem 1.25rem}address{font-style:normal}table.totals{width:auto;min-width:20rem}table.totals th{color:var(--fg);font-weight:400}
textarea{width:100%;padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;font:inherit;background:var(--bg);color:var(--fg)}textarea[aria-invalid=true]{border-color:var(--bad)}
form.action{padding:1rem 1.25rem}form.action button{margin-top:.75rem}ol.timeline{padding-left:1.25rem}ol.timeline li{margin:.25rem 0}
.decide{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.decide form.reject{display:flex;gap:.5rem;align-items:center}.decide input{width:auto;margin:0}
`;
/** Registered for the Content-Security-Policy (shared/http/security-headers.ts). */
const ADMIN_STYLE = inlineStyle(BASE_CSS + ADMIN_CSS);

export interface Chrome {
  storeName: string;
  roleLabel: string;
  email: string;
  csrf: string;
  /** Links the member's role can open; others are left out of the navigation. */
  canSee: {
    products: boolean;
    inventory: boolean;
    orders: boolean;
    customers: boolean;
    discounts: boolean;
    pages: boolean;
    links: boolean;
    marketing: boolean;
    team: boolean;
    settings: boolean;
  };
}

/** The shell of the signed-in admin: store, navigation, who is signed in, and sign out. */
export const AdminPage: FC<{ title: string; chrome: Chrome; children?: Child }> = ({ title, chrome, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{`${title} · ${chrome.storeName}`}</title>
        <style dangerouslySetInnerHTML={{ __html: ADMIN_STYLE }} />
      </head>
      <body>
        <header class="bar">
          <span class="brand">{chrome.storeName}</span>
          <nav aria-label="Main">
            <a href="/">Home</a>
            {chrome.canSee.products ? <a href="/products">Products</a> : null}
            {chrome.canSee.products ? <a href="/collections">Collections</a> : null}
            {chrome.canSee.inventory ? <a href="/inventory">Inventory</a> : null}
            {chrome.canSee.orders ? <a href="/orders">Orders</a> : null}
            {chrome.canSee.customers ? <a href="/customers">Customers</a> : null}
            {chrome.canSee.discounts ? <a href="/discounts">Discounts</a> : null}
            {chrome.canSee.pages ? <a href="/pages">Pages</a> : null}
            {chrome.canSee.pages ? <a href="/navigation">Navigation</a> : null}
            {chrome.canSee.links ? <a href="/links">Links</a> : null}
            {chrome.canSee.marketing ? <a href="/marketing">Marketing</a> : null}
            {chrome.canSee.orders ? <a href="/notifications">Notifications</a> : null}
            {chrome.canSee.team ? <a href="/team">Team</a> : null}
            {chrome.canSee.settings ? <a href="/settings">Settings</a> : null}
            <a href="/settings/api">MCP &amp; API</a>
            <a href="/assistant">Assistant</a>
            <a href="/ai/approvals">AI approvals</a>
            <a href="/select-store">Switch store</a>
          </nav>
          <span class="who">
            {chrome.email} · {chrome.roleLabel}{" "}
            <form method="post" action="/logout">
              <input type="hidden" name="csrf" value={chrome.csrf} />
              <button type="submit">Sign out</button>
            </form>
          </span>
        </header>
        <main class="wide">{children}</main>
      </body>
    </html>
  </>
);

/** A page outside a store (sign-in, store picker, invitations). */
export const PlainPage: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{title}</title>
        <style dangerouslySetInnerHTML={{ __html: ADMIN_STYLE }} />
      </head>
      <body>
        <main>{children}</main>
      </body>
    </html>
  </>
);

export function formatMoney(minor: number | null, currency: string): string {
  if (minor === null) return "—";
  return new Intl.NumberFormat("en-IN", { style: "currency", currency }).format(minor / 100);
}
