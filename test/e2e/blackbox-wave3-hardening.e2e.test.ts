import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { freePort, startService, type ServiceProcess } from '../support/processes';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of issue 24 (hardening) as a client sees it from outside, from the contract
// (api-v1.md, decisions.md, docs/api.md "POST /auth/login", "Pages", "Integrations catalog") and the
// issue: sign-in never redirects off the service's origin; the 21st wrong password for one account in
// a minute is 429 with Retry-After and {detail}; a cross-site sign-in is refused; notifier URLs that
// point inside (loopback, link-local, metadata, private, ULA) are refused with 400 {detail}; with an
// https PUBLIC_URL, responses carry HSTS and the session cookie is Secure. Real API and worker
// processes, HTTP only.

let svc: SplitServices;
let base = '';
let origin = '';
let httpsApi: ServiceProcess | undefined;
let owner: TestMember;
let ownerTok = '';

const EVIL = 'evil.example';

async function formLogin(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; location: string | null; cookie: string | null; text: string }> {
  const res = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return {
    status: res.status,
    location: res.headers.get('location'),
    cookie: /opsi_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0] ?? null,
    text: await res.text(),
  };
}

async function jsonLogin(url: string, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Where a browser goes for this Location: WHATWG URL parsing drops tabs/newlines and reads `\` as `/`. */
const browserTarget = (location: string) => new URL(location, base);

/** A browser's own form post on the service's page. */
const SAME_ORIGIN = () => ({ origin, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' });

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  svc = await startSplitServices({ apiEnv: { PORT: String(port), PUBLIC_URL: origin } });
  base = svc.base;
  expect(base).toBe(origin);
  owner = await createTenantWithUser(svc.t, { tier: 'team', role: 'owner' });
  ownerTok = (await mintTestToken(svc.t, owner, 'read_write')).token;
  httpsApi = await startService(
    { ...svc.env, PUBLIC_URL: 'https://opsi.example.test' },
    { entry: 'apps/api/src/main.ts' },
  );
}, 300_000);

afterAll(async () => {
  await httpsApi?.stop();
  await svc?.stop();
});

describe("sign-in never redirects off the service's origin (issue 24: open redirect)", () => {
  const HOSTILE_NEXT = [
    '/\t/evil.example',
    '//evil.example',
    '/\\evil.example',
    '/\\/evil.example',
    '\\\\evil.example',
    'https://evil.example/',
    '/\n/evil.example',
  ];

  it('control: a form sign-in with next=/settings/tokens signs in and goes there (303)', async () => {
    const m = await createTenantWithUser(svc.t);
    const r = await formLogin(
      base,
      { email: m.user.email, password: m.password, next: '/settings/tokens' },
      SAME_ORIGIN(),
    );
    expect(r.status, r.text).toBe(303);
    expect(r.cookie).toBeTruthy();
    const to = browserTarget(r.location!);
    expect(to.origin).toBe(origin);
    expect(to.pathname).toBe('/settings/tokens');
  });

  it.each(HOSTILE_NEXT.map((n) => [JSON.stringify(n), n]))(
    'form sign-in with next=%s: signed in, and the redirect stays on the origin',
    async (_, next) => {
      const m = await createTenantWithUser(svc.t);
      const r = await formLogin(base, { email: m.user.email, password: m.password, next }, SAME_ORIGIN());
      expect(r.status, r.text).toBe(303);
      expect(r.cookie, 'the sign-in itself succeeded').toBeTruthy();
      expect(r.location).toBeTruthy();
      const to = browserTarget(r.location!);
      expect(to.origin, `Location ${JSON.stringify(r.location)} leads to ${to.href}`).toBe(origin);
      expect(to.hostname).not.toContain(EVIL);
    },
  );

  it.each([
    '/login?next=/%09/evil.example',
    '/login?next=//evil.example',
    '/login?next=/%5Cevil.example',
    '/login?next=/%5C/evil.example',
    '/login?next=%2F%2Fevil.example',
    '/login?next=https%3A%2F%2Fevil.example%2F',
    '/login?next=/%0A/evil.example',
  ])('GET %s with a live session never redirects off the origin', async (path) => {
    const m = await createTenantWithUser(svc.t);
    const login = await formLogin(base, { email: m.user.email, password: m.password }, SAME_ORIGIN());
    expect(login.cookie, login.text).toBeTruthy();
    const res = await fetch(`${base}${path}`, { headers: { cookie: login.cookie! }, redirect: 'manual' });
    await res.text();
    if (res.status >= 300 && res.status < 400) {
      const loc = res.headers.get('location');
      expect(loc).toBeTruthy();
      const to = browserTarget(loc!);
      expect(to.origin, `Location ${JSON.stringify(loc)} leads to ${to.href}`).toBe(origin);
    } else {
      expect(res.status, `${path}: ${res.status}`).toBeLessThan(500);
    }
  });
});

describe('a cross-site sign-in is refused (issue 24: login CSRF)', () => {
  let m: TestMember;
  beforeAll(async () => {
    m = await createTenantWithUser(svc.t);
  });

  it('control: no Origin (a script, the CLI) and a same-origin browser post both sign in', async () => {
    expect((await jsonLogin(base, m.user.email, m.password)).status).toBe(200);
    const same = await jsonLogin(base, m.user.email, m.password, SAME_ORIGIN());
    expect(same.status, same.text).toBe(200);
    expect(same.headers.get('set-cookie') ?? '').toMatch(/opsi_session=/);
  });

  it.each([
    ['Origin of another site (JSON)', 'json', { origin: 'https://evil.example' }],
    ['Origin of another site (an HTML form)', 'form', { origin: 'https://evil.example' }],
    ['Sec-Fetch-Site: cross-site (JSON)', 'json', { 'sec-fetch-site': 'cross-site' }],
    [
      'Sec-Fetch-Site: cross-site (an HTML form)',
      'form',
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
    ],
    [
      'both (a browser posting a form from evil.example)',
      'form',
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
    ],
  ] as const)('%s: refused (4xx), no session cookie is set', async (_, kind, headers) => {
    let status: number;
    let setCookie: string;
    let text: string;
    if (kind === 'json') {
      const r = await jsonLogin(base, m.user.email, m.password, headers as Record<string, string>);
      status = r.status;
      setCookie = r.headers.get('set-cookie') ?? '';
      text = r.text;
      if (status >= 400) expect(typeof r.body?.detail, r.text).toBe('string');
    } else {
      const r = await formLogin(
        base,
        { email: m.user.email, password: m.password },
        headers as Record<string, string>,
      );
      status = r.status;
      setCookie = r.cookie ?? '';
      text = r.text;
      // A form may be sent back to the sign-in page instead of a bare 4xx; either way, no session.
      if (status >= 300 && status < 400) {
        expect(browserTarget(r.location ?? '').pathname, `${status} to ${r.location}`).toBe('/login');
        status = 403;
      }
    }
    expect(status, text).toBeGreaterThanOrEqual(400);
    expect(status, text).toBeLessThan(500);
    expect(setCookie).not.toMatch(/opsi_session=[^;]/);
  });
});

describe('notifier URLs that point inside are refused at install (issue 24: SSRF)', () => {
  const INSIDE = [
    'http://127.0.0.1:9/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/hook',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://localhost:8080/hook',
    'http://0.0.0.0/hook',
    'http://192.168.1.10/hook',
    'http://172.16.0.1/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://2130706433/hook', // 127.0.0.1 as one number
  ];
  const SECRET = 'bb-webhook-secret-0123456789';

  async function installed(): Promise<any[]> {
    const res = await call(base, 'GET', '/api/v1/marketplace/tenant/tools', { token: ownerTok });
    expect(res.status, res.text).toBe(200);
    return res.body.tools.filter((t: any) => t.id === 'webhook' || t.id === 'slack');
  }

  it.each(INSIDE)('webhook and slack at %s: 400 {detail}, nothing installed', async (url) => {
    const before = await installed();
    const httpsUrl = url.replace(/^http:/, 'https:');
    for (const body of [
      { tool_id: 'webhook', settings: { url, secret: SECRET } },
      { tool_id: 'webhook', settings: { url: httpsUrl, secret: SECRET } },
      { tool_id: 'slack', settings: { url: `${httpsUrl}/services/T000/B000/XXXX` } },
    ]) {
      const res = await call(base, 'POST', '/api/v1/marketplace/tenant/tools', { token: ownerTok, body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(typeof res.body?.detail, res.text).toBe('string');
    }
    expect(await installed()).toEqual(before);
  });

  it('control: a public address is installed (201); reconfiguring it to an inside address is 400 and leaves it as it was', async () => {
    const ok = await call(base, 'POST', '/api/v1/marketplace/tenant/tools', {
      token: ownerTok,
      body: { tool_id: 'webhook', settings: { url: 'https://93.184.215.14/opsi-hook', secret: SECRET } },
    });
    expect([200, 201], ok.text).toContain(ok.status);
    const before = await installed();
    expect(before.some((t) => t.id === 'webhook')).toBe(true);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/hook',
      'http://127.0.0.1/hook',
    ]) {
      const res = await call(base, 'POST', '/api/v1/marketplace/tenant/tools', {
        token: ownerTok,
        body: { tool_id: 'webhook', settings: { url, secret: SECRET } },
      });
      expect(res.status, `${url}: ${res.text}`).toBe(400);
      expect(typeof res.body?.detail).toBe('string');
    }
    expect(await installed()).toEqual(before);
    const del = await call(base, 'DELETE', '/api/v1/marketplace/tenant/tools/webhook', { token: ownerTok });
    expect(del.status, del.text).toBe(204);
  });
});

describe('with PUBLIC_URL=https://…: HSTS and Secure cookies (issue 24)', () => {
  it('responses carry Strict-Transport-Security and the session cookie is Secure', async () => {
    const url = httpsApi!.url;
    for (const path of ['/api/v1/version', '/login']) {
      const res = await fetch(`${url}${path}`, { redirect: 'manual' });
      await res.text();
      const hsts = res.headers.get('strict-transport-security');
      expect(hsts, `${path}: no Strict-Transport-Security`).toBeTruthy();
      const maxAge = Number(/max-age=(\d+)/i.exec(hsts!)?.[1]);
      expect(maxAge, hsts!).toBeGreaterThan(0);
    }
    const m = await createTenantWithUser(svc.t);
    const r = await jsonLogin(url, m.user.email, m.password);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('strict-transport-security')).toBeTruthy();
    const cookie = (r.headers.get('set-cookie') ?? '')
      .split(/,(?=\s*[A-Za-z0-9_]+=)/)
      .find((c) => c.trim().startsWith('opsi_session='));
    expect(cookie, r.headers.get('set-cookie') ?? '').toBeTruthy();
    expect(cookie!.split(';').map((p) => p.trim().toLowerCase())).toContain('secure');
  });

  it('control: with an http PUBLIC_URL the cookie is not Secure (a browser on http must keep it)', async () => {
    const m = await createTenantWithUser(svc.t);
    const r = await jsonLogin(base, m.user.email, m.password);
    expect(r.status, r.text).toBe(200);
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/opsi_session=/);
    expect(cookie.split(';').map((p) => p.trim().toLowerCase())).not.toContain('secure');
  });
});

// On a stack of its own (its own database and Redis prefix): the limits may count per address too, and
// every request of this file comes from 127.0.0.1.
describe('sign-in resists guessing (issue 24: "the 21st wrong password in a minute is 429")', () => {
  let own: SplitServices;
  beforeAll(async () => {
    own = await startSplitServices({ worker: false });
  }, 300_000);
  afterAll(async () => {
    await own?.stop();
  });

  it('20 wrong passwords for one account are 401; the 21st is 429 with Retry-After and {detail}; the right password is then refused too', async () => {
    const m = await createTenantWithUser(own.t);
    const base = own.base;
    const statuses: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const r = await jsonLogin(base, m.user.email, `wrong-password-${i}`);
      statuses.push(r.status);
    }
    expect(statuses, statuses.join(',')).toEqual(Array(20).fill(401));
    const r21 = await jsonLogin(base, m.user.email, 'wrong-password-21');
    expect(r21.status, r21.text).toBe(429);
    expect(typeof r21.body?.detail, r21.text).toBe('string');
    const retryAfter = r21.headers.get('retry-after');
    expect(retryAfter, 'Retry-After').toBeTruthy();
    const seconds = /^\d+$/.test(retryAfter!)
      ? Number(retryAfter)
      : (Date.parse(retryAfter!) - Date.now()) / 1000;
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(3600);
    // A guesser must not learn that the 22nd guess was right.
    const right = await jsonLogin(base, m.user.email, m.password);
    expect(right.status, right.text).toBe(429);
    expect(right.headers.get('set-cookie') ?? '').not.toMatch(/opsi_session=[^;]/);
    // The form sign-in is held as well.
    const form = await formLogin(base, { email: m.user.email, password: m.password });
    expect(form.cookie).toBeNull();
  });
});
