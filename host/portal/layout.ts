/**
 * @module host/portal/layout
 * The page shell every portal page shares: landmarks (header, nav, main, footer), a skip link,
 * the signed-in user and a sign-out form, and one small same-origin stylesheet. No script at all: a
 * page that must move on by itself (to an OAuth provider) does so with a meta refresh.
 */
import type { User } from '../storage/users.js';
import { html, type SafeHtml } from './html.js';

export type Section = 'integrations' | 'activity' | 'keys';

export interface PageOptions {
  title: string;
  body: SafeHtml;
  user?: User;
  csrf?: string;
  active?: Section;
  /** go on to this URL at once (a meta refresh); the body must also link to it for browsers that do not refresh */
  continueTo?: string;
}

const NAV: { id: Section; href: string; label: string }[] = [
  { id: 'integrations', href: '/integrations', label: 'Integrations' },
  { id: 'activity', href: '/activity', label: 'Activity' },
  { id: 'keys', href: '/keys', label: 'API keys' },
];

export function renderPage(o: PageOptions): string {
  const nav = o.user
    ? html`<nav aria-label="Main"><ul>${NAV.map(
        (n) => html`<li><a href="${n.href}"${n.id === o.active ? html` aria-current="page"` : ''}>${n.label}</a></li>`,
      )}</ul>
      <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${o.csrf ?? ''}">
      <span class="who">Signed in as ${o.user.email}</span> <button type="submit">Sign out</button></form></nav>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · Workbench</title><link rel="stylesheet" href="/portal.css">${o.continueTo ? html`<meta http-equiv="refresh" content="0; url=${o.continueTo}">` : ''}</head>
<body><a class="skip" href="#main">Skip to content</a>
<header><p class="brand"><a href="/">Workbench</a></p>${nav}</header>
<main id="main" tabindex="-1"><h1>${o.title}</h1>${o.body}</main>
<footer><p>Workbench: your integrations for AI agents.</p></footer></body></html>`.value;
}

export const PORTAL_CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--line:#d0d7de;--accent:#0b57d0;--ok:#116329;--bad:#a40e26;--warn:#7d4e00}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between;padding:.75rem 1.5rem;border-bottom:1px solid var(--line)}
header ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0}header nav{display:flex;gap:1.5rem;align-items:center;flex-wrap:wrap}
.brand{margin:0;font-weight:700}.brand a{color:inherit;text-decoration:none}
a{color:var(--accent)}a[aria-current=page]{font-weight:700}
main{max-width:72rem;margin:0 auto;padding:1.5rem}footer{color:var(--muted);padding:1rem 1.5rem;border-top:1px solid var(--line);font-size:.875rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.5rem;border-bottom:1px solid var(--line);vertical-align:top}
label{display:block;font-weight:600;margin-top:1rem}input,select{font:inherit;padding:.4rem;min-width:18rem;max-width:100%}
button{font:inherit;padding:.4rem 1rem;cursor:pointer}.inline{display:inline}
a.button{display:inline-block;padding:.5rem 1rem;border:1px solid var(--accent);border-radius:.25rem;text-decoration:none;font-weight:600}
.hint{color:var(--muted);font-weight:400;font-size:.875rem;margin:.25rem 0}.error{color:var(--bad)}
.ok{color:var(--ok)}.warn{color:var(--warn)}.notice{border:1px solid var(--line);padding:1rem;border-radius:.25rem}
.secret{font-family:ui-monospace,monospace;font-size:1rem;padding:.5rem;background:#f6f8fa;word-break:break-all}
.filters{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-end}.filters label{margin-top:0}.filters input,.filters select{min-width:10rem}
`;
