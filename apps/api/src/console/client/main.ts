/// <reference lib="dom" />
// The console: a navigation beside the page, pages chosen by the URL's path (/findings/…, the table in
// ../paths.ts, which the server reads too), each a module that renders into the main area and gives
// back a cleanup for its live streams. Links within the console change the path with the History API
// (so back and forward work and a reload keeps the page); old `#/…` links are replaced by their path.
import './console.css';
import { ApiError } from './api';
import { clear, h } from './dom';
import type { Ctx, Page } from './ctx';
import { overviewPage } from './pages/overview';
import { findingPage, findingsPage } from './pages/findings';
import { planPage } from './pages/plan';
import { askPage } from './pages/ask';
import { incidentPage, incidentsPage } from './pages/incidents';
import { reportPage } from './pages/report';
import { settingsPage } from './pages/settings';
import { matchConsolePath, pathOfOldHash, type ConsolePageName } from '../paths';

const root = document.getElementById('console')!;
const ctx: Ctx = {
  role: root.dataset.role ?? 'viewer',
  email: root.dataset.email ?? '',
  tenant: root.dataset.tenant ?? '',
  canWrite: (root.dataset.role ?? 'viewer') !== 'viewer',
  go: (to: string) => navigate(to),
};

const graphPage: Page = async (c, el, params) => (await import('./pages/graph')).graphPage(c, el, params);

const PAGES: Record<ConsolePageName, Page> = {
  overview: overviewPage,
  findings: findingsPage,
  finding: findingPage,
  plan: planPage,
  ask: askPage,
  incidents: incidentsPage,
  incident: incidentPage,
  graph: graphPage,
  report: reportPage,
  settings: settingsPage,
};

const NAV: Array<[string, string]> = [
  ['overview', 'Overview'],
  ['findings', 'Findings'],
  ['ask', 'Ask'],
  ['incidents', 'Incidents'],
  ['graph', 'Graph'],
  ['report', 'Morning report'],
  ['settings', 'Settings'],
];

const navLinks = new Map<string, HTMLAnchorElement>();
const nav = h(
  'nav',
  { class: 'side', 'aria-label': 'Console' },
  h(
    'ul',
    {},
    NAV.map(([id, label]) => {
      const a = h('a', { href: `/${id}`, 'data-nav': id }, label);
      navLinks.set(id, a);
      return h('li', {}, a);
    }),
  ),
  ctx.canWrite ? null : h('p', { class: 'note', 'data-readonly': '' }, 'Read-only: your role is viewer.'),
);
const main = h('div', { class: 'page', id: 'page', tabindex: '-1' });
clear(root, h('div', { class: 'console' }, nav, main));

let cleanup: (() => void) | void;
let generation = 0;

/** Goes to a console address (a path, or an old `#/…` one): a new history entry, then its page. */
function navigate(to: string, replace = false) {
  const target = pathOfOldHash(to) ?? to;
  if (target === location.pathname + location.search) replace = true;
  if (replace) history.replaceState(null, '', target);
  else history.pushState(null, '', target);
  void route();
}

async function route() {
  const path = location.pathname;
  const raw = path + location.search;
  const params = new URLSearchParams(location.search);
  const match = matchConsolePath(path);
  cleanup?.();
  cleanup = undefined;
  delete main.dataset.route;
  delete main.dataset.page;
  const mine = ++generation;
  for (const [id, a] of navLinks) {
    if (match && match.nav === id) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!match) {
    document.title = 'Not found · Console';
    clear(
      main,
      h('h1', {}, 'Not found'),
      h('p', {}, `No console page at ${path}. `),
      h('a', { href: '/overview' }, 'Overview'),
    );
    main.dataset.page = 'not-found';
    main.dataset.route = raw;
    return;
  }
  const page = PAGES[match.page];
  if (match.id) params.set('id', decodeURIComponent(match.id));
  clear(main, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  const el = h('div', {});
  try {
    const done = await page(ctx, el, params);
    if (mine !== generation) {
      done?.();
      return;
    }
    cleanup = done;
    clear(main, el);
    main.dataset.page = match.nav;
    main.dataset.route = raw === '/' ? '/overview' : raw;
  } catch (e) {
    if (mine !== generation) return;
    clear(main, errorBox(e));
    main.dataset.route = raw;
  }
}

export function errorBox(e: unknown): HTMLElement {
  const detail = e instanceof ApiError ? e.detail : e instanceof Error ? e.message : String(e);
  return h('p', { class: 'error', role: 'alert' }, detail);
}

// Links to console addresses stay in the page: a plain left click on a same-origin link whose path is
// a console address (or an old `#/…` one) goes there through the History API.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || (a.target && a.target !== '_self') || a.hasAttribute('download')) return;
  const href = a.getAttribute('href') ?? '';
  if (pathOfOldHash(href)) {
    e.preventDefault();
    navigate(href);
    return;
  }
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !matchConsolePath(url.pathname)) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', () => void route());
// An old `#/…` address (a bookmark, a shared link) is replaced by its path, then shown.
window.addEventListener('hashchange', () => {
  const old = pathOfOldHash(location.hash);
  if (old) navigate(old, true);
});
const old = pathOfOldHash(location.hash);
if (old) history.replaceState(null, '', old);
void route();
