import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { deleteUser, expireToken } from '@opsi/core';
import { addUser, call, loginOverHttp, mintTestToken, type BrowserLogin } from '@opsi/test-support';
import { apiTest as it } from '@opsi/test-support/api-fixture';

// Tenant A's owner (tokens and a browser session) and tenant B's come from the API fixture.

const session = (login: BrowserLogin, withCsrf = true) => ({
  cookie: login.cookie,
  ...(withCsrf ? { 'x-csrf-token': login.csrf } : {}),
});

function expectDetail(res: { status: number; body: Record<string, unknown> }, status: number) {
  expect(res.status).toBe(status);
  expect(typeof res.body?.detail).toBe('string');
  expect((res.body.detail as string).length).toBeGreaterThan(0);
}

describe('GET /api/v1/version', () => {
  it('answers without authentication and ignores any Authorization header', async ({ url }) => {
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer garbage' },
      { authorization: 'Basic Zm9v' },
    ];
    for (const headers of variants) {
      const res = await call(url, 'GET', '/api/v1/version', { headers });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ service: 'opsi', api_version: 'v1', revision: 'test-revision' });
    }
  });
});

describe('authentication: every failure is 401 {detail}, never a fall-through', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['missing header', {}],
    ['garbage token', { authorization: 'Bearer garbage' }],
    ['wrong prefix', { authorization: `Bearer ghp_${randomBytes(32).toString('base64url')}` }],
    ['unknown well-formed token', { authorization: `Bearer opsi_${randomBytes(32).toString('base64url')}` }],
    ['empty bearer', { authorization: 'Bearer' }],
    ['other scheme', { authorization: 'Basic Zm9vOmJhcg==' }],
    ['token too long', { authorization: `Bearer opsi_${randomBytes(33).toString('base64url')}` }],
  ];
  const endpoints: Array<[string, string]> = [
    ['GET', '/api/v1/me'],
    ['GET', '/api/v1/tokens'],
    ['DELETE', `/api/v1/tokens/${randomUUID()}`],
    ['GET', '/api/v1/team'],
    ['GET', '/api/v1/audit'],
    ['GET', '/api/v1/audit/verify'],
  ];
  for (const [name, headers] of cases) {
    it(`${name} → 401 on every endpoint`, async ({ url }) => {
      for (const [method, path] of endpoints) {
        const res = await call(url, method, path, { headers });
        expectDetail(res, 401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
    });
  }

  it('a browser session cookie alone does not authenticate /api/v1 endpoints', async ({ url, aLogin }) => {
    expectDetail(await call(url, 'GET', '/api/v1/me', { headers: session(aLogin) }), 401);
    expectDetail(await call(url, 'GET', '/api/v1/tokens', { headers: session(aLogin) }), 401);
  });

  it('an expired token → 401', async ({ url, a, t }) => {
    const { token, id } = await mintTestToken(t, a, 'read_write', { expiresInDays: 30 });
    expect((await call(url, 'GET', '/api/v1/me', { token })).status).toBe(200);
    await expireToken(t.db, id);
    const res = await call(url, 'GET', '/api/v1/me', { token });
    expectDetail(res, 401);
    expect(res.body.detail).toMatch(/expired/);
  });

  it("a deleted user's token → 401 (and their session too)", async ({ url, a, t }) => {
    const member = await addUser(t, a, 'member');
    const { token } = await mintTestToken(t, member, 'read_write');
    const login = await loginOverHttp(url, member.user.email, member.password);
    expect((await call(url, 'GET', '/api/v1/me', { token })).status).toBe(200);
    await deleteUser(t.db, a.tenant.slug, member.user.email);
    expectDetail(await call(url, 'GET', '/api/v1/me', { token }), 401);
    expectDetail(await call(url, 'GET', '/auth/session', { headers: session(login) }), 401);
    expectDetail(
      await call(url, 'POST', '/auth/login', {
        body: { email: member.user.email, password: member.password },
      }),
      401,
    );
  });
});

describe('GET /api/v1/me', () => {
  it('answers the identity, tenant and token of the caller', async ({ url, a, aRead }) => {
    const res = await call(url, 'GET', '/api/v1/me', { token: aRead });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: { id: a.user.id, email: a.user.email, name: a.user.name, role: 'owner' },
      tenant: { id: a.tenant.id, slug: a.tenant.slug, name: a.tenant.name, tier: 'team' },
      token: { id: expect.any(String), scope: 'read', expires_at: null },
    });
  });
});

describe('POST /api/v1/tokens (browser session only)', () => {
  it('mints: 201 with the secret once, opsi_ + 43 URL-safe characters, audit-logged', async ({
    url,
    a,
    aLogin,
    aRead,
    t,
  }) => {
    const res = await call(url, 'POST', '/api/v1/tokens', {
      headers: session(aLogin),
      body: { name: 'ci pipeline', scope: 'read_write', expires_in_days: 7 },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['created_at', 'expires_at', 'id', 'name', 'scope', 'token', 'token_hint'].sort(),
    );
    expect(res.body.token).toMatch(/^opsi_[A-Za-z0-9_-]{43}$/);
    expect(res.body.token.startsWith(res.body.token_hint)).toBe(true);
    expect(res.body.token_hint).toHaveLength(13);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const days = (Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)) / 86_400_000;
    expect(days).toBeCloseTo(7, 2);
    expect((await call(url, 'GET', '/api/v1/me', { token: res.body.token })).body.token.scope).toBe(
      'read_write',
    );
    const audit = await call(url, 'GET', '/api/v1/audit?limit=1', { token: aRead });
    expect(audit.body.entries[0]).toMatchObject({
      action: 'token.minted',
      target_type: 'api_token',
      target_id: res.body.id,
      actor: { type: 'user', id: a.user.id },
    });
    // Only the hash is stored.
    const row = await t.db
      .selectFrom('api_tokens')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(res.body.token);
  });

  it('expires_at is null without expires_in_days', async ({ url, aLogin }) => {
    const res = await call(url, 'POST', '/api/v1/tokens', {
      headers: session(aLogin),
      body: { name: 'forever', scope: 'read' },
    });
    expect(res.status).toBe(201);
    expect(res.body.expires_at).toBeNull();
  });

  it('a bearer token gets 403, read or read_write: a token never mints a token', async ({
    url,
    aLogin,
    aRead,
    aWrite,
  }) => {
    for (const token of [aRead, aWrite]) {
      expectDetail(
        await call(url, 'POST', '/api/v1/tokens', { token, body: { name: 'x', scope: 'read' } }),
        403,
      );
    }
    // Even with a live session cookie alongside.
    expectDetail(
      await call(url, 'POST', '/api/v1/tokens', {
        token: aWrite,
        headers: session(aLogin),
        body: { name: 'x', scope: 'read' },
      }),
      403,
    );
  });

  it('a cookie-authenticated mutation without the right X-CSRF-Token → 403', async ({ url, aLogin }) => {
    expectDetail(
      await call(url, 'POST', '/api/v1/tokens', {
        headers: session(aLogin, false),
        body: { name: 'x', scope: 'read' },
      }),
      403,
    );
    expectDetail(
      await call(url, 'POST', '/api/v1/tokens', {
        headers: { ...session(aLogin, false), 'x-csrf-token': 'wrong' },
        body: { name: 'x', scope: 'read' },
      }),
      403,
    );
  });

  it('no session → 401', async ({ url }) => {
    expectDetail(await call(url, 'POST', '/api/v1/tokens', { body: { name: 'x', scope: 'read' } }), 401);
  });

  const invalid: Array<[string, unknown]> = [
    ['missing name', { scope: 'read' }],
    ['empty name', { name: '   ', scope: 'read' }],
    ['long name', { name: 'x'.repeat(101), scope: 'read' }],
    ['unknown scope', { name: 'x', scope: 'admin' }],
    ['missing scope', { name: 'x' }],
    ['expiry as string', { name: 'x', scope: 'read', expires_in_days: '5' }],
    ['fractional expiry', { name: 'x', scope: 'read', expires_in_days: 1.5 }],
    ['zero expiry', { name: 'x', scope: 'read', expires_in_days: 0 }],
    ['expiry over a year', { name: 'x', scope: 'read', expires_in_days: 366 }],
    ['body not an object', ['x']],
  ];
  for (const [name, body] of invalid) {
    it(`${name} → 400 and nothing minted`, async ({ url, aLogin, t }) => {
      const before = await t.db
        .selectFrom('api_tokens')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const res = await call(url, 'POST', '/api/v1/tokens', { headers: session(aLogin), body });
      expectDetail(res, 400);
      const after = await t.db
        .selectFrom('api_tokens')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(after.n).toBe(before.n);
    });
  }

  it('a viewer may mint read tokens only', async ({ url, a, t }) => {
    const viewer = await addUser(t, a, 'viewer');
    const login = await loginOverHttp(url, viewer.user.email, viewer.password);
    expect(
      (
        await call(url, 'POST', '/api/v1/tokens', {
          headers: session(login),
          body: { name: 'r', scope: 'read' },
        })
      ).status,
    ).toBe(201);
    expectDetail(
      await call(url, 'POST', '/api/v1/tokens', {
        headers: session(login),
        body: { name: 'w', scope: 'read_write' },
      }),
      403,
    );
  });
});

describe('GET /api/v1/tokens', () => {
  it("lists the caller's own tokens as metadata, never a secret or hash", async ({
    url,
    a,
    aLogin,
    aRead,
    t,
  }) => {
    const minted = await call(url, 'POST', '/api/v1/tokens', {
      headers: session(aLogin),
      body: { name: 'listed', scope: 'read' },
    });
    await call(url, 'GET', '/api/v1/me', { token: minted.body.token });
    const other = await addUser(t, a, 'member');
    const otherToken = await mintTestToken(t, other, 'read');
    const res = await call(url, 'GET', '/api/v1/tokens', { token: aRead });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(minted.body.token);
    expect(res.text).not.toContain(aRead);
    const listed = res.body.tokens.find((x: { id: string }) => x.id === minted.body.id);
    expect(Object.keys(listed).sort()).toEqual(
      ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'revoked_at', 'scope', 'token_hint'].sort(),
    );
    expect(listed.last_used_at).not.toBeNull();
    expect(res.body.tokens.some((x: { id: string }) => x.id === otherToken.id)).toBe(false);
    const times = res.body.tokens.map((x: { created_at: string }) => Date.parse(x.created_at));
    expect(times).toEqual([...times].sort((p: number, q: number) => q - p));
  });
});

describe('DELETE /api/v1/tokens/{id}', () => {
  it('revokes immediately (204), audit-logged; the token gets 401 on the next request', async ({
    url,
    a,
    aRead,
    aWrite,
    t,
  }) => {
    const victim = await mintTestToken(t, a, 'read');
    expect((await call(url, 'GET', '/api/v1/me', { token: victim.token })).status).toBe(200);
    const res = await call(url, 'DELETE', `/api/v1/tokens/${victim.id}`, { token: aWrite });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectDetail(await call(url, 'GET', '/api/v1/me', { token: victim.token }), 401);
    const entries = (await call(url, 'GET', '/api/v1/audit', { token: aRead })).body.entries;
    expect(
      entries.find(
        (e: { action: string; target_id: string }) =>
          e.action === 'token.revoked' && e.target_id === victim.id,
      ),
    ).toBeTruthy();
    const listed = (await call(url, 'GET', '/api/v1/tokens', { token: aRead })).body.tokens.find(
      (x: { id: string }) => x.id === victim.id,
    );
    expect(listed.revoked_at).not.toBeNull();
  });

  it('a token may revoke itself, and is final', async ({ url, a, t }) => {
    const self = await mintTestToken(t, a, 'read_write');
    expect((await call(url, 'DELETE', `/api/v1/tokens/${self.id}`, { token: self.token })).status).toBe(204);
    expectDetail(await call(url, 'GET', '/api/v1/me', { token: self.token }), 401);
    expectDetail(await call(url, 'DELETE', `/api/v1/tokens/${self.id}`, { token: self.token }), 401);
  });

  it('a read token → 403, and the token stays active', async ({ url, a, aRead, t }) => {
    const victim = await mintTestToken(t, a, 'read');
    expectDetail(await call(url, 'DELETE', `/api/v1/tokens/${victim.id}`, { token: aRead }), 403);
    expect((await call(url, 'GET', '/api/v1/me', { token: victim.token })).status).toBe(200);
  });

  it("another tenant's token id → 404, like one that does not exist; the token keeps working", async ({
    url,
    b,
    aWrite,
    t,
  }) => {
    const theirs = await mintTestToken(t, b, 'read');
    for (const id of [theirs.id, randomUUID(), 'not-a-uuid']) {
      expectDetail(await call(url, 'DELETE', `/api/v1/tokens/${id}`, { token: aWrite }), 404);
    }
    expect((await call(url, 'GET', '/api/v1/me', { token: theirs.token })).status).toBe(200);
  });

  it("another user's token in the same tenant → 404", async ({ url, a, aWrite, t }) => {
    const colleague = await addUser(t, a, 'admin');
    const theirs = await mintTestToken(t, colleague, 'read');
    expectDetail(await call(url, 'DELETE', `/api/v1/tokens/${theirs.id}`, { token: aWrite }), 404);
  });
});

describe('naming another tenant → 403', () => {
  it('by X-Tenant-ID header, tenant_id query or body field, by id or slug', async ({
    url,
    b,
    aLogin,
    aRead,
  }) => {
    for (const other of [b.tenant.id, b.tenant.slug]) {
      expectDetail(
        await call(url, 'GET', '/api/v1/me', { token: aRead, headers: { 'x-tenant-id': other } }),
        403,
      );
      expectDetail(await call(url, 'GET', `/api/v1/team?tenant_id=${other}`, { token: aRead }), 403);
      expectDetail(
        await call(url, 'POST', '/api/v1/tokens', {
          headers: session(aLogin),
          body: { name: 'x', scope: 'read', tenant_id: other },
        }),
        403,
      );
    }
  });

  it('naming the own tenant is fine', async ({ url, a, aRead }) => {
    for (const own of [a.tenant.id, a.tenant.slug]) {
      expect(
        (await call(url, 'GET', '/api/v1/me', { token: aRead, headers: { 'x-tenant-id': own } })).status,
      ).toBe(200);
      expect((await call(url, 'GET', `/api/v1/team?tenant_id=${own}`, { token: aRead })).status).toBe(200);
    }
  });
});

describe('GET /api/v1/team', () => {
  it("lists the tenant's live members with roles, and no one else's", async ({ url, a, b, aRead, t }) => {
    const res = await call(url, 'GET', '/api/v1/team', { token: aRead });
    expect(res.status).toBe(200);
    const emails = res.body.members.map((m: { email: string }) => m.email);
    expect(emails).toContain(a.user.email);
    expect(emails).not.toContain(b.user.email);
    expect(res.body.members[0]).toEqual({
      id: a.user.id,
      email: a.user.email,
      name: a.user.name,
      role: 'owner',
      created_at: expect.any(String),
    });
    const bTeam = await call(url, 'GET', '/api/v1/team', {
      token: (await mintTestToken(t, b, 'read')).token,
    });
    expect(bTeam.body.members.map((m: { email: string }) => m.email)).toEqual([b.user.email]);
  });
});

describe('GET /api/v1/audit', () => {
  it('newest first, default limit 50, at most 500, only the caller tenant', async ({ url, b, aRead, t }) => {
    const own = await call(url, 'GET', '/api/v1/audit', { token: aRead });
    expect(own.status).toBe(200);
    const seqs = own.body.entries.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x: number, y: number) => y - x));
    expect(own.body.entries.length).toBeLessThanOrEqual(50);
    expect(own.body.entries[0]).toEqual({
      id: expect.any(String),
      seq: expect.any(Number),
      at: expect.any(String),
      actor: expect.objectContaining({ type: expect.any(String) }),
      action: expect.any(String),
      target_type: expect.any(String),
      target_id: expect.anything(),
      details: expect.any(Object),
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const limited = await call(url, 'GET', '/api/v1/audit?limit=2', { token: aRead });
    expect(limited.body.entries.map((e: { seq: number }) => e.seq)).toEqual(seqs.slice(0, 2));
    expect((await call(url, 'GET', '/api/v1/audit?limit=500', { token: aRead })).status).toBe(200);
    for (const bad of ['501', '0', '-1', 'abc', '1.5']) {
      expectDetail(await call(url, 'GET', `/api/v1/audit?limit=${bad}`, { token: aRead }), 400);
    }
    const ids = new Set(own.body.entries.map((e: { id: string }) => e.id));
    const theirs = await call(url, 'GET', '/api/v1/audit?limit=500', {
      token: (await mintTestToken(t, b, 'read')).token,
    });
    expect(theirs.body.entries.some((e: { id: string }) => ids.has(e.id))).toBe(false);
  });

  it('verify answers {valid, checked, first_invalid_id} over the whole chain', async ({ url, aRead }) => {
    const all = await call(url, 'GET', '/api/v1/audit?limit=500', { token: aRead });
    const res = await call(url, 'GET', '/api/v1/audit/verify', { token: aRead });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ valid: true, checked: all.body.entries.length, first_invalid_id: null });
  });
});

describe('browser session', () => {
  it('login answers {user, tenant, csrf_token} and sets an HttpOnly SameSite=Lax cookie', async ({
    url,
    a,
  }) => {
    const res = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: a.user.email.toUpperCase(), password: a.password }),
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^opsi_session=[A-Za-z0-9_-]{43};/);
    expect(cookie.toLowerCase()).toContain('httponly');
    expect(cookie.toLowerCase()).toContain('samesite=lax');
    expect(cookie.toLowerCase()).not.toContain('secure');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      user: { id: a.user.id, email: a.user.email, name: a.user.name, role: 'owner' },
      tenant: { id: a.tenant.id, slug: a.tenant.slug, name: a.tenant.name, tier: 'team' },
      csrf_token: expect.any(String),
    });
  });

  it('wrong password and unknown email get the same 401', async ({ url, a }) => {
    const wrong = await call(url, 'POST', '/auth/login', {
      body: { email: a.user.email, password: 'nope-nope' },
    });
    const unknown = await call(url, 'POST', '/auth/login', {
      body: { email: 'nobody@example.com', password: 'nope-nope' },
    });
    expectDetail(wrong, 401);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('GET /auth/session answers the live session; logout (204, CSRF) ends it', async ({ url, a }) => {
    const login = await loginOverHttp(url, a.user.email, a.password);
    const live = await call(url, 'GET', '/auth/session', { headers: session(login, false) });
    expect(live.status).toBe(200);
    expect(live.body.csrf_token).toBe(login.csrf);
    expectDetail(await call(url, 'POST', '/auth/logout', { headers: session(login, false) }), 403);
    const out = await call(url, 'POST', '/auth/logout', { headers: session(login) });
    expect(out.status).toBe(204);
    expectDetail(await call(url, 'GET', '/auth/session', { headers: session(login, false) }), 401);
    expectDetail(
      await call(url, 'POST', '/api/v1/tokens', {
        headers: session(login),
        body: { name: 'x', scope: 'read' },
      }),
      401,
    );
  });

  it('an HTML form login redirects (303) to a safe next page, or back to /login', async ({
    url,
    a,
    aLogin,
  }) => {
    const form = (email: string, password: string, next: string) =>
      call(url, 'POST', '/auth/login', {
        rawBody: new URLSearchParams({ email, password, next }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const ok = await form(a.user.email, a.password, '/settings/tokens');
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/settings/tokens');
    const offsite = await form(a.user.email, a.password, '//evil.example.com');
    expect(offsite.headers.get('location')).toBe('/');
    // Browsers strip tabs and newlines and read \ as /: each of these would leave the origin.
    for (const next of ['/\t/evil.example', '/\\evil.example', '/\n/evil.example', '/.//evil.example']) {
      const r = await form(a.user.email, a.password, next);
      expect(r.headers.get('location'), JSON.stringify(next)).toBe('/');
    }
    // The sign-in page itself, already signed in: ?next=/%09/evil.example was Location "/\t/evil.example".
    for (const next of [
      '/%09/evil.example',
      '%2F%2Fevil.example',
      '/%5Cevil.example',
      'https:%2F%2Fevil.example',
    ]) {
      const r = await call(url, 'GET', `/login?next=${next}`, { headers: { cookie: aLogin.cookie } });
      expect(r.status).toBe(302);
      expect(new URL(r.headers.get('location')!, url).origin, next).toBe(new URL(url).origin);
    }
    const bad = await form(a.user.email, 'wrong-pass', '/settings/tokens');
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toMatch(/^\/login\?error=1/);
  });

  it('pages redirect to /login without a session and render with one', async ({ url, aLogin, aRead }) => {
    const anon = await call(url, 'GET', '/settings/tokens');
    expect(anon.status).toBe(302);
    expect(anon.headers.get('location')).toBe('/login?next=%2Fsettings%2Ftokens');
    const page = await call(url, 'GET', '/settings/tokens', { headers: { cookie: aLogin.cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain(`content="${aLogin.csrf}"`);
    expect(page.text).not.toContain(aRead);
  });
});
