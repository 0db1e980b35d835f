/// <reference lib="dom" />
// The console: a navigation beside the page, pages chosen by the URL's hash (#/findings/…), each a
// module that renders into the main area and gives back a cleanup for its live streams.
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

const root = document.getElementById('console')!;
const ctx: Ctx = {
  role: root.dataset.role ?? 'viewer',
  email: root.dataset.email ?? '',
  tenant: root.dataset.tenant ?? '',
  canWrite: (root.dataset.role ?? 'viewer') !== 'viewer',
  go: (hash: string) => {
    if (location.hash === hash) void route();
    else location.hash = hash;
  },
};

const graphPage: Page = async (c, el, params) => (await import('./pages/graph')).graphPage(c, el, params);

const ROUTES: Array<[RegExp, string, Page]> = [
  [/^\/?$/, 'overview', overviewPage],
  [/^\/overview$/, 'overview', overviewPage],
  [/^\/findings$/, 'findings', findingsPage],
  [/^\/findings\/([^/]+)$/, 'findings', findingPage],
  [/^\/plans\/([^/]+)$/, 'findings', planPage],
  [/^\/ask(?:\/([^/]+))?$/, 'ask', askPage],
  [/^\/incidents$/, 'incidents', incidentsPage],
  [/^\/incidents\/([^/]+)$/, 'incidents', incidentPage],
  [/^\/graph$/, 'graph', graphPage],
  [/^\/report$/, 'report', reportPage],
  [/^\/settings$/, 'settings', settingsPage],
];

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
      const a = h('a', { href: `#/${id}`, 'data-nav': id }, label);
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

async function route() {
  const raw = location.hash.replace(/^#/, '');
  const [path, query = ''] = raw.split('?') as [string, string?];
  const params = new URLSearchParams(query);
  const match = ROUTES.find(([re]) => re.test(path));
  cleanup?.();
  cleanup = undefined;
  delete main.dataset.route;
  const mine = ++generation;
  for (const [id, a] of navLinks) {
    if (match && match[1] === id) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!match) {
    clear(
      main,
      h('h1', {}, 'Not found'),
      h('p', {}, 'No such page. '),
      h('a', { href: '#/overview' }, 'Overview'),
    );
    return;
  }
  const [re, , page] = match;
  const args = re.exec(path)!.slice(1);
  if (args[0]) params.set('id', decodeURIComponent(args[0]));
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
    main.dataset.page = match[1];
    main.dataset.route = raw || '/overview';
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

window.addEventListener('hashchange', () => void route());
void route();
