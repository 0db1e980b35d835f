/// <reference lib="dom" />
// Black-box checks of the console's addresses (issue 28), written from the contract alone: decisions.md
// "Console addresses" ("Console pages have real paths (`/findings`, `/findings/{id}`, `/incidents/{id}`,
// `/graph?resource=…`, …) served by the console, so a link can be shared and a reload keeps the page; the
// old `#/…` links redirect to them. An unknown path under the console is the console's own 'not found'
// page, not a JSON body."), the README ("Every page has its own address …"), docs/api.md ("The console's
// pages have addresses of their own …: each answers the console's HTML (200; signed out, a redirect to
// `/login?next=…`)", "POST /auth/login … 303: to `next`") and the issue. Headless Chromium against the
// real API and worker processes on the demo environment; pages are recognised by what a user sees.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginOverHttp, type BrowserLogin } from '@opsi/test-support';
import { launchChromium } from '../support/chromium';
import { startSplitServices, type SplitServices } from '../support/split';

const DEMO = { email: 'demo@example.com', password: 'demo-password' };

let svc: SplitServices;
let base = '';
let token = '';
let login: BrowserLogin;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const contexts: BrowserContext[] = [];
const pageErrors: string[] = [];
let page: Page;

let finding: { id: string; title: string };
let incident: { id: string; title: string };
let planId = '';
let sessionId = '';
let resource: { id: string; name: string };

const api = (method: string, path: string, body?: unknown) => call(base, method, path, { token, body });
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function newPage(): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  contexts.push(ctx);
  const p = await ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`));
  return p;
}

/** Signs in through the form the way a user does (the page is at /login, maybe with a `next`). */
async function submitSignIn(p: Page) {
  await p.getByLabel('Email').fill(DEMO.email);
  await p.getByLabel('Password').fill(DEMO.password);
  await Promise.all([
    p.waitForURL((u) => u.pathname !== '/login'),
    p.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

const nav = (p: Page, name: string) =>
  p.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();

/** The address as the address bar shows it, without the origin. */
const here = (p: Page) => {
  const u = new URL(p.url());
  return `${u.pathname}${u.search}${u.hash}`;
};

interface ConsoleAddress {
  path: () => string;
  /** What the user sees when the page is there. */
  shows: (p: Page) => Promise<void>;
}

const h1 = (p: Page, name: string | RegExp) =>
  p.getByRole('heading', { level: 1, name, exact: typeof name === 'string' }).waitFor({ timeout: 20_000 });

// Every page the README and docs/api.md name, with what shows it is that page.
const ADDRESSES = {
  overview: { path: () => '/overview', shows: (p) => h1(p, 'Overview') },
  findings: { path: () => '/findings', shows: (p) => h1(p, 'Findings') },
  'findings with filters': {
    path: () => '/findings?domain=finops&sort_by=savings',
    shows: async (p) => {
      await h1(p, 'Findings');
      const filter = p.getByRole('form', { name: 'Filter findings' });
      await expect.poll(() => filter.getByLabel('Domain').inputValue(), { timeout: 10_000 }).toBe('finops');
      await expect.poll(() => filter.getByLabel('Sort by').inputValue(), { timeout: 10_000 }).toBe('savings');
    },
  },
  'a finding': {
    path: () => `/findings/${finding.id}`,
    shows: async (p) => {
      await h1(p, finding.title);
      await p.getByRole('heading', { name: 'Evidence trail' }).waitFor({ timeout: 20_000 });
    },
  },
  'a resolution plan': { path: () => `/plans/${planId}`, shows: (p) => h1(p, 'Resolution plan') },
  ask: { path: () => '/ask', shows: (p) => h1(p, 'Ask the agent') },
  'an Ask session': {
    path: () => `/ask/${sessionId}`,
    shows: async (p) => {
      await h1(p, 'Ask the agent');
      await p
        .getByRole('navigation', { name: 'Sessions' })
        .getByRole('link', { name: /bb28 session/ })
        .first()
        .waitFor({ timeout: 20_000 });
    },
  },
  incidents: { path: () => '/incidents', shows: (p) => h1(p, 'Incidents') },
  'an incident': {
    path: () => `/incidents/${incident.id}`,
    shows: async (p) => {
      await h1(p, incident.title);
      await p
        .getByText(/timeline/i)
        .first()
        .waitFor({ timeout: 20_000 });
    },
  },
  'the graph on a resource': {
    path: () => `/graph?resource=${resource.id}`,
    shows: (p) =>
      p
        .getByRole('heading', { name: new RegExp(`Blast radius of ${escape(resource.name)}`) })
        .waitFor({ timeout: 20_000 }),
  },
  'morning report': { path: () => '/report', shows: (p) => h1(p, 'Morning report') },
  settings: { path: () => '/settings', shows: (p) => h1(p, 'Settings') },
} satisfies Record<string, ConsoleAddress>;

beforeAll(async () => {
  svc = await startSplitServices();
  base = svc.base;
  await svc.admin(['demo']);
  await svc.admin(['scan', '--tenant', 'demo', '--wait']);
  login = await loginOverHttp(base, DEMO.email, DEMO.password);
  const minted = await call(base, 'POST', '/api/v1/tokens', {
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
    body: { name: 'bb28-addresses', scope: 'read_write' },
  });
  expect(minted.status, minted.text).toBe(201);
  token = minted.body.token;

  const findings = (await api('GET', '/api/v1/pulse/findings?domain=finops&sort_by=savings')).body
    .findings as any[];
  expect(findings.length, 'the demo has finops findings').toBeGreaterThan(0);
  finding = { id: findings[0].id, title: findings[0].title };
  const plan = await api('POST', `/api/pulse/findings/${finding.id}/resolution-plan`);
  expect([200, 202], plan.text).toContain(plan.status);
  planId = plan.body.id;
  const inc = await api('POST', '/api/v1/incidents', { title: 'bb28: checkout latency', severity: 'SEV2' });
  expect(inc.status, inc.text).toBe(201);
  incident = { id: inc.body.id ?? inc.body.incident?.id, title: 'bb28: checkout latency' };
  const session = await api('POST', '/api/v1/sessions', { name: 'bb28 session' });
  expect(session.status, session.text).toBe(201);
  sessionId = session.body.id;
  const found = (await api('GET', '/api/v1/graph/search?q=prod-payments-db')).body.results as any[];
  const r = found.find((x) => x.name === 'prod-payments-db');
  expect(r, 'the demo has prod-payments-db').toBeTruthy();
  resource = { id: r.id, name: r.name };

  browser = await launchChromium();
  page = await newPage();
  await page.goto(`${base}/login`);
  await submitSignIn(page);
}, 300_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await svc?.stop();
});

describe('console addresses (issue 28), black-box', () => {
  // docs/api.md: "each answers the console's HTML (200; signed out, a redirect to `/login?next=…`)".
  it('every console address answers the console HTML with 200 to a signed-in browser', async () => {
    for (const [name, a] of Object.entries(ADDRESSES)) {
      const r = await call(base, 'GET', a.path(), {
        headers: { cookie: login.cookie, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      expect(r.status, `${name} ${a.path()}: ${r.text.slice(0, 200)}`).toBe(200);
      expect(r.headers.get('content-type') ?? '', name).toMatch(/^text\/html/);
    }
  });

  // Decisions: "so a link can be shared"; README: "Every page has its own address, so a link can be
  // shared or bookmarked"; issue: "`/findings` typed in the address bar answers a JSON 404".
  for (const [name, a] of Object.entries(ADDRESSES)) {
    it(`typed in the address bar, ${name} opens that page, and a reload keeps it`, async () => {
      const res = await page.goto(`${base}${a.path()}`);
      expect(res?.status(), `${a.path()}`).toBe(200);
      expect(res?.headers()['content-type'] ?? '').toMatch(/^text\/html/);
      await a.shows(page);
      expect(here(page)).toBe(a.path());
      // Decisions: "a reload keeps the page".
      await page.reload();
      await a.shows(page);
      expect(here(page)).toBe(a.path());
    });
  }

  // Decisions: "`/findings/{id}`"; README "a link can be shared or bookmarked": a bookmark opened in a
  // new window of the same signed-in browser.
  it("a finding's and an incident's pages open from a bookmark in a new tab", async () => {
    for (const [path, title] of [
      [`/findings/${finding.id}`, finding.title],
      [`/incidents/${incident.id}`, incident.title],
    ] as const) {
      const tab = await page.context().newPage();
      await tab.goto(`${base}${path}`);
      await h1(tab, title);
      expect(here(tab)).toBe(path);
      await tab.close();
    }
  });

  // README: "Back and forward move between pages."
  it("back and forward move between pages visited through the console's own navigation", async () => {
    await page.goto(`${base}/overview`);
    await h1(page, 'Overview');
    await nav(page, 'Findings');
    await h1(page, 'Findings');
    expect(new URL(page.url()).pathname).toBe('/findings');
    await nav(page, 'Incidents');
    await h1(page, 'Incidents');
    expect(new URL(page.url()).pathname).toBe('/incidents');
    await page.getByRole('link', { name: incident.title, exact: true }).first().click();
    await h1(page, incident.title);
    expect(new URL(page.url()).pathname).toBe(`/incidents/${incident.id}`);
    await nav(page, 'Graph');
    await h1(page, 'Graph');
    expect(new URL(page.url()).pathname).toBe('/graph');

    await page.goBack();
    await h1(page, incident.title);
    expect(new URL(page.url()).pathname).toBe(`/incidents/${incident.id}`);
    await page.goBack();
    await h1(page, 'Incidents');
    expect(new URL(page.url()).pathname).toBe('/incidents');
    await page.goBack();
    await h1(page, 'Findings');
    expect(new URL(page.url()).pathname).toBe('/findings');
    await page.goBack();
    await h1(page, 'Overview');
    expect(new URL(page.url()).pathname).toBe('/overview');

    await page.goForward();
    await h1(page, 'Findings');
    expect(new URL(page.url()).pathname).toBe('/findings');
    await page.goForward();
    await h1(page, 'Incidents');
    await page.goForward();
    await h1(page, incident.title);
    expect(new URL(page.url()).pathname).toBe(`/incidents/${incident.id}`);
    // and a reload there keeps the page reached by forward
    await page.reload();
    await h1(page, incident.title);
  });

  // Back from a finding opened by a click in the list returns to the list with its filters.
  it('back from a finding opened in the filtered list returns to the filtered list', async () => {
    await page.goto(`${base}/findings?domain=finops&sort_by=savings`);
    await h1(page, 'Findings');
    await page.getByRole('link', { name: finding.title, exact: true }).first().click();
    await h1(page, finding.title);
    expect(new URL(page.url()).pathname).toBe(`/findings/${finding.id}`);
    await page.goBack();
    await h1(page, 'Findings');
    expect(here(page)).toBe('/findings?domain=finops&sort_by=savings');
    await expect
      .poll(() => page.getByRole('form', { name: 'Filter findings' }).getByLabel('Domain').inputValue())
      .toBe('finops');
  });

  // Decisions: "the old `#/…` links redirect to them"; README: "Links of the older form
  // `/#/findings/{id}` still work: the console replaces them by their path."
  it('old #/… links land on the matching path and page', async () => {
    const cases: [string, string, (p: Page) => Promise<void>][] = [
      [`/#/findings/${finding.id}`, `/findings/${finding.id}`, ADDRESSES['a finding'].shows],
      [`/#/incidents/${incident.id}`, `/incidents/${incident.id}`, ADDRESSES['an incident'].shows],
      ['/#/findings', '/findings', ADDRESSES.findings.shows],
      ['/#/overview', '/overview', ADDRESSES.overview.shows],
      ['/#/report', '/report', ADDRESSES['morning report'].shows],
      [
        `/#/graph?resource=${resource.id}`,
        `/graph?resource=${resource.id}`,
        ADDRESSES['the graph on a resource'].shows,
      ],
    ];
    for (const [old, path, shows] of cases) {
      await page.goto(`${base}${old}`);
      await shows(page);
      await expect.poll(() => here(page), { timeout: 10_000 }).toBe(path);
      // the replaced address is the page's: a reload keeps it
      await page.reload();
      await shows(page);
      expect(here(page)).toBe(path);
    }
  });

  // Decisions: "An unknown path under the console is the console's own 'not found' page, not a JSON body";
  // README: "answered with status 404".
  it("an unknown console path shows the console's own Not found page (HTML, 404), not JSON", async () => {
    for (const path of ['/no-such-page-bb28', '/findings-archive/2026']) {
      const res = await page.goto(`${base}${path}`);
      expect(res?.status(), path).toBe(404);
      expect(res?.headers()['content-type'] ?? '', path).toMatch(/^text\/html/);
      await page
        .getByRole('heading', { name: /not found/i })
        .first()
        .waitFor({ timeout: 20_000 });
      // the console's own page: its navigation is there, and the body is not a JSON document
      await page.getByRole('navigation', { name: 'Console' }).waitFor();
      const text = (await page.locator('body').innerText()).trim();
      expect(text.startsWith('{'), text.slice(0, 100)).toBe(false);
      expect(here(page)).toBe(path);
      // and the navigation still works from there
      await nav(page, 'Findings');
      await h1(page, 'Findings');
    }
  });

  // README: "a client that does not ask for HTML, and every unknown path under those prefixes, still gets
  // the JSON `{detail}` 404"; api-v1.md Errors: "Standard error body: {detail: string}".
  it('an API client still gets a JSON {detail} 404 for unknown paths', async () => {
    const asks: [string, Record<string, string>, string][] = [
      ['/no-such-page-bb28', { accept: 'application/json' }, 'Accept: application/json'],
      ['/no-such-page-bb28', { cookie: login.cookie, accept: 'application/json' }, 'session, Accept: JSON'],
      ['/no-such-page-bb28', { authorization: `Bearer ${token}` }, 'bearer token'],
      ['/api/v1/no-such-bb28', { authorization: `Bearer ${token}` }, 'bearer token, /api/v1'],
      ['/api/v1/no-such-bb28', { authorization: `Bearer ${token}`, accept: 'text/html' }, '/api/v1, HTML'],
      ['/api/pulse/no-such-bb28', { cookie: login.cookie, accept: 'text/html' }, '/api/pulse, HTML'],
      ['/console/api/no-such-bb28', { cookie: login.cookie, accept: 'text/html' }, '/console/api, HTML'],
    ];
    for (const [path, headers, what] of asks) {
      const r = await call(base, 'GET', path, { headers });
      expect(r.status, `${what} ${path}: ${r.text.slice(0, 200)}`).toBe(404);
      expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/json/);
      expect(typeof r.body?.detail, `${what}: ${r.text.slice(0, 200)}`).toBe('string');
    }
    // in the signed-in browser too: an unknown API path is the JSON 404, not the console
    const res = await page.goto(`${base}/api/v1/no-such-bb28`);
    expect(res?.status()).toBe(404);
    expect(res?.headers()['content-type'] ?? '').toMatch(/^application\/json/);
    expect(typeof JSON.parse(await res!.text()).detail).toBe('string');
  });

  // docs/api.md: "signed out, a redirect to `/login?next=…`"; "A form post is answered with 303: to
  // `next`"; architecture.md: "Signed out, any of these redirects to `/login?next=…` like every page."
  it('signed out, a console address leads to sign-in and back to that address afterwards', async () => {
    for (const path of [`/incidents/${incident.id}`, '/findings?domain=finops&sort_by=savings']) {
      const plain = await call(base, 'GET', path, { headers: { accept: 'text/html' } });
      expect([302, 303, 307], `${path}: ${plain.status}`).toContain(plain.status);
      const to = new URL(plain.headers.get('location') ?? '', base);
      expect(to.pathname).toBe('/login');
      expect(to.searchParams.get('next')).toBe(path);

      const out = await newPage();
      await out.goto(`${base}${path}`);
      expect(new URL(out.url()).pathname).toBe('/login');
      await submitSignIn(out);
      await expect.poll(() => here(out), { timeout: 10_000 }).toBe(path);
      if (path.startsWith('/incidents/')) await ADDRESSES['an incident'].shows(out);
      else await ADDRESSES['findings with filters'].shows(out);
    }
  });

  it('no page threw an uncaught error on the way', () => {
    expect(pageErrors).toEqual([]);
  });
});
