import { createHash, randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { addUser, call, loginOverHttp, mintTestToken, type BrowserLogin } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// The browser half of `opsi login` (/cli/login) and the API reference page (/docs), over HTTP against
// the real API, a cloned database and real Redis.

const state = () => randomBytes(24).toString('base64url');
// PKCE as the CLI makes it: a verifier it keeps, the S256 challenge it sends.
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const PKCE = `code_challenge=${CHALLENGE}&code_challenge_method=S256`;
const pkce = { code_challenge: CHALLENGE, code_challenge_method: 'S256' };
const session = (l: BrowserLogin, withCsrf = true) => ({
  cookie: l.cookie,
  ...(withCsrf ? { 'x-csrf-token': l.csrf } : {}),
});

// Tenant A's owner (`owner`, signed in as `login`) and a viewer of the same tenant.
const it = apiTest
  .extend('viewer', { scope: 'file' }, async ({ t, a }) => addUser(t, a, 'viewer'))
  .extend('viewerLogin', { scope: 'file' }, async ({ url, viewer }) =>
    loginOverHttp(url, viewer.user.email, viewer.password),
  );

describe('GET /cli/login', () => {
  it('sends a browser without a session to sign in, and back here after', async ({ url }) => {
    const s = state();
    const res = await call(url, 'GET', `/cli/login?port=4567&state=${s}&name=laptop&${PKCE}`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith('/login?next=')).toBe(true);
    expect(decodeURIComponent(location.slice('/login?next='.length))).toBe(
      `/cli/login?port=4567&state=${s}&name=laptop&${PKCE}`,
    );
  });

  it('asks the signed-in user to approve the token name and scope, naming the loopback address', async ({
    url,
    aLogin: login,
  }) => {
    const s = state();
    const res = await call(url, 'GET', `/cli/login?port=4567&state=${s}&name=my%20laptop&${PKCE}`, {
      headers: session(login, false),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.text).toContain('value="my laptop"');
    expect(res.text).toContain('read_write');
    expect(res.text).toContain('http://127.0.0.1:4567/callback');
    expect(res.text).toContain(`data-state="${s}"`);
    expect(res.text).toContain(`data-challenge="${CHALLENGE}"`);
    expect(res.text).toContain('id="approve"');
  });

  it('refuses a port outside 1024..65535, a malformed state, or no S256 challenge with 400', async ({
    url,
    aLogin: login,
  }) => {
    for (const q of [
      `port=80&state=${state()}&${PKCE}`,
      `port=70000&state=${state()}&${PKCE}`,
      `port=4567&state=short&${PKCE}`,
      `state=${state()}&${PKCE}`,
      `port=4567&state=${state()}`,
      `port=4567&state=${state()}&code_challenge=${CHALLENGE}&code_challenge_method=plain`,
      `port=4567&state=${state()}&code_challenge=short&code_challenge_method=S256`,
    ]) {
      const res = await call(url, 'GET', `/cli/login?${q}`, { headers: session(login, false) });
      expect(res.status, q).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
  });

  it('shows a viewer that the CLI needs another role, with no approve button', async ({
    url,
    viewerLogin,
  }) => {
    const res = await call(url, 'GET', `/cli/login?port=4567&state=${state()}&${PKCE}`, {
      headers: session(viewerLogin, false),
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('A viewer can mint read tokens only');
    expect(res.text).not.toContain('id="approve"');
  });
});

describe('POST /cli/login', () => {
  it('mints a read_write token once per state; the redirect carries a one-time code, never the token', async ({
    url,
    a: owner,
    aLogin: login,
  }) => {
    const s = state();
    const res = await call(url, 'POST', '/cli/login', {
      headers: session(login),
      body: { port: 4567, state: s, name: 'cli on laptop', expires_in_days: 30, ...pkce },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const redirect = new URL(res.body.redirect);
    expect(redirect.origin).toBe('http://127.0.0.1:4567');
    expect(redirect.pathname).toBe('/callback');
    expect(redirect.searchParams.get('state')).toBe(s);
    expect([...redirect.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(res.text).not.toMatch(/opsi_[A-Za-z0-9_-]{43}/);
    const code = redirect.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const exchange = (body: unknown) => call(url, 'POST', '/cli/login/token', { body });
    const got = await exchange({ code, code_verifier: VERIFIER });
    expect(got.status, got.text).toBe(200);
    expect(got.headers.get('cache-control')).toBe('no-store');
    const token = got.body.token as string;
    expect(token).toMatch(/^opsi_[A-Za-z0-9_-]{43}$/);
    expect(got.body.token_id).toBe(res.body.token_id);
    // Single use: the same code again is refused.
    const twice = await exchange({ code, code_verifier: VERIFIER });
    expect(twice.status).toBe(400);
    expect(twice.body.detail).toMatch(/unknown, used or expired/);

    const me = await call(url, 'GET', '/api/v1/me', { token });
    expect(me.status).toBe(200);
    expect(me.body.token).toMatchObject({ id: res.body.token_id, scope: 'read_write' });
    expect(me.body.user.id).toBe(owner.user.id);
    const listed = await call(url, 'GET', '/api/v1/tokens', { token });
    expect(listed.body.tokens.find((x: { id: string }) => x.id === res.body.token_id)).toMatchObject({
      name: 'cli on laptop',
      scope: 'read_write',
      expires_at: expect.any(String),
    });

    // The same state again (a reload, a replayed request): refused, and no second token.
    const again = await call(url, 'POST', '/cli/login', {
      headers: session(login),
      body: { port: 4567, state: s, name: 'cli on laptop', ...pkce },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('already used');
    const after = await call(url, 'GET', '/api/v1/tokens', { token });
    expect(after.body.tokens.filter((x: { name: string }) => x.name === 'cli on laptop')).toHaveLength(1);
  });

  it('a code is bound to its challenge: a wrong verifier gets nothing and burns the code', async ({
    url,
    aLogin: login,
  }) => {
    const res = await call(url, 'POST', '/cli/login', {
      headers: session(login),
      body: { port: 4567, state: state(), name: 'stolen code', ...pkce },
    });
    const code = new URL(res.body.redirect).searchParams.get('code')!;
    const exchange = (body: unknown) => call(url, 'POST', '/cli/login/token', { body });
    const wrong = await exchange({ code, code_verifier: randomBytes(32).toString('base64url') });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/code_verifier does not match/);
    expect(wrong.text).not.toMatch(/opsi_/);
    expect((await exchange({ code, code_verifier: VERIFIER })).status).toBe(400);
    for (const body of [
      {},
      { code },
      { code, code_verifier: 'short' },
      { code: 'x', code_verifier: VERIFIER },
    ])
      expect((await exchange(body)).status, JSON.stringify(body)).toBe(400);
  });

  it('needs the session and its CSRF header; a bearer token cannot mint', async ({
    url,
    a: owner,
    aLogin: login,
    t,
  }) => {
    const body = { port: 4567, state: state(), name: 'x', ...pkce };
    expect((await call(url, 'POST', '/cli/login', { body })).status).toBe(401);
    expect((await call(url, 'POST', '/cli/login', { body, headers: session(login, false) })).status).toBe(
      403,
    );
    const { token } = await mintTestToken(t, owner, 'read_write');
    expect((await call(url, 'POST', '/cli/login', { body, token })).status).toBe(403);
  });

  it('refuses bad input with 400 and mints nothing', async ({ url, a: owner, aLogin: login, t }) => {
    const { token } = await mintTestToken(t, owner, 'read');
    const before = (await call(url, 'GET', '/api/v1/tokens', { token })).body.tokens.length;
    for (const body of [
      { port: 22, state: state(), name: 'x', ...pkce },
      { port: 4567, state: 'short', name: 'x', ...pkce },
      { port: 4567, state: state(), name: '', ...pkce },
      { port: 4567, state: state(), name: 'x', expires_in_days: 0, ...pkce },
      { port: 4567, state: state(), name: 'x', expires_in_days: '30', ...pkce },
      { port: 4567, state: state(), name: 'x' },
      { port: 4567, state: state(), name: 'x', code_challenge: CHALLENGE, code_challenge_method: 'plain' },
    ]) {
      const res = await call(url, 'POST', '/cli/login', { body, headers: session(login) });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(url, 'GET', '/api/v1/tokens', { token })).body.tokens.length).toBe(before);
  });

  it('refuses a viewer with 403', async ({ url, viewerLogin }) => {
    const res = await call(url, 'POST', '/cli/login', {
      headers: session(viewerLogin),
      body: { port: 4567, state: state(), name: 'x', ...pkce },
    });
    expect(res.status).toBe(403);
  });
});

describe('GET /docs', () => {
  it('serves the reference page and the viewer from our own assets, under the pages policy', async ({
    url,
  }) => {
    const res = await call(url, 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    const sources = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    const assets = sources.filter((s) => s.startsWith('/docs/assets/'));
    expect(assets.sort()).toEqual([
      '/docs/assets/docs.css',
      '/docs/assets/docs.js',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui.css',
    ]);
    expect(sources.filter((s) => /^https?:/.test(s))).toEqual([]);
    for (const asset of assets) {
      const a = await fetch(`${url}${asset}`);
      expect(a.status, asset).toBe(200);
      expect(a.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /javascript/ : /text\/css/);
      expect((await a.text()).length).toBeGreaterThan(100);
    }
  });
});
