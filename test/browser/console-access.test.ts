/// <reference lib="dom" />
// Who may do what from the console: a viewer sees every page but no control that would change anything
// (and the service refuses the change anyway); every change needs the session's X-CSRF-Token; the
// console's routes take a browser session, not a token; another tenant's resources are not found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, call, createTenantWithUser, loginOverHttp, type TestMember } from '@opsi/test-support';
import {
  open,
  screenshot,
  signIn,
  startConsoleWorld,
  type ConsolePage,
  type ConsoleWorld,
} from './console-setup';

let world: ConsoleWorld | undefined;
let viewer: TestMember;
let cp: ConsolePage;
let findingId: string;
const page = () => cp.page;

beforeAll(async () => {
  world = await startConsoleWorld();
  viewer = await addUser(world.t, world.member, 'viewer');
  findingId = (await world.apiGet('/api/v1/pulse/findings?domain=security')).findings[0].id;
  cp = await signIn(world, viewer);
}, 180_000);

afterAll(async () => {
  await world?.close();
});

const WRITE_CONTROLS =
  '[data-action], [data-status-of], [data-step-action], [data-rerun-disabled], form.ask, form[aria-label="Open an incident"]';

describe('a viewer in the console', () => {
  it('reads every page and finds no control that changes anything', async () => {
    await page().locator('#page[data-route="/overview"]').waitFor();
    expect(await page().locator('[data-readonly]').textContent()).toContain('Read-only');
    const pages = [
      '#/overview',
      '#/findings',
      `#/findings/${findingId}`,
      '#/ask',
      '#/incidents',
      '#/graph?q=db',
      '#/report',
      '#/settings',
    ];
    for (const hash of pages) {
      await open(page(), hash);
      expect(await page().locator('#page [role=alert]:not(:empty)').count(), hash).toBe(0);
      expect(await page().locator(WRITE_CONTROLS).count(), hash).toBe(0);
    }
    // The viewer's findings table shows statuses as text.
    await open(page(), '#/findings');
    expect(await page().locator('[data-table=findings] tbody tr').count()).toBeGreaterThan(0);
    await screenshot(page(), 'console-viewer-findings');
    // Reading stays possible: the audit chain is verified from the settings page.
    await open(page(), '#/settings');
    await page().click('[data-check=verify-audit]');
    await page().locator('[data-audit-verify][data-valid=true]').waitFor();
    expect(cp.problems).toEqual([]);
  });

  it('is refused the changes the console would make (403), with the CSRF header', async () => {
    const w = world!;
    const s = await loginOverHttp(w.base, viewer.user.email, viewer.password);
    const as = { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } };
    const attempts = [
      ['PATCH', `/console/api/pulse/findings/${findingId}/status`, { status: 'dismissed' }],
      ['POST', `/api/pulse/findings/${findingId}/resolution-plan`, undefined],
      ['POST', `/api/pulse/findings/${findingId}/reinvestigate`, undefined],
      ['POST', '/console/api/runs', { prompt: 'hello' }],
      ['POST', '/console/api/incidents', { title: 'x' }],
      ['POST', '/console/api/reports/morning', undefined],
    ] as const;
    for (const [method, path, body] of attempts) {
      const res = await call(w.base, method, path, { ...as, body });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
      expect(res.body.detail).toMatch(/viewer/);
    }
    expect((await w.apiGet(`/api/v1/pulse/findings/${findingId}`)).status).toBe('open');
    // Reading is allowed.
    expect((await call(w.base, 'GET', '/console/api/pulse/overview', as)).status).toBe(200);
  });

  it('signs out from the console; the console then asks to sign in again', async () => {
    await Promise.all([page().waitForURL(/\/login/), page().click('#logout')]);
    await page().goto(`${world!.base}/#/findings`);
    expect(new URL(page().url()).pathname).toBe('/login');
    expect(cp.problems).toEqual([]);
  });
});

describe('a tenant with nothing connected yet', () => {
  it('sees empty states that say what to do', async () => {
    const w = world!;
    const fresh = await createTenantWithUser(w.t);
    const c = await signIn(w, fresh);
    await c.page.locator('#page[data-route="/overview"]').waitFor();
    const overview = await c.page.locator('#page .empty').textContent();
    expect(overview).toContain('No environment connected yet');
    expect(overview).toContain(`env connect --tenant ${fresh.tenant.slug} --demo`);
    await screenshot(c.page, 'console-empty-overview');
    for (const [hash, text] of [
      ['#/findings', 'No findings yet'],
      ['#/incidents', 'No incidents'],
      ['#/report', 'No morning report yet'],
      ['#/ask', 'Ask about findings'],
      ['#/graph', 'The graph is empty: connect an environment'],
    ] as const) {
      await open(c.page, hash);
      expect(await c.page.locator('#page .empty').first().textContent(), hash).toContain(text);
    }
    expect(c.problems).toEqual([]);
    await c.context.close();
  });
});

describe('the console routes', () => {
  it('need the session’s X-CSRF-Token for every change: missing or wrong is 403 and changes nothing', async () => {
    const w = world!;
    const s = await loginOverHttp(w.base, w.member.user.email, w.member.password);
    for (const csrf of [undefined, 'not-the-token']) {
      const headers: Record<string, string> = { cookie: s.cookie, ...(csrf ? { 'x-csrf-token': csrf } : {}) };
      for (const [method, path, body] of [
        ['PATCH', `/console/api/pulse/findings/${findingId}/status`, { status: 'dismissed' }],
        ['POST', '/console/api/runs', { prompt: 'hello' }],
        ['POST', '/console/api/incidents', { title: 'x' }],
        ['POST', `/api/pulse/findings/${findingId}/resolution-plan`, undefined],
      ] as const) {
        const res = await call(w.base, method, path, { headers, body });
        expect(res.status, `${method} ${path} csrf=${csrf}`).toBe(403);
        expect(res.body.detail).toMatch(/CSRF/);
      }
    }
    expect((await w.apiGet(`/api/v1/pulse/findings/${findingId}`)).status).toBe('open');
    expect((await w.apiGet('/api/v1/incidents')).incidents).toEqual([]);
    const ok = await call(w.base, 'POST', '/console/api/incidents', {
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
      body: { title: 'Queue backlog' },
    });
    expect(ok.status).toBe(201);
  });

  it('take a browser session, not a token (403), and nothing without one (401; the page redirects)', async () => {
    const w = world!;
    expect((await call(w.base, 'GET', '/console/api/pulse/overview', { token: w.token })).status).toBe(403);
    expect((await call(w.base, 'GET', '/console/api/pulse/overview')).status).toBe(401);
    const root = await call(w.base, 'GET', '/');
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/login?next=%2F');
  });

  it('answer 404 for another tenant’s resources', async () => {
    const w = world!;
    const other = await createTenantWithUser(w.t);
    const s = await loginOverHttp(w.base, other.user.email, other.password);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const incident = (await w.apiGet('/api/v1/incidents')).incidents[0];
    expect((await call(w.base, 'GET', `/console/api/incidents/${incident.id}`, { headers })).status).toBe(
      404,
    );
    expect((await call(w.base, 'GET', `/api/pulse/findings/${findingId}`, { headers })).status).toBe(404);
    expect(
      (
        await call(w.base, 'PATCH', `/console/api/pulse/findings/${findingId}/status`, {
          headers,
          body: { status: 'dismissed' },
        })
      ).status,
    ).toBe(404);
    const overview = await call(w.base, 'GET', '/console/api/pulse/overview', { headers });
    expect(overview.body.open_findings).toBe(0);
  });
});
