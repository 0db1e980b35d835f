import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of decisions.md "Wave 3", "Credentials a sender can carry" (issue 25): wherever a
// bearer token is accepted, HTTP Basic with the token as the password is accepted too, under the same
// rules (scope, tenant, 401 for a missing/invalid/expired/revoked token). Real API and worker
// processes, HTTP only, from the contract alone.

let svc: SplitServices;
let base = '';
let a: TestMember;
let b: TestMember;
let aRw = { token: '', id: '' };
let aRo = { token: '', id: '' };
let bRw = { token: '', id: '' };

const basic = (password: string, user = 'opsi') =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

/** A request carrying `authorization` as given (no bearer token added). */
const withAuth = (method: string, path: string, authorization: string | undefined, body?: unknown) =>
  call(base, method, path, {
    ...(authorization !== undefined ? { headers: { authorization } } : {}),
    ...(body !== undefined ? { body } : {}),
  });

function expectDetail(res: { status: number; body: any; text: string }, status: number) {
  expect(res.status, res.text).toBe(status);
  expect(typeof res.body?.detail, res.text).toBe('string');
  expect(res.body.detail.length).toBeGreaterThan(0);
}

async function incidentTitles(token: string): Promise<string[]> {
  const res = await call(base, 'GET', '/api/v1/incidents?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  return (res.body.incidents as Array<{ title: string }>).map((i) => i.title);
}

beforeAll(async () => {
  svc = await startSplitServices();
  base = svc.base;
  a = await createTenantWithUser(svc.t, { tier: 'team' });
  b = await createTenantWithUser(svc.t, { tier: 'team' });
  aRw = await mintTestToken(svc.t, a, 'read_write');
  aRo = await mintTestToken(svc.t, a, 'read');
  bRw = await mintTestToken(svc.t, b, 'read_write');
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe('HTTP Basic with the token as the password (decisions.md Wave 3: "Credentials a sender can carry")', () => {
  it('a read endpoint (GET /api/v1/me) answers for Basic as for Bearer, whatever the user part', async () => {
    const bearer = await call(base, 'GET', '/api/v1/me', { token: aRw.token });
    expect(bearer.status, bearer.text).toBe(200);
    for (const user of ['opsi', 'anything-at-all', '']) {
      const res = await withAuth('GET', '/api/v1/me', basic(aRw.token, user));
      expect(res.status, `user "${user}": ${res.text}`).toBe(200);
      expect(res.body.tenant.id).toBe(a.tenant.id);
      expect(res.body.user.id).toBe(a.user.id);
      expect(res.body.token.id).toBe(aRw.id);
      expect(res.body.token.scope).toBe('read_write');
    }
    const ro = await withAuth('GET', '/api/v1/me', basic(aRo.token));
    expect(ro.status, ro.text).toBe(200);
    expect(ro.body.token).toMatchObject({ id: aRo.id, scope: 'read' });
  });

  it("a write endpoint (POST /api/v1/incidents) takes a read_write token as Basic: 201, and the incident is the tenant's", async () => {
    const title = `basic-write-${randomBytes(4).toString('hex')}`;
    const res = await withAuth('POST', '/api/v1/incidents', basic(aRw.token), { title });
    expect(res.status, res.text).toBe(201);
    expect(res.body.title).toBe(title);
    expect(await incidentTitles(aRw.token)).toContain(title);
    expect(await incidentTitles(bRw.token)).not.toContain(title);
  });

  it("POST /api/v1/triage/alerts (the SNS/webhook sender's endpoint) takes Basic: 202", async () => {
    const res = await withAuth('POST', '/api/v1/triage/alerts', basic(aRw.token), {
      title: `basic-alert-${randomBytes(3).toString('hex')}`,
      severity: 'low',
      source: 'basic-auth-check',
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(1);
  });

  it('a read-scoped token as Basic on a write is 403 {detail}, and nothing is created', async () => {
    const title = `basic-ro-${randomBytes(4).toString('hex')}`;
    const res = await withAuth('POST', '/api/v1/incidents', basic(aRo.token), { title });
    expectDetail(res, 403);
    expect(await incidentTitles(aRw.token)).not.toContain(title);
    // ...and on agent invocation (a GET that needs read_write)
    const stream = await withAuth('GET', '/api/v1/stream/attach?session_id=nope', basic(aRo.token));
    expectDetail(stream, 403);
  });

  it('wrong, unknown, malformed or missing Basic credentials are 401 {detail}, on a read and on a write', async () => {
    const title = `basic-bad-${randomBytes(4).toString('hex')}`;
    const wrong = `opsi_${randomBytes(32).toString('base64url')}`;
    const cases: Array<[string, string | undefined]> = [
      ['unknown token', basic(wrong)],
      [
        'token with a character changed',
        basic(aRw.token.slice(0, -1) + (aRw.token.endsWith('A') ? 'B' : 'A')),
      ],
      ['empty password', basic('')],
      ['no password part', `Basic ${Buffer.from('opsi').toString('base64')}`],
      ['not base64', 'Basic !!!not-base64!!!'],
      ['Basic without a value', 'Basic'],
      ['no Authorization header', undefined],
    ];
    for (const [what, auth] of cases) {
      const r = await withAuth('GET', '/api/v1/me', auth);
      expect(r.status, `${what} on a read: ${r.text}`).toBe(401);
      expect(typeof r.body?.detail, `${what}: ${r.text}`).toBe('string');
      const w = await withAuth('POST', '/api/v1/incidents', auth, { title });
      expect(w.status, `${what} on a write: ${w.text}`).toBe(401);
      expect(typeof w.body?.detail, `${what}: ${w.text}`).toBe('string');
    }
    expect(await incidentTitles(aRw.token)).not.toContain(title);
  });

  it('a revoked token as Basic is 401 {detail} on the very next request', async () => {
    const m = await mintTestToken(svc.t, a, 'read_write', { name: 'basic-revoke' });
    expect((await withAuth('GET', '/api/v1/me', basic(m.token))).status).toBe(200);
    const del = await withAuth('DELETE', `/api/v1/tokens/${m.id}`, basic(m.token));
    expect(del.status, del.text).toBe(204);
    expectDetail(await withAuth('GET', '/api/v1/me', basic(m.token)), 401);
    expectDetail(await withAuth('POST', '/api/v1/incidents', basic(m.token), { title: 'after-revoke' }), 401);
  });

  it('an expired token as Basic is 401 {detail} (operator `token expire`)', async () => {
    const m = await mintTestToken(svc.t, a, 'read_write', { name: 'basic-expire' });
    expect((await withAuth('GET', '/api/v1/me', basic(m.token))).status).toBe(200);
    await svc.admin(['token', 'expire', m.id]);
    expectDetail(await withAuth('GET', '/api/v1/me', basic(m.token)), 401);
  });

  it("tenant isolation holds with Basic: another tenant's incident is 404, naming another tenant is 403", async () => {
    const bTitle = `b-only-${randomBytes(4).toString('hex')}`;
    const created = await call(base, 'POST', '/api/v1/incidents', {
      token: bRw.token,
      body: { title: bTitle },
    });
    expect(created.status, created.text).toBe(201);
    const bId = created.body.id as string;

    const get = await withAuth('GET', `/api/v1/incidents/${bId}`, basic(aRw.token));
    expectDetail(get, 404);
    const list = await withAuth('GET', '/api/v1/incidents?limit=500', basic(aRw.token));
    expect(list.status, list.text).toBe(200);
    expect(list.body.incidents.map((i: any) => i.id)).not.toContain(bId);

    const named = await call(base, 'GET', '/api/v1/incidents', {
      headers: { authorization: basic(aRw.token), 'x-tenant-id': b.tenant.id },
    });
    expectDetail(named, 403);
    const bySlug = await withAuth('GET', `/api/v1/incidents?tenant_id=${b.tenant.slug}`, basic(aRw.token));
    expectDetail(bySlug, 403);
    const inBody = await withAuth('POST', '/api/v1/incidents', basic(aRw.token), {
      title: 'cross-tenant',
      tenant_id: b.tenant.id,
    });
    expectDetail(inBody, 403);
    expect(await incidentTitles(bRw.token)).not.toContain('cross-tenant');

    // B's own token as Basic sees it.
    const own = await withAuth('GET', `/api/v1/incidents/${bId}`, basic(bRw.token));
    expect(own.status, own.text).toBe(200);
    expect(own.body.title).toBe(bTitle);
  });

  it('the unversioned /api/pulse group takes a read_write token as Basic like a bearer one (404 for an unknown finding, not 401), and a read one is 403', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const bearer = await call(base, 'GET', `/api/pulse/findings/${id}`, { token: aRw.token });
    const viaBasic = await withAuth('GET', `/api/pulse/findings/${id}`, basic(aRw.token));
    expect(viaBasic.status, viaBasic.text).toBe(bearer.status);
    expect(viaBasic.status).not.toBe(401);
    expectDetail(await withAuth('GET', `/api/pulse/findings/${id}`, basic(aRo.token)), 403);
  });
});
