/// <reference lib="dom" />
// The page functions passed to page.evaluate run in Chromium: they need the DOM types.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApi } from '@opsi/api';
import {
  call,
  createTenantWithUser,
  createTestContext,
  startTestApi,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';

// The server-rendered sign-in and token settings pages, driven in Debian's headless Chromium against the
// real API, a cloned test database and real Redis.

const TOKEN = /^opsi_[A-Za-z0-9_-]{43}$/;
const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const SCREENSHOT = `${RESULTS_DIR}settings-tokens.png`;

describe('settings/tokens page in a real browser', () => {
  let t: TestContext | undefined;
  let api: RunningApi | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let member: TestMember;
  let base: string;
  /** Console errors and uncaught page errors (a CSP violation is reported as a console error). */
  const problems: string[] = [];
  /** The secret minted in the browser, shared by the steps that follow. */
  let secret = '';
  /** confirm() prompts the page raised; each is accepted. */
  const dialogs: string[] = [];

  const path = () => new URL(page.url()).pathname;
  const row = (name: string) => page.locator('#tokens tbody tr', { hasText: name });

  async function signIn(password: string) {
    await page.fill('input[name=email]', member.user.email);
    await page.fill('input[name=password]', password);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
  }

  async function mint(name: string, scope: 'read' | 'read_write', days: string): Promise<string> {
    await page.fill('#mint input[name=name]', name);
    await page.selectOption('#mint select[name=scope]', scope);
    await page.selectOption('#mint select[name=expires_in_days]', days);
    await page.click('#mint button[type=submit]');
    await expect.poll(() => page.locator('#secret').textContent()).toMatch(TOKEN);
    await row(name).waitFor();
    return (await page.locator('#secret').textContent())!;
  }

  beforeAll(async () => {
    t = await createTestContext();
    api = await startTestApi(t);
    base = api.url;
    member = await createTenantWithUser(t);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()} @ ${m.location().url}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void d.accept();
    });
  });

  afterAll(async () => {
    // Each step runs even if an earlier one failed, so nothing outlives the file.
    await browser?.close().catch((e: unknown) => console.error('browser close', e));
    await api?.close().catch((e: unknown) => console.error('api close', e));
    await t?.close().catch((e: unknown) => console.error('context close', e));
  });

  it('redirects to /login without a session, rejects a wrong password, signs in with the right one', async () => {
    const res = await page.goto(`${base}/settings/tokens`);
    expect(res?.status()).toBe(200);
    expect(path()).toBe('/login');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toBe('');

    await signIn('not-the-password');
    expect(path()).toBe('/login');
    expect(await page.locator('[role=alert]').textContent()).toBe('Wrong email or password.');

    await signIn(member.password);
    expect(path()).toBe('/settings/tokens');
    await expect(page.title()).resolves.toBe('API tokens · opsi');
    expect(await page.locator('.who').textContent()).toContain(member.user.email);
    expect(await page.locator('#tokens .empty').textContent()).toContain('No tokens yet');
    expect(await page.locator('#secret-panel').isHidden()).toBe(true);
  });

  it('mints a read_write token, shows its secret once with a working Copy button, and lists it', async () => {
    secret = await mint('ci-pipeline', 'read_write', '90');
    expect(secret).toMatch(TOKEN);
    expect(await page.locator('#secret-panel').isVisible()).toBe(true);
    expect(await page.locator('#mint-error').textContent()).toBe('');
    // The form is reset for the next token.
    expect(await page.inputValue('#mint input[name=name]')).toBe('');

    const copy = page.locator('#copy');
    expect(await copy.textContent()).toBe('Copy');
    await copy.click();
    await expect.poll(() => page.locator('#copied').textContent()).toBe('Copied.');
    const clipboard = await page.evaluate(() => navigator.clipboard.readText()).catch(() => undefined);
    if (clipboard !== undefined) expect(clipboard).toBe(secret);

    const r = row('ci-pipeline');
    const cells = await r.locator('td').allTextContents();
    expect(cells[1]).toBe('read_write');
    expect(cells[2]).toBe(`${secret.slice(0, 13)}…`);
    expect(cells[4]).not.toBe('never');
    expect(await r.locator('.pill').textContent()).toBe('active');
    expect(await r.locator('button[data-revoke]').textContent()).toBe('Revoke');
    // The table shows the hint only; the secret is in the one-time panel and nowhere else.
    expect(await page.locator('#tokens').innerHTML()).not.toContain(secret);
    expect((await page.content()).split(secret).length - 1).toBe(1);
  });

  it('never shows the secret again after a reload; the row stays listed', async () => {
    await page.reload();
    expect(path()).toBe('/settings/tokens');
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#secret-panel').isHidden()).toBe(true);
    expect(await page.locator('#secret').textContent()).toBe('');
    const r = row('ci-pipeline');
    expect(await r.count()).toBe(1);
    expect(await r.locator('.pill').textContent()).toBe('active');
    expect(await r.locator('td').nth(2).textContent()).toBe(`${secret.slice(0, 13)}…`);
  });

  it('the minted token works against the API', async () => {
    const me = await call(base, 'GET', '/api/v1/me', { token: secret });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(member.user.email);
    expect(me.body.tenant.slug).toBe(member.tenant.slug);
    expect(me.body.token.scope).toBe('read_write');
    const days = (Date.parse(me.body.token.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
  });

  it('revokes the token from the page; the API then refuses it', async () => {
    const r = row('ci-pipeline');
    await r.locator('button[data-revoke]').click(); // confirm() is accepted by the dialog handler
    await expect.poll(() => r.locator('.pill').textContent()).toBe('revoked');
    expect(dialogs).toEqual([expect.stringMatching(/^confirm: Revoke token "ci-pipeline"\?/)]);
    expect(await r.locator('button[data-revoke]').count()).toBe(0);
    expect(await page.locator('#mint-error').textContent()).toBe('');

    const me = await call(base, 'GET', '/api/v1/me', { token: secret });
    expect(me.status).toBe(401);

    // Still revoked when the page is loaded afresh.
    await page.reload();
    expect(await row('ci-pipeline').locator('.pill').textContent()).toBe('revoked');
  });

  it('looks clean with a freshly minted secret visible (screenshot)', async () => {
    const fresh = await mint('release-bot', 'read', '7');
    expect(await page.locator('#secret-panel').isVisible()).toBe(true);
    await mkdir(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Layout sanity: nothing overflows the page horizontally, the secret fits its box, CSS applied.
    const layout = await page.evaluate(() => {
      const secretEl = document.getElementById('secret')!;
      const panel = document.getElementById('secret-panel')!;
      return {
        pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        secretOverflow: secretEl.scrollWidth - secretEl.clientWidth,
        secretRight: secretEl.getBoundingClientRect().right,
        panelRight: panel.getBoundingClientRect().right,
        bodyFont: getComputedStyle(document.body).fontFamily,
        cardRadius: getComputedStyle(panel).borderTopLeftRadius,
      };
    });
    expect(layout.pageOverflow).toBe(0);
    expect(layout.secretOverflow).toBe(0);
    expect(layout.secretRight).toBeLessThanOrEqual(layout.panelRight);
    expect(layout.bodyFont).toContain('system-ui');
    expect(layout.cardRadius).toBe('10px');

    // On a phone-sized viewport the table scrolls inside its card instead of widening the page.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const narrow = await page.evaluate(() => ({
        pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        tableScrolls: getComputedStyle(document.getElementById('tokens')!).overflowX === 'auto',
      }));
      expect(narrow).toEqual({ pageOverflow: 0, tableScrolls: true });
      await page.screenshot({ path: `${RESULTS_DIR}settings-tokens-narrow.png`, fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }

    // Done hides the panel and forgets the secret.
    await page.click('#dismiss');
    expect(await page.locator('#secret-panel').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(fresh);
  });

  it('signs out to /login; the settings page then redirects to /login again', async () => {
    await Promise.all([page.waitForURL('**/login'), page.click('#logout')]);
    expect(path()).toBe('/login');
    await page.goto(`${base}/settings/tokens`);
    expect(path()).toBe('/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/tokens');
  });

  it('raised no console errors or page errors (CSP: script-src and style-src self)', async () => {
    expect(problems).toEqual([]);

    // Control: the policy is in force, and a violation would have shown up as a console error.
    const res = await page.goto(`${base}/login`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'; style-src 'self'");
    const control = await context.newPage();
    const violations: string[] = [];
    control.on('console', (m) => {
      if (m.type() === 'error') violations.push(m.text());
    });
    try {
      await control.goto(`${base}/login`);
      await control.evaluate(() => {
        const style = document.createElement('style');
        style.textContent = 'body { background: red; }';
        document.head.append(style);
      });
      await expect.poll(() => violations.join('\n')).toContain('Content Security Policy');
    } finally {
      await control.close();
    }
  });
});
