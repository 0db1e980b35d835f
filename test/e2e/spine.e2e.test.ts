import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginOverHttp, type BrowserLogin } from '../support/index';
import { runAdmin, startService, type ServiceProcess } from '../support/processes';

// The spine end to end, the way a user runs it: `npm start` in embedded mode (no DATABASE_URL, no
// REDIS_URL, a fresh DATA_DIR), operator commands against the same DATA_DIR while the service is
// stopped, and plain HTTP from outside. Tests run in order and share the state below.

const TOKEN_FORMAT = /^opsi_[A-Za-z0-9_-]{43}$/;
const DEMO_EMAIL = 'demo@example.com';
const DEMO_PASSWORD = 'demo-password';
const OTHER_EMAIL = 'owner@other.example.com';
const OTHER_PASSWORD = 'other-password-1';
const CREATED_KEYS = ['created_at', 'expires_at', 'id', 'name', 'scope', 'token', 'token_hint'];
const METADATA_KEYS = [
  'created_at',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'revoked_at',
  'scope',
  'token_hint',
];
const DAY_MS = 86_400_000;

interface Minted {
  id: string;
  name: string;
  scope: 'read' | 'read_write';
  token: string;
  token_hint: string;
  created_at: string;
  expires_at: string | null;
}

interface AuditEntry {
  id: string;
  seq: number;
  action: string;
  target_id: string | null;
  actor: { type: string; id: string | null };
  prev_hash: string;
  hash: string;
}

type Response = Awaited<ReturnType<typeof call>>;

let dataDir = '';
let service: ServiceProcess | undefined;
let adminTenant: Awaited<ReturnType<typeof runAdmin>>;
let adminUser: Awaited<ReturnType<typeof runAdmin>>;

let demoLogin: BrowserLogin;
let otherLogin: BrowserLogin;
let demoTenantId = '';
const otherTenant = { id: '', slug: 'other' };
let otherUserId = '';

// Demo tenant tokens, by role in the story.
let read: Minted; // read scope, lives through the whole file
let readWrite: Minted; // read_write with an expiry, lives through the whole file
let revoked: Minted; // revoked by readWrite
let selfRevoked: Minted; // read_write, revokes itself
let toExpire: Minted; // expired by the operator while the service is stopped
// The other tenant's token; its user is deleted while the service is stopped.
let otherToken: Minted;

const base = () => service!.url;
const demoMinted = () => [read, readWrite, revoked, selfRevoked, toExpire];
const allSecrets = () => [...demoMinted(), otherToken].map((t) => t.token);

const env = () => ({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });

async function mint(login: BrowserLogin, body: Record<string, unknown>): Promise<Minted> {
  const res = await call(base(), 'POST', '/api/v1/tokens', {
    body,
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Minted;
}

function expectDetail(res: Response, status: number) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({ detail: expect.any(String) });
  expect(res.body.detail.length).toBeGreaterThan(0);
}

async function me(token: string) {
  return call(base(), 'GET', '/api/v1/me', { token });
}

async function listTokens(token: string) {
  const res = await call(base(), 'GET', '/api/v1/tokens', { token });
  expect(res.status, res.text).toBe(200);
  return res;
}

async function auditEntries(token: string): Promise<AuditEntry[]> {
  const res = await call(base(), 'GET', '/api/v1/audit?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.entries as AuditEntry[];
}

/** Newest first, seq strictly decreasing by one, each entry chained to the one before it. */
function expectChained(entries: AuditEntry[]) {
  for (const e of entries) {
    expect(e).toMatchObject({
      seq: expect.any(Number),
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  }
  for (let i = 1; i < entries.length; i++) {
    expect(entries[i]!.seq).toBe(entries[i - 1]!.seq - 1);
    expect(entries[i - 1]!.prev_hash).toBe(entries[i]!.hash);
  }
  expect(entries.at(-1)!.seq).toBe(1);
  expect(entries.at(-1)!.prev_hash).toBe('0'.repeat(64));
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'opsi-spine-e2e-'));
  // Operator commands before the first start: they work on the embedded database directly.
  adminTenant = await runAdmin(['tenant', 'create', 'other', '--tier', 'team'], env());
  adminUser = await runAdmin(
    ['user', 'create', '--tenant', 'other', '--email', OTHER_EMAIL, '--password', OTHER_PASSWORD],
    env(),
  );
  service = await startService(env());
});

afterAll(async () => {
  try {
    await service?.stop();
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});

describe('spine end to end (npm start, embedded mode)', () => {
  it('operator commands work on the embedded database before the first start, one JSON object each', () => {
    expect(adminTenant.code, adminTenant.stderr).toBe(0);
    expect(adminTenant.stdout.trim().split('\n')).toHaveLength(1);
    expect(adminTenant.json?.tenant).toMatchObject({ slug: 'other', tier: 'team', id: expect.any(String) });
    otherTenant.id = adminTenant.json!.tenant.id;

    expect(adminUser.code, adminUser.stderr).toBe(0);
    expect(adminUser.stdout.trim().split('\n')).toHaveLength(1);
    expect(adminUser.json?.user).toMatchObject({
      email: OTHER_EMAIL,
      tenant_id: otherTenant.id,
      id: expect.any(String),
    });
    expect(adminUser.json!.user).not.toHaveProperty('password_hash');
    otherUserId = adminUser.json!.user.id;
  });

  it('first start names its URL and the seeded demo login', () => {
    const out = service!.output();
    expect(out).toContain(`running at ${base()}`);
    expect(out).toContain(`${DEMO_EMAIL} / ${DEMO_PASSWORD}`);
  });

  it('signs in over HTTP and mints tokens from the browser session; the secret is shown once', async () => {
    demoLogin = await loginOverHttp(base(), DEMO_EMAIL, DEMO_PASSWORD);
    otherLogin = await loginOverHttp(base(), OTHER_EMAIL, OTHER_PASSWORD);

    read = await mint(demoLogin, { name: 'ci read', scope: 'read' });
    expect(Object.keys(read).sort()).toEqual(CREATED_KEYS);
    expect(read).toMatchObject({ name: 'ci read', scope: 'read', expires_at: null });
    expect(read.token).toMatch(TOKEN_FORMAT);
    expect(read.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(read.token.startsWith(read.token_hint)).toBe(true);
    expect(read.token_hint.length).toBeLessThan(read.token.length);
    expect(Number.isNaN(Date.parse(read.created_at))).toBe(false);

    readWrite = await mint(demoLogin, { name: 'ci deploy', scope: 'read_write', expires_in_days: 30 });
    expect(Object.keys(readWrite).sort()).toEqual(CREATED_KEYS);
    expect(readWrite).toMatchObject({ name: 'ci deploy', scope: 'read_write' });
    expect(readWrite.token).toMatch(TOKEN_FORMAT);
    expect(readWrite.expires_at).toEqual(expect.any(String));
    const lifetime = Date.parse(readWrite.expires_at!) - Date.parse(readWrite.created_at);
    expect(Math.abs(lifetime - 30 * DAY_MS)).toBeLessThan(DAY_MS / 24);

    revoked = await mint(demoLogin, { name: 'to revoke', scope: 'read' });
    selfRevoked = await mint(demoLogin, { name: 'revokes itself', scope: 'read_write' });
    toExpire = await mint(demoLogin, { name: 'to expire', scope: 'read' });
    otherToken = await mint(otherLogin, { name: 'other tenant', scope: 'read_write' });

    // Every secret is distinct and well formed.
    expect(new Set(allSecrets()).size).toBe(6);
    for (const s of allSecrets()) expect(s).toMatch(TOKEN_FORMAT);

    const mine = await me(read.token);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body).toMatchObject({
      user: { email: DEMO_EMAIL, role: 'owner' },
      tenant: { slug: 'demo', tier: 'team' },
      token: { id: read.id, scope: 'read', expires_at: null },
    });
    demoTenantId = mine.body.tenant.id;
    expect(demoTenantId).not.toBe(otherTenant.id);

    const theirs = await me(otherToken.token);
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body).toMatchObject({
      user: { id: otherUserId, email: OTHER_EMAIL },
      tenant: { id: otherTenant.id, slug: 'other' },
      token: { id: otherToken.id, scope: 'read_write' },
    });
  });

  it('GET /api/v1/version needs no token and ignores the Authorization header', async () => {
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer garbage' },
      { authorization: 'Basic xyz' },
    ];
    for (const headers of variants) {
      const res = await call(base(), 'GET', '/api/v1/version', { headers });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        service: expect.any(String),
        api_version: 'v1',
        revision: expect.any(String),
      });
    }
  });

  it('answers 401 {detail} for a missing, invalid or malformed credential', async () => {
    expectDetail(await call(base(), 'GET', '/api/v1/me'), 401);
    expectDetail(await me('garbage'), 401);
    expectDetail(await me(`ghp_${randomBytes(32).toString('base64url')}`), 401);
    expectDetail(await me(`opsi_${randomBytes(32).toString('base64url')}`), 401);
    expectDetail(await call(base(), 'GET', '/api/v1/me', { headers: { authorization: 'Basic xyz' } }), 401);
    expectDetail(await call(base(), 'GET', '/api/v1/me', { headers: { authorization: 'Bearer' } }), 401);
    // A token's secret without the scheme is not a bearer credential either.
    expectDetail(await call(base(), 'GET', '/api/v1/me', { headers: { authorization: read.token } }), 401);
    // Under /api/v1 a browser session cookie alone authenticates only the mint endpoint.
    expectDetail(await call(base(), 'GET', '/api/v1/me', { headers: { cookie: demoLogin.cookie } }), 401);
    expectDetail(
      await call(base(), 'GET', '/api/v1/tokens', {
        headers: { cookie: demoLogin.cookie, 'x-csrf-token': demoLogin.csrf },
      }),
      401,
    );
    // A bad Authorization header never falls through to the browser session, even on the mint endpoint.
    for (const authorization of ['Basic xyz', 'Bearer', 'Bearer garbage', `Bearer opsi_${'A'.repeat(43)}`]) {
      expectDetail(
        await call(base(), 'POST', '/api/v1/tokens', {
          body: { name: 'nope', scope: 'read' },
          headers: { authorization, cookie: demoLogin.cookie, 'x-csrf-token': demoLogin.csrf },
        }),
        401,
      );
    }
    // The same endpoints answer a good token (the 401s above are about the credential).
    expect((await me(read.token)).status).toBe(200);
  });

  it('revocation is immediate, and a token may revoke itself', async () => {
    expect((await me(revoked.token)).status).toBe(200);
    const del = await call(base(), 'DELETE', `/api/v1/tokens/${revoked.id}`, { token: readWrite.token });
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expectDetail(await me(revoked.token), 401);

    expect((await me(selfRevoked.token)).status).toBe(200);
    const self = await call(base(), 'DELETE', `/api/v1/tokens/${selfRevoked.id}`, {
      token: selfRevoked.token,
    });
    expect(self.status, self.text).toBe(204);
    expectDetail(await me(selfRevoked.token), 401);
    expectDetail(
      await call(base(), 'DELETE', `/api/v1/tokens/${selfRevoked.id}`, { token: selfRevoked.token }),
      401,
    );
  });

  it('answers 403 {detail} for a valid credential with insufficient rights', async () => {
    // A read token cannot mutate (the target is already revoked, so a wrong 2xx would change nothing).
    expectDetail(await call(base(), 'DELETE', `/api/v1/tokens/${revoked.id}`, { token: read.token }), 403);
    // No token can mint a token, whatever its scope.
    for (const token of [readWrite.token, read.token]) {
      expectDetail(
        await call(base(), 'POST', '/api/v1/tokens', { token, body: { name: 'nope', scope: 'read' } }),
        403,
      );
    }
    // A cookie-authenticated mutation needs the session's X-CSRF-Token.
    expectDetail(
      await call(base(), 'POST', '/api/v1/tokens', {
        body: { name: 'nope', scope: 'read' },
        headers: { cookie: demoLogin.cookie },
      }),
      403,
    );
    expectDetail(
      await call(base(), 'POST', '/api/v1/tokens', {
        body: { name: 'nope', scope: 'read' },
        headers: { cookie: demoLogin.cookie, 'x-csrf-token': `${demoLogin.csrf}x` },
      }),
      403,
    );
    expectDetail(
      await call(base(), 'POST', '/api/v1/tokens', {
        body: { name: 'nope', scope: 'read' },
        headers: { cookie: demoLogin.cookie, 'x-csrf-token': otherLogin.csrf },
      }),
      403,
    );

    // Naming another tenant, by slug or id, in a header, the query or the body.
    for (const named of [otherTenant.slug, otherTenant.id]) {
      expectDetail(
        await call(base(), 'GET', '/api/v1/me', { token: read.token, headers: { 'x-tenant-id': named } }),
        403,
      );
      expectDetail(
        await call(base(), 'GET', `/api/v1/me?tenant_id=${encodeURIComponent(named)}`, { token: read.token }),
        403,
      );
      expectDetail(
        await call(base(), 'GET', `/api/v1/tokens?tenant_id=${encodeURIComponent(named)}`, {
          token: readWrite.token,
        }),
        403,
      );
      expectDetail(
        await call(base(), 'POST', '/api/v1/tokens', {
          body: { name: 'nope', scope: 'read', tenant_id: named },
          headers: { cookie: demoLogin.cookie, 'x-csrf-token': demoLogin.csrf },
        }),
        403,
      );
      // With a token too, on a route that takes no body (the target is already revoked).
      expectDetail(
        await call(base(), 'DELETE', `/api/v1/tokens/${revoked.id}`, {
          token: readWrite.token,
          body: { tenant_id: named },
        }),
        403,
      );
    }
    // Naming one's own tenant is fine, so the 403s above are about the other tenant.
    for (const own of ['demo', demoTenantId]) {
      const res = await call(base(), 'GET', `/api/v1/me?tenant_id=${own}`, {
        token: read.token,
        headers: { 'x-tenant-id': own },
      });
      expect(res.status, res.text).toBe(200);
      const del = await call(base(), 'DELETE', `/api/v1/tokens/${revoked.id}`, {
        token: readWrite.token,
        body: { tenant_id: own },
      });
      expect(del.status, del.text).toBe(204);
    }
  });

  it("answers 404 for another tenant's token id, exactly as for an id that does not exist", async () => {
    const foreign = await call(base(), 'DELETE', `/api/v1/tokens/${otherToken.id}`, {
      token: readWrite.token,
    });
    expectDetail(foreign, 404);
    const missing = await call(base(), 'DELETE', `/api/v1/tokens/${randomUUID()}`, {
      token: readWrite.token,
    });
    expectDetail(missing, 404);
    expect(foreign.body.detail).toBe(missing.body.detail);
    // And the other tenant's token was left alone.
    const theirs = await me(otherToken.token);
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.tenant.slug).toBe('other');
  });

  it('lists token metadata only: never the secret nor its hash; last_used_at follows use', async () => {
    let res = await listTokens(read.token);
    const unused = (res.body.tokens as Array<Record<string, unknown>>).find((t) => t.id === toExpire.id);
    expect(unused?.last_used_at).toBeNull();

    expect((await me(toExpire.token)).status).toBe(200);
    res = await listTokens(read.token);
    const tokens = res.body.tokens as Array<Record<string, unknown>>;

    // Only this user's tokens (none of the other tenant's), every one of them, and nothing minted by
    // the refused calls above.
    expect(tokens.map((t) => t.id).sort()).toEqual(
      demoMinted()
        .map((t) => t.id)
        .sort(),
    );
    for (const t of tokens) {
      expect(Object.keys(t).sort()).toEqual(METADATA_KEYS);
      expect(t).not.toHaveProperty('token');
      expect(t).not.toHaveProperty('token_hash');
      for (const value of Object.values(t)) {
        for (const secret of allSecrets()) expect(String(value)).not.toContain(secret);
      }
    }
    for (const secret of allSecrets()) expect(res.text).not.toContain(secret);

    const byId = new Map(tokens.map((t) => [t.id as string, t]));
    for (const m of demoMinted()) {
      expect(byId.get(m.id)).toMatchObject({
        name: m.name,
        scope: m.scope,
        token_hint: m.token_hint,
        created_at: m.created_at,
        expires_at: m.expires_at,
      });
    }
    for (const m of [read, readWrite, toExpire]) {
      expect(byId.get(m.id)!.last_used_at, m.name).toEqual(expect.any(String));
      expect(byId.get(m.id)!.revoked_at, m.name).toBeNull();
    }
    for (const m of [revoked, selfRevoked])
      expect(byId.get(m.id)!.revoked_at, m.name).toEqual(expect.any(String));

    // The other user sees their own token only.
    const theirs = await listTokens(otherToken.token);
    expect((theirs.body.tokens as Array<{ id: string }>).map((t) => t.id)).toEqual([otherToken.id]);
    for (const secret of allSecrets()) expect(theirs.text).not.toContain(secret);
  });

  it("records mint and revoke in the tenant's hash-chained audit log, and the chain verifies", async () => {
    const entries = await auditEntries(read.token);
    expectChained(entries);
    for (const secret of allSecrets()) expect(JSON.stringify(entries)).not.toContain(secret);

    const minted = entries.filter((e) => e.action === 'token.minted').map((e) => e.target_id);
    expect(minted.sort()).toEqual(
      demoMinted()
        .map((t) => t.id)
        .sort(),
    );
    const revokedIds = entries.filter((e) => e.action === 'token.revoked').map((e) => e.target_id);
    expect(revokedIds.sort()).toEqual([revoked.id, selfRevoked.id].sort());
    // Newest first: the self-revocation came after the other revocation and after every mint.
    const order = entries.map((e) => `${e.action}:${e.target_id}`);
    expect(order.indexOf(`token.revoked:${selfRevoked.id}`)).toBeLessThan(
      order.indexOf(`token.revoked:${revoked.id}`),
    );
    expect(order.indexOf(`token.revoked:${revoked.id}`)).toBeLessThan(
      order.indexOf(`token.minted:${read.id}`),
    );

    // Nothing of the other tenant's.
    for (const e of entries) {
      expect(e.target_id).not.toBe(otherToken.id);
      expect(e.actor.id).not.toBe(otherUserId);
    }

    const verify = await call(base(), 'GET', '/api/v1/audit/verify', { token: read.token });
    expect(verify.status, verify.text).toBe(200);
    expect(verify.body).toEqual({ valid: true, checked: entries.length, first_invalid_id: null });

    // The other tenant has a chain of its own.
    const theirs = await auditEntries(otherToken.token);
    expectChained(theirs);
    expect(theirs.map((e) => `${e.action}:${e.target_id}`)).toEqual([`token.minted:${otherToken.id}`]);
  });

  it('lists the team with roles, tenant by tenant', async () => {
    const res = await call(base(), 'GET', '/api/v1/team', { token: read.token });
    expect(res.status, res.text).toBe(200);
    const members = res.body.members as Array<{ email: string; role: string }>;
    expect(members).toEqual([expect.objectContaining({ email: DEMO_EMAIL, role: 'owner' })]);
    expect(res.text).not.toContain(OTHER_EMAIL);

    const theirs = await call(base(), 'GET', '/api/v1/team', { token: otherToken.token });
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.members).toEqual([
      expect.objectContaining({ id: otherUserId, email: OTHER_EMAIL, role: 'member' }),
    ]);
    expect(theirs.text).not.toContain(DEMO_EMAIL);
  });

  it('after a clean stop, operator expiry and user deletion, a restart keeps the data and rejects those tokens', async () => {
    expect(await service!.stop()).toBe(0);
    service = undefined;

    const expired = await runAdmin(['token', 'expire', toExpire.id], env());
    expect(expired.code, expired.stderr).toBe(0);
    expect(expired.stdout.trim().split('\n')).toHaveLength(1);
    expect(expired.json?.token).toMatchObject({
      id: toExpire.id,
      revoked_at: null,
      expires_at: expect.any(String),
    });
    expect(expired.stdout).not.toContain(toExpire.token);

    const deleted = await runAdmin(['user', 'delete', '--tenant', 'other', '--email', OTHER_EMAIL], env());
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout.trim().split('\n')).toHaveLength(1);
    expect(deleted.json?.user).toMatchObject({ id: otherUserId, deleted_at: expect.any(String) });

    service = await startService(env());

    // Expired by the operator, and of a deleted user: 401.
    const exp = await me(toExpire.token);
    expectDetail(exp, 401);
    expectDetail(await me(otherToken.token), 401);
    expectDetail(await call(base(), 'GET', '/api/v1/tokens', { token: otherToken.token }), 401);
    // Revoked before the restart: still 401.
    expectDetail(await me(revoked.token), 401);
    expectDetail(await me(selfRevoked.token), 401);
    // A deleted user cannot sign in any more.
    const relogin = await call(base(), 'POST', '/auth/login', {
      body: { email: OTHER_EMAIL, password: OTHER_PASSWORD },
    });
    expectDetail(relogin, 401);

    // Tokens minted before the restart still work: the data persisted.
    const readMe = await me(read.token);
    expect(readMe.status, readMe.text).toBe(200);
    expect(readMe.body).toMatchObject({ user: { email: DEMO_EMAIL }, token: { id: read.id } });
    const rwMe = await me(readWrite.token);
    expect(rwMe.status, rwMe.text).toBe(200);
    expect(rwMe.body.token).toMatchObject({
      id: readWrite.id,
      scope: 'read_write',
      expires_at: readWrite.expires_at,
    });
    // The browser session persisted too, and minting still needs it.
    const fresh = await mint(demoLogin, { name: 'after restart', scope: 'read' });
    expect(fresh.token).toMatch(TOKEN_FORMAT);
    expect((await me(fresh.token)).status).toBe(200);

    // The expired token reads as expired, not revoked.
    const list = await listTokens(read.token);
    const exp2 = (list.body.tokens as Array<Record<string, unknown>>).find((t) => t.id === toExpire.id);
    expect(exp2).toMatchObject({ revoked_at: null, expires_at: expect.any(String) });
    for (const secret of [...allSecrets(), fresh.token]) expect(list.text).not.toContain(secret);

    // The audit chain survived the restart and records the operator's expiry.
    const entries = await auditEntries(read.token);
    expectChained(entries);
    expect(entries.map((e) => `${e.action}:${e.target_id}`)).toEqual(
      expect.arrayContaining([
        `token.expired:${toExpire.id}`,
        `token.minted:${fresh.id}`,
        ...demoMinted().map((t) => `token.minted:${t.id}`),
        `token.revoked:${revoked.id}`,
        `token.revoked:${selfRevoked.id}`,
      ]),
    );
    for (const e of entries) expect(e.actor.id).not.toBe(otherUserId);
    expect(entries.some((e) => e.action === 'user.deleted')).toBe(false);
    const verify = await call(base(), 'GET', '/api/v1/audit/verify', { token: read.token });
    expect(verify.status, verify.text).toBe(200);
    expect(verify.body).toEqual({ valid: true, checked: entries.length, first_invalid_id: null });
  });
});
