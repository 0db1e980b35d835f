import { describe, expect } from 'vitest';
import { createPostgresDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import { call } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';
import { createApiRuntime } from './runtime';
import { startApi } from './server';

// A dependency that is down must answer 503 {detail} promptly; an input Postgres cannot store must
// answer 400 naming the field, before anything is written.

// Tenant A's owner: a read_write token (`token`) and a browser session (`cookie`, `csrf`); `counts()`,
// the rows that any of the requests below could write.
const it = apiTest
  .extend('cookie', async ({ aLogin }) => aLogin.cookie)
  .extend('csrf', async ({ aLogin }) => aLogin.csrf)
  .extend('counts', async ({ t }) => async () => {
    const tables = ['agent_sessions', 'agent_runs', 'agent_messages', 'learnings', 'api_tokens', 'audit_log'];
    const out: Record<string, number> = {};
    for (const table of tables) {
      const row = await t.db
        .selectFrom(table as 'agent_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      out[table] = Number(row.n);
    }
    return out;
  });

describe('a NUL character (U+0000) in any string input', () => {
  const NUL = 'a\u0000b';
  const cases: Array<
    [string, string, string, Record<string, unknown> | undefined, 'token' | 'session' | 'none', RegExp]
  > = [
    ['login email', 'POST', '/auth/login', { email: NUL, password: 'x' }, 'none', /body\.email/],
    ['login password', 'POST', '/auth/login', { email: 'a@b.c', password: NUL }, 'none', /body\.password/],
    ['prompt', 'POST', '/api/v1/ask', { prompt: NUL }, 'token', /body\.prompt/],
    ['session name', 'POST', '/api/v1/sessions', { name: NUL }, 'token', /body\.name/],
    ['learning fact', 'POST', '/api/v1/learnings', { fact: NUL, service: 'api' }, 'token', /body\.fact/],
    ['learning service', 'POST', '/api/v1/learnings', { fact: 'f', service: NUL }, 'token', /body\.service/],
    ['token name', 'POST', '/api/v1/tokens', { name: NUL, scope: 'read' }, 'session', /body\.name/],
    [
      'a nested value',
      'POST',
      '/api/v1/ask',
      { prompt: 'p', selected_tools: [NUL] },
      'token',
      /body\.selected_tools\.0/,
    ],
    ['a field name', 'POST', '/api/v1/sessions', { [NUL]: 'x' }, 'token', /field name/],
    [
      'a query parameter',
      'GET',
      `/api/v1/stream?prompt=${encodeURIComponent(NUL)}`,
      undefined,
      'token',
      /query\.prompt/,
    ],
    [
      'a query parameter of a read',
      'GET',
      `/api/v1/history?session_id=${encodeURIComponent(NUL)}`,
      undefined,
      'token',
      /query\.session_id/,
    ],
    [
      'a path parameter',
      'PATCH',
      `/api/v1/sessions/${encodeURIComponent(NUL)}`,
      { name: 'x' },
      'token',
      /path\.id/,
    ],
  ];
  it.for(cases)(
    '%s → 400 naming the field, nothing written',
    async ([, method, path, body, auth, field], { api, aWrite: token, cookie, csrf, counts }) => {
      const before = await counts();
      const headers: Record<string, string> = auth === 'session' ? { cookie, 'x-csrf-token': csrf } : {};
      const res = await call(api.url, method, path, {
        ...(auth === 'token' ? { token } : {}),
        headers,
        ...(body ? { body } : {}),
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(field);
      expect(res.body.detail).toMatch(/NUL/);
      expect(await counts()).toEqual(before);
    },
  );

  it('bytes that are not UTF-8, and lone surrogates, → 400, nothing written', async ({
    api,
    aWrite: token,
    counts,
  }) => {
    const before = await counts();
    const raw = Buffer.concat([Buffer.from('{"name": "a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const bytes = await fetch(`${api.url}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: raw,
    });
    expect(bytes.status).toBe(400);
    expect(((await bytes.json()) as { detail: string }).detail).toMatch(/UTF-8/);
    const surrogate = await call(api.url, 'POST', '/api/v1/sessions', {
      token,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"name": "a\\ud800b"}',
    });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.detail).toMatch(/body\.name.*Unicode/);
    expect(await counts()).toEqual(before);
  });

  it('a body nested thousands deep → 400, not a crash', async ({ api, aWrite: token }) => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const res = await call(api.url, 'POST', '/api/v1/sessions', {
      token,
      headers: { 'content-type': 'application/json' },
      rawBody: `{"name": ${deep}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/nests deeper/);
  });
});

describe('sequence numbers take decimal digits only', () => {
  it.for(['0x2', '1e3', '-1', '2.0', '+2', '0b1'])(
    'Last-Event-ID %j → 400',
    async (value, { api, aWrite: token }) => {
      const res = await call(api.url, 'GET', '/api/v1/stream/attach?session_id=s1', {
        token,
        headers: { 'last-event-id': value },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/Last-Event-ID/);
    },
  );
  it.for(['0x10', '1e3', '-1', '1.5', ''])('after_seq=%j → 400', async (value, { api, aWrite: token }) => {
    const res = await call(api.url, 'GET', `/api/v1/stream/attach?session_id=s1&after_seq=${value}`, {
      token,
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/after_seq/);
  });
  it('decimal digits are accepted (404: the session does not exist)', async ({ api, aWrite: token }) => {
    const res = await call(api.url, 'GET', '/api/v1/stream/attach?session_id=s1&after_seq=16', {
      token,
      headers: { 'last-event-id': '3' },
    });
    expect(res.status).toBe(404);
  });
});

describe('a dependency that is down answers 503 {detail}, promptly', () => {
  it('Postgres unreachable: requests that need it → 503 naming the database; /readyz says so', async ({
    aWrite: token,
    t,
  }) => {
    const deadDb = createPostgresDatabase('postgres://postgres@127.0.0.1:1/none', {
      connectionTimeoutMillis: 2000,
    });
    const runtime = createApiRuntime(t.config, t.config.REDIS_URL!, createLogger(t.config));
    const broken = await startApi({
      config: t.config,
      logger: createLogger(t.config),
      db: deadDb.db,
      redis: runtime.redis,
      runs: runtime.runs,
      revision: 'x',
    });
    try {
      for (const [method, path, body] of [
        ['GET', '/api/v1/me', undefined],
        ['POST', '/api/v1/sessions', { name: 'x' }],
        ['POST', '/auth/login', { email: 'a@b.c', password: 'x' }],
      ] as const) {
        const res = await fetch(`${broken.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(20_000),
        });
        expect([path, res.status]).toEqual([path, 503]);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/database/i);
      }
      const ready = await call(broken.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.detail).toMatch(/database/);
      expect(ready.body.checks.redis).toBe('ok');
    } finally {
      await broken.close();
      await runtime.close();
      await deadDb.close();
    }
  });

  it('Redis unreachable: /ask, /stream and /stream/attach → 503 {detail}, nothing spent or written', async ({
    api,
    aWrite: token,
    counts,
    t,
  }) => {
    const deadUrl = 'redis://127.0.0.1:1';
    const runtime = createApiRuntime(t.config, deadUrl, createLogger(t.config));
    const broken = await startApi({
      config: t.config,
      logger: createLogger(t.config),
      db: t.db,
      redis: runtime.redis,
      runs: runtime.runs,
      revision: 'x',
    });
    const sessionId = (await call(api.url, 'POST', '/api/v1/sessions', { token, body: { name: 'x' } })).body
      .id as string;
    try {
      // Let the connection find out that Redis is down (it starts by trying).
      while (runtime.redis.status !== 'reconnecting') await new Promise((r) => setTimeout(r, 50));
      const before = await counts();
      for (const [method, path, body] of [
        ['POST', '/api/v1/ask', { prompt: 'hello' }],
        ['GET', '/api/v1/stream?prompt=hello', undefined],
        ['GET', `/api/v1/stream/attach?session_id=${sessionId}`, undefined],
      ] as const) {
        const res = await fetch(`${broken.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
          // A bound, not a measurement: a request that hangs fails here.
          signal: AbortSignal.timeout(20_000),
        });
        expect([path, res.status]).toEqual([path, 503]);
        expect(res.headers.get('content-type')).toMatch(/json/);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/Redis/);
      }
      expect(await counts()).toEqual(before);
    } finally {
      await broken.close();
      await runtime.close();
    }
  });

  it('errors of a Redis connection that has not yet noticed the outage are 503 too', async () => {
    const { dependencyOutage } = await import('./http/errors');
    const dead = createRedis('redis://127.0.0.1:1', 'command');
    try {
      const err = await dead.get('x').then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(dependencyOutage(err)).toBe('redis');
    } finally {
      dead.disconnect();
    }
  });
});
