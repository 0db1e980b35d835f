/// <reference lib="dom" />
// Console addresses (decisions.md, Wave 3): every console page has a real path; a reload keeps the
// page, back and forward move between pages, an unknown path is the console's own "not found" page,
// and an old `#/…` link lands on its path. Debian's headless Chromium against the real API and worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '@opsi/test-support';
import { signIn, startConsoleWorld, type ConsolePage, type ConsoleWorld } from './console-setup';

let world: ConsoleWorld | undefined;
let cp: ConsolePage;
const page = () => cp.page;
const rendered = (route: string) => page().locator(`#page[data-route="${route}"]`).waitFor();
const here = () => {
  const u = new URL(page().url());
  return u.pathname + u.search + u.hash;
};

beforeAll(async () => {
  world = await startConsoleWorld();
  cp = await signIn(world, world.member);
}, 180_000);

afterAll(async () => {
  await world?.close();
});

describe('console addresses', () => {
  it('every page has a path: opened by it, and a reload keeps the page', async () => {
    const w = world!;
    const finding = (await w.apiGet('/api/v1/pulse/findings')).findings[0];
    const incident = await call(w.base, 'POST', '/api/v1/incidents', {
      token: w.token,
      body: { title: 'Checkout latency', severity: 'SEV2' },
    });
    expect(incident.status).toBe(201);
    const session = await call(w.base, 'POST', '/api/v1/sessions', {
      token: w.token,
      body: { name: 'addresses' },
    });
    const resource = (await w.apiGet('/api/v1/graph/search?q=prod-payments-db')).results[0];
    for (const path of [
      '/overview',
      '/findings',
      '/findings?domain=finops&sort_by=savings',
      `/findings/${finding.id}`,
      '/ask',
      `/ask/${session.body.id}`,
      '/incidents',
      `/incidents/${incident.body.id}`,
      `/graph?resource=${resource.id}`,
      '/report',
      '/settings',
    ]) {
      const res = await page().goto(`${w.base}${path}`);
      expect(res?.status(), path).toBe(200);
      await rendered(path);
      await page().reload();
      await rendered(path);
      expect(here(), path).toBe(path);
    }
    expect(cp.problems).toEqual([]);
  });

  it('links change the path; back and forward move between the pages', async () => {
    const w = world!;
    await page().goto(`${w.base}/overview`);
    await rendered('/overview');
    await page().click('nav.side a[data-nav=findings]');
    await rendered('/findings');
    expect(here()).toBe('/findings');
    const first = page().locator('#page table a[href^="/findings/"]').first();
    const href = (await first.getAttribute('href'))!;
    await first.click();
    await rendered(href);
    expect(here()).toBe(href);
    await page().goBack();
    await rendered('/findings');
    await page().goBack();
    await rendered('/overview');
    expect(here()).toBe('/overview');
    await page().goForward();
    await rendered('/findings');
    await page().goForward();
    await rendered(href);
    // The in-page navigation was a history entry each time, not a reload: the page kept its document.
    expect(await page().evaluate(() => performance.getEntriesByType('navigation').length)).toBe(1);
  });

  it('an unknown path is the console’s own "not found" page (404), with its navigation', async () => {
    const w = world!;
    for (const path of ['/no-such-page', `/findings/a/b`, '/graphs?resource=x']) {
      const res = await page().goto(`${w.base}${path}`);
      expect(res?.status(), path).toBe(404);
      expect(res?.headers()['content-type'], path).toContain('text/html');
      await page().locator('#page[data-page="not-found"] h1').waitFor();
      expect(await page().locator('#page h1').textContent()).toBe('Not found');
      expect(await page().locator('nav.side a[data-nav=overview]').count()).toBe(1);
    }
    await page().click('#page a[href="/overview"]');
    await rendered('/overview');
  });

  it('an old #/ link lands on its path', async () => {
    const w = world!;
    const finding = (await w.apiGet('/api/v1/pulse/findings')).findings[0];
    for (const [old, path] of [
      [`/#/findings/${finding.id}`, `/findings/${finding.id}`],
      ['/#/findings?domain=security', '/findings?domain=security'],
      ['/#/incidents', '/incidents'],
      ['/#/overview', '/overview'],
    ]) {
      await page().goto(`${w.base}${old}`);
      await rendered(path!);
      expect(here(), old).toBe(path);
    }
    // …and one followed from inside the page does too.
    await page().evaluate(() => (location.hash = '#/report'));
    await rendered('/report');
    expect(here()).toBe('/report');
  });
});
