import { describe, expect } from 'vitest';
import { call, createTenantWithUser, startTestApi } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// Sign-in hardening (issue 24): failed-attempt limits shared through Redis by every API process,
// login CSRF, HSTS and Secure cookies when PUBLIC_URL is https.

// Two API processes' worth of app on one Redis and database (`api` and `second`), as a deployment
// with replicas has; a third behind a proxy (client addresses from X-Forwarded-For) with a small
// per-address limit. Tenants A and B each have their owner.
const it = apiTest
  .extend('second', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const second = await startTestApi(t);
    onCleanup(() => second.close());
    return second;
  })
  .extend('proxied', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const proxied = await startTestApi(t, { TRUST_PROXY: true, LOGIN_MAX_FAILURES_PER_ADDRESS: 5 });
    onCleanup(() => proxied.close());
    return proxied;
  });

const signIn = (base: string, email: string, password: string, headers: Record<string, string> = {}) =>
  call(base, 'POST', '/auth/login', { body: { email, password }, headers });

describe('failed sign-in limits', () => {
  it('the 21st wrong password for one account within a minute is 429 with Retry-After, on any API process', async ({
    api,
    second,
    a,
    b,
  }) => {
    for (let i = 1; i <= 20; i++) {
      const res = await signIn(i % 2 ? api.url : second.url, a.user.email, `wrong-${i}`);
      expect(res.status, `attempt ${i}`).toBe(401);
    }
    for (const base of [api.url, second.url]) {
      const res = await signIn(base, a.user.email.toUpperCase(), 'wrong-21');
      expect(res.status).toBe(429);
      expect(res.body.detail).toMatch(/Too many failed sign-ins for this account/);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // Locked: the right password waits too; another account is not affected.
    expect((await signIn(api.url, a.user.email, a.password)).status).toBe(429);
    expect((await signIn(api.url, b.user.email, b.password)).status).toBe(200);
  }, 60_000);

  it('guesses sent at once count too: of 30 wrong passwords sent together, at most 20 are checked', async ({
    t,
    api,
    second,
  }) => {
    // Before, every request of a burst passed the lockout check before the first failure was counted,
    // so a guesser sending them together had all 30 (or 1,000) checked. Guesses in flight now count.
    const c = await createTenantWithUser(t);
    // Hashing slots are waited for as long as it takes, so a loaded machine answers no 503 here.
    const patient = await startTestApi(t, { PASSWORD_HASH_WAIT_MS: 60_000 });
    let answers: Awaited<ReturnType<typeof signIn>>[];
    try {
      answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          signIn(i % 2 ? patient.url : second.url, c.user.email, `wrong-${i}`),
        ),
      );
    } finally {
      await patient.close();
    }
    const statuses = answers.map((r) => r.status);
    const checked = statuses.filter((s) => s === 401).length;
    // A password check that waited too long for a hashing slot (503) was not a guess either.
    expect(
      statuses.every((s) => s === 401 || s === 429 || s === 503),
      statuses.join(','),
    ).toBe(true);
    expect(checked, statuses.join(',')).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(10);
    for (const r of answers.filter((x) => x.status === 429)) {
      expect(r.body.detail).toMatch(/Too many .*sign-ins for this account/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Once they are answered, the account is locked like after 20 wrong passwords one by one.
    if (checked === 20) expect((await signIn(api.url, c.user.email, c.password)).status).toBe(429);
  }, 60_000);

  it('per client address: failures across accounts lock the address, not others', async ({ proxied, b }) => {
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 5; i++)
      expect((await signIn(proxied.url, `nobody${i}@example.com`, 'x', from('203.0.113.7'))).status).toBe(
        401,
      );
    const locked = await signIn(proxied.url, b.user.email, b.password, from('203.0.113.7'));
    expect(locked.status).toBe(429);
    expect(locked.body.detail).toMatch(/this address/);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await signIn(proxied.url, b.user.email, b.password, from('203.0.113.8'))).status).toBe(200);
  }, 60_000);
});

describe('login CSRF', () => {
  it('refuses cross-site browser posts (403), lets same-origin and non-browser ones through', async ({
    api,
    b,
  }) => {
    const form = (headers: Record<string, string>) =>
      call(api.url, 'POST', '/auth/login', {
        rawBody: new URLSearchParams({ email: b.user.email, password: b.password, next: '/' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    for (const headers of <Array<Record<string, string>>>[
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ]) {
      const res = await form(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.detail).toMatch(/Sign-in must come from this site/);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    for (const headers of <Array<Record<string, string>>>[
      { 'sec-fetch-site': 'same-origin', origin: api.url },
      // Our pages send no Referer, so a browser's own form post may say Origin: null.
      { 'sec-fetch-site': 'same-origin', origin: 'null' },
      { 'sec-fetch-site': 'none' },
      {},
    ]) {
      const res = await form(headers);
      expect(res.status, JSON.stringify(headers)).toBe(303);
      expect(res.headers.get('set-cookie')).toMatch(/opsi_session=/);
    }
  });
});

describe('HSTS and Secure cookies', () => {
  it('with PUBLIC_URL https (no TRUST_PROXY): Strict-Transport-Security and a Secure session cookie', async ({
    b,
    t,
  }) => {
    const https = await startTestApi(t, {
      PUBLIC_URL: 'https://opsi.example.com',
      publicUrl: 'https://opsi.example.com',
    });
    try {
      const res = await signIn(https.url, b.user.email, b.password);
      expect(res.status).toBe(200);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(res.headers.get('set-cookie')).toMatch(/opsi_session=[^;]+;.*secure/i);
      const version = await call(https.url, 'GET', '/api/v1/version');
      expect(version.headers.get('strict-transport-security')).toBe('max-age=31536000');
    } finally {
      await https.close();
    }
  });

  it('with an http PUBLIC_URL: neither', async ({ api, b }) => {
    const res = await signIn(api.url, b.user.email, b.password);
    expect(res.status).toBe(200);
    expect(res.headers.get('strict-transport-security')).toBeNull();
    expect(res.headers.get('set-cookie')).not.toMatch(/secure/i);
  });
});
