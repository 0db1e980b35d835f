/// <reference lib="dom" />
// Shared by the console's browser tests: the real API and worker in-process on a cloned database and
// real Redis, a tenant with the demo environment connected and scanned, and Debian's headless Chromium.
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { expect } from 'vitest';
import type { RunningApi } from '@opsi/api';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import {
  call,
  createTenantWithUser,
  createTestContext,
  mintTestToken,
  runAdmin,
  startTestApi,
  startTestWorker,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';

export const SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

export interface ConsoleWorld {
  t: TestContext;
  api: RunningApi;
  worker: Awaited<ReturnType<typeof startTestWorker>>;
  browser: Browser;
  member: TestMember;
  token: string;
  base: string;
  /** GET with the member's read_write token: what the console shows must equal it. */
  apiGet(path: string): Promise<Record<string, any>>;
  /** `npm run admin -- demo exec --tenant … "<command>"`, as the operator runs it. */
  demoExec(command: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleWorld(): Promise<ConsoleWorld> {
  const t = await createTestContext();
  const member = await createTenantWithUser(t, { tier: 'team' });
  await connectEnvironment(t.db, member.tenant.id, {
    kind: 'demo',
    seed: 42,
    size: 'small',
    epoch: '2026-11-01',
  });
  await runScan(t.db, (await requestScan(t.db, null, member.tenant.id, 'test')).id);
  const api = await startTestApi(t);
  // The built-in engine: the agent answers from the demo environment with its real tools.
  const worker = await startTestWorker(t, { AGENT_ENGINE: 'builtin' });
  const browser = await launchChromium();
  const token = (await mintTestToken(t, member, 'read_write')).token;
  const env = {
    DATABASE_URL: t.database.url,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: t.redisPrefix,
    NODE_ENV: 'test',
  };
  return {
    t,
    api,
    worker,
    browser,
    member,
    token,
    base: api.url,
    async apiGet(path) {
      const res = await call(api.url, 'GET', path, { token });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      return res.body;
    },
    async demoExec(command) {
      const applied = await runAdmin(['demo', 'exec', '--tenant', member.tenant.slug, command], env);
      expect(applied.code, applied.stderr).toBe(0);
    },
    async close() {
      await browser.close().catch((e: unknown) => console.error('browser close', e));
      await worker.close().catch((e: unknown) => console.error('worker close', e));
      await api.close().catch((e: unknown) => console.error('api close', e));
      await t.close().catch((e: unknown) => console.error('context close', e));
    },
  };
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors (a CSP violation is reported as a console error). */
  problems: string[];
}

/** A new browser context signed in through the login form, on the console at `/`. */
export async function signIn(world: ConsoleWorld, member: TestMember): Promise<ConsolePage> {
  const context = await world.browser.newContext({ viewport: { width: 1366, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.base });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${world.base}/`);
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.fill('input[name=email]', member.user.email);
  await page.fill('input[name=password]', member.password);
  await Promise.all([page.waitForURL(`${world.base}/`), page.click('form button[type=submit]')]);
  await page.locator('nav.side').waitFor();
  return { context, page, problems };
}

/**
 * Opens a console page by its address (`/findings/…`; an old `#/…` one is read as its path) as a link
 * within the console does (a history entry, no reload), and waits until it has rendered.
 */
export async function open(page: Page, address: string) {
  const path = address.replace(/^#/, '');
  await page.evaluate((to) => {
    history.pushState(null, '', to);
    dispatchEvent(new PopStateEvent('popstate'));
  }, path);
  await page.locator(`#page[data-route="${path}"]`).waitFor();
}

export async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}
