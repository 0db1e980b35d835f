/// <reference lib="dom" />
// The page functions passed to page.evaluate run in Chromium: they need the DOM types.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApi } from '@opsi/api';
import {
  call,
  createTenantWithUser,
  createTestContext,
  runCli,
  startCli,
  startTestApi,
  type CliRun,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';

// `opsi login` end to end: the real command waits on its loopback listener, Debian's headless Chromium
// signs in on the real API, approves the token, and is sent to the listener with the token and the
// state. Then the API reference page at /docs, rendered in the same browser.

const TOKEN = /^opsi_[A-Za-z0-9_-]{43}$/;

let t: TestContext | undefined;
let api: RunningApi | undefined;
let browser: Browser | undefined;
let page: Page;
let member: TestMember;
let base: string;
let configDir = '';
const problems: string[] = [];

const cliEnv = () => ({ OPSI_CONFIG_DIR: configDir, OPSI_URL: base });

/** Waits until the command printed the sign-in address; answers it and the listener's port. */
async function signInAddress(
  cli: CliRun,
): Promise<{ url: string; port: number; state: string; challenge: string }> {
  await expect.poll(() => cli.stderr(), { timeout: 30_000 }).toMatch(/\/cli\/login\?\S+/);
  const url = /(http:\/\/\S+\/cli\/login\?\S+)/.exec(cli.stderr())![1]!;
  const parsed = new URL(url);
  return {
    url,
    port: Number(parsed.searchParams.get('port')),
    state: parsed.searchParams.get('state')!,
    challenge: parsed.searchParams.get('code_challenge')!,
  };
}

/** Every address the browser went to, to show that no token was ever in one. */
const visited: string[] = [];

beforeAll(async () => {
  t = await createTestContext();
  api = await startTestApi(t);
  base = api.url;
  member = await createTenantWithUser(t);
  configDir = await mkdtemp(join(tmpdir(), 'opsi-cli-'));
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('framenavigated', (f) => visited.push(f.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
});

afterAll(async () => {
  await browser?.close().catch((e: unknown) => console.error('browser close', e));
  await api?.close().catch((e: unknown) => console.error('api close', e));
  await t?.close().catch((e: unknown) => console.error('context close', e));
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe('opsi login in a real browser', () => {
  let token = '';
  let loginState = '';
  let loginPort = 0;
  let loginChallenge = '';

  it('signs in, approves, and the command receives and stores a read_write token with mode 0600', async () => {
    const cli = startCli(['login', '--no-browser', '--name', 'laptop'], cliEnv());
    try {
      const { url, port, state, challenge } = await signInAddress(cli);
      loginState = state;
      loginPort = port;
      loginChallenge = challenge;
      expect(url.startsWith(`${base}/cli/login?`)).toBe(true);
      expect(state.length).toBeGreaterThanOrEqual(32);
      // PKCE: the S256 challenge is sent; the verifier stays in the command.
      expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');

      // A redirect with a wrong state is refused, and the command keeps waiting for the right one.
      const wrong = await fetch(
        `http://127.0.0.1:${port}/callback?state=${'x'.repeat(32)}&code=${'a'.repeat(43)}`,
      );
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toContain('wrong or already used state');
      expect(cli.child.exitCode).toBeNull();

      await page.goto(url);
      expect(new URL(page.url()).pathname).toBe('/login');
      await page.fill('input[name=email]', member.user.email);
      await page.fill('input[name=password]', member.password);
      await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
      expect(new URL(page.url()).pathname).toBe('/cli/login');
      await expect(page.title()).resolves.toBe('Authorize the opsi CLI · opsi');
      expect(await page.inputValue('#cli-approve input[name=name]')).toBe('laptop');
      expect(await page.locator('.scope').textContent()).toContain('read_write');
      await page.fill('#cli-approve input[name=name]', 'laptop (approved)');
      await Promise.all([page.waitForURL(`http://127.0.0.1:${port}/callback?**`), page.click('#approve')]);
      expect(await page.locator('h1').textContent()).toBe('Signed in');
      // The redirect carried a one-time code and the state, not the token.
      const landed = new URL(page.url());
      expect([...landed.searchParams.keys()].sort()).toEqual(['code', 'state']);
      expect(landed.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const result = await cli.done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`Logged in to ${base} as ${member.user.email}`);
      expect(result.stdout).toContain('scope read_write');
    } finally {
      cli.child.kill();
    }
    const file = join(configDir, 'config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(file, 'utf8'));
    const login = stored.logins[base];
    expect(login).toMatchObject({ user: member.user.email, tenant: member.tenant.slug });
    token = login.token;
    expect(token).toMatch(TOKEN);
    // No address the browser visited (history, sync) carried it.
    expect(visited.length).toBeGreaterThan(2);
    for (const address of visited) expect(address).not.toContain(token);
  });

  it('the stored token works, for the command and for the API', async () => {
    const me = await call(base, 'GET', '/api/v1/me', { token });
    expect(me.status).toBe(200);
    expect(me.body.token.scope).toBe('read_write');
    const tokens = await call(base, 'GET', '/api/v1/tokens', { token });
    expect(tokens.body.tokens.map((x: { name: string }) => x.name)).toEqual(['laptop (approved)']);

    const whoami = await runCli(['whoami', '--json'], cliEnv());
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.json).toMatchObject({
      user: { email: member.user.email },
      token: { id: me.body.token.id },
    });
  });

  it('a replayed state is refused: by the service (409) and by the finished command (nothing listens)', async () => {
    // The browser was left on the command's loopback page; replay from the service's own origin.
    await page.goto(`${base}/settings/tokens`);
    const result = await page.evaluate(
      async ({ port, state, challenge }) => {
        const csrf = document.querySelector('meta[name=csrf-token]')!.getAttribute('content')!;
        const res = await fetch('/cli/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
          body: JSON.stringify({
            port,
            state,
            name: 'again',
            code_challenge: challenge,
            code_challenge_method: 'S256',
          }),
        });
        return { status: res.status, body: await res.json() };
      },
      { port: loginPort, state: loginState, challenge: loginChallenge },
    );
    expect(result.status).toBe(409);
    expect(result.body.detail).toContain('already used');
    await expect(
      fetch(`http://127.0.0.1:${loginPort}/callback?state=${loginState}&code=${'a'.repeat(43)}`),
    ).rejects.toThrow();
    const tokens = await call(base, 'GET', '/api/v1/tokens', { token });
    expect(tokens.body.tokens).toHaveLength(1);
  });

  it('cancel in the browser stops the waiting command with exit status 3 and mints nothing', async () => {
    const cli = startCli(['login', '--no-browser'], cliEnv());
    try {
      const { url } = await signInAddress(cli);
      await page.goto(url); // the session is still signed in: straight to the approval page
      expect(new URL(page.url()).pathname).toBe('/cli/login');
      await Promise.all([page.waitForURL('http://127.0.0.1:*/callback?**'), page.click('#deny')]);
      const result = await cli.done;
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('cancelled in the browser');
    } finally {
      cli.child.kill();
    }
    const tokens = await call(base, 'GET', '/api/v1/tokens', { token });
    expect(tokens.body.tokens).toHaveLength(1);
    // The stored login is the approved one still.
    const stored = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8'));
    expect(stored.logins[base].token).toBe(token);
  });

  it('logout revokes the token and forgets it; the command then asks to log in (exit 3)', async () => {
    const out = await runCli(['logout'], cliEnv());
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('the token is revoked');
    expect((await call(base, 'GET', '/api/v1/me', { token })).status).toBe(401);
    const stored = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8'));
    expect(stored.logins[base]).toBeUndefined();
    const after = await runCli(['findings'], cliEnv());
    expect(after.code).toBe(3);
    expect(after.stderr).toContain('not logged in');
  });

  it('raised no console errors or page errors on the service pages (CSP included)', () => {
    // The one expected: the replay's 409, which Chromium logs as a failed resource.
    expect(problems.filter((p) => !p.includes('status of 409 (Conflict)'))).toEqual([]);
  });
});

describe('the API reference page', () => {
  it('renders every documented path with Swagger UI from our assets, with no CSP violation', async () => {
    problems.length = 0;
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    const document = (await call(base, 'GET', '/api/v1/openapi.json')).body;
    const operations = Object.values(document.paths as Record<string, object>).reduce(
      (n, p) => n + Object.keys(p).length,
      0,
    );
    await expect.poll(() => page.locator('.opblock').count()).toBe(operations);
    expect(await page.locator('.info .title').textContent()).toContain('Operations Intelligence Service API');
    // Open one operation: its schema renders too.
    await page.locator('.opblock-summary-path', { hasText: '/api/v1/pulse/findings' }).first().click();
    await page.locator('.opblock.is-open .responses-wrapper').waitFor();
    // Its example is the real answer recorded by npm run openapi:examples.
    const example = document.paths['/api/v1/pulse/findings'].get.responses['200'].content['application/json']
      .example as { findings: Array<{ id: string }> };
    await expect
      .poll(() => page.locator('.opblock.is-open .responses-wrapper').textContent())
      .toContain(example.findings[0]!.id);
    expect(requests.filter((u) => !u.startsWith(base) && !u.startsWith('data:'))).toEqual([]);
    expect(violations).toEqual([]);
    expect(problems).toEqual([]);
  });
});
