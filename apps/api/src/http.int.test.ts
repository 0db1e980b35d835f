import Koa from 'koa';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { createLogger } from '@opsi/logger';
import { call, startTestApi } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';
import { errorMiddleware } from './http/errors';
import { createHttpMetrics } from './http/metrics';
import { requestContext } from './http/request-context';

// Tenant A's owner: a read_write token, and a browser session (cookie and CSRF token).
const it = apiTest
  .override({ apiConfig: { BODY_LIMIT_BYTES: 2048 } })
  .extend('cookie', async ({ aLogin }) => aLogin.cookie)
  .extend('csrf', async ({ aLogin }) => aLogin.csrf);

describe('errors are {detail}', () => {
  it('unknown route → 404', async ({ url, aWrite: token }) => {
    for (const path of ['/nope', '/api/v1/nope', '/api/v2/version']) {
      const res = await call(url, 'GET', path, { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: expect.stringContaining(path) });
    }
  });

  it('known path, wrong method → 405 with Allow', async ({ url }) => {
    const res = await call(url, 'PUT', '/api/v1/version');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('malformed JSON → 400', async ({ url, cookie, csrf }) => {
    const res = await call(url, 'POST', '/api/v1/tokens', {
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      rawBody: '{"name": "x", ',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Malformed JSON in the request body.' });
  });

  it('wrong content type → 415', async ({ url, cookie, csrf }) => {
    const res = await call(url, 'POST', '/api/v1/tokens', {
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'text/plain' },
      rawBody: 'name=x',
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ detail: expect.stringContaining('application/json') });
  });

  it('oversized body → 413', async ({ url, cookie, csrf }) => {
    const res = await call(url, 'POST', '/api/v1/tokens', {
      headers: { cookie, 'x-csrf-token': csrf },
      body: { name: 'x'.repeat(4096), scope: 'read' },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body too large (limit 2048 bytes).' });
  });

  it('an oversized body still being streamed gets its 413, every time (declared length or chunked)', async ({
    url,
    cookie,
    csrf,
  }) => {
    // 8 MiB against a 2 KiB limit: the server refuses long before the client is done sending.
    const total = 8 * 1024 * 1024;
    for (let i = 0; i < 5; i++) {
      for (const declareLength of [true, false]) {
        const res = await streamBody(`${url}/api/v1/tokens`, total, declareLength, {
          cookie,
          'x-csrf-token': csrf,
          'content-type': 'application/json',
        });
        expect(res.status, `try ${i}, ${declareLength ? 'content-length' : 'chunked'}`).toBe(413);
        expect(JSON.parse(res.text)).toEqual({ detail: 'Request body too large (limit 2048 bytes).' });
        expect(res.headers.connection).toBe('close');
      }
    }
    // fetch (undici) with the whole body at once, as most API clients send it.
    const big = JSON.stringify({ name: 'x'.repeat(total), scope: 'read' });
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${url}/api/v1/tokens`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: big,
      });
      expect(res.status, `fetch try ${i}`).toBe(413);
      expect(await res.json()).toEqual({ detail: 'Request body too large (limit 2048 bytes).' });
    }
    // The server is fine afterwards.
    expect((await call(url, 'GET', '/api/v1/version')).status).toBe(200);
  });

  it('authentication comes before body parsing: a bad token with a bad body is 401', async ({ url }) => {
    const res = await call(url, 'DELETE', '/api/v1/tokens/x', {
      token: 'garbage',
      rawBody: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(401);
  });

  it('unexpected errors → 500 with a fixed message and the request id, nothing internal', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestContext(createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' }), createHttpMetrics()));
    app.use(errorMiddleware);
    app.use(() => {
      throw new Error('secret internals at /srv/db.ts:42');
    });
    const server = createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
      const body = (await res.json()) as { detail: string };
      const requestId = res.headers.get('x-request-id')!;
      expect(res.status).toBe(500);
      expect(body.detail).toBe(`Internal error. Quote request id ${requestId} when reporting it.`);
      expect(JSON.stringify(body)).not.toMatch(/secret|srv|db\.ts/);
    } finally {
      server.close();
    }
  });
});

describe('x-request-id', () => {
  it('is on every response, and a safe caller id is echoed', async ({ url, aWrite: token }) => {
    for (const [method, path, opts] of [
      ['GET', '/api/v1/version', {}],
      ['GET', '/api/v1/me', {}],
      ['GET', '/nope', {}],
      ['GET', '/api/v1/me', { token }],
    ] as const) {
      const res = await call(url, method, path, opts);
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    const echoed = await call(url, 'GET', '/api/v1/version', {
      headers: { 'x-request-id': 'trace-123.abc' },
    });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc');
    const unsafe = await call(url, 'GET', '/api/v1/version', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('operations endpoints', () => {
  it('/healthz and /readyz answer without authentication', async ({ url }) => {
    expect((await call(url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await call(url, 'GET', '/readyz')).body).toEqual({
      status: 'ready',
      checks: { database: 'ok', redis: 'ok' },
    });
  });

  it('/readyz → 503 {detail} when Redis is unreachable', async ({ t }) => {
    const { createRedis } = await import('@opsi/redis');
    const deadRedis = createRedis('redis://127.0.0.1:1', 'command');
    const { startApi } = await import('./server');
    const { createApiRuntime } = await import('./runtime');
    const runtime = createApiRuntime(t.config, 'redis://127.0.0.1:1', createLogger(t.config));
    const broken = await startApi({
      config: t.config,
      logger: createLogger(t.config),
      db: t.db,
      redis: deadRedis,
      runs: runtime.runs,
      revision: 'x',
    });
    try {
      const res = await call(broken.url, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/redis/);
      expect(res.body.checks.database).toBe('ok');
    } finally {
      await broken.close();
      await runtime.close();
      deadRedis.disconnect();
    }
  });

  it('/metrics counts requests by route template and status, never by raw path', async ({
    url,
    aWrite: token,
  }) => {
    await call(url, 'DELETE', '/api/v1/tokens/3f1a0c1e-0000-4000-8000-000000000000', { token });
    const res = await fetch(`${url}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/me",status="200"\} \d+/);
    expect(text).toMatch(
      /http_requests_total\{method="DELETE",route="\/api\/v1\/tokens\/:id",status="404"\} 1/,
    );
    expect(text).toMatch(/http_request_duration_seconds_bucket\{/);
    expect(text).not.toContain('3f1a0c1e');
  });

  it('/metrics can be put behind METRICS_TOKEN', async ({ t }) => {
    const guarded = await startTestApi(t, { METRICS_TOKEN: 'operator-secret-123456' });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      const ok = await fetch(`${guarded.url}/metrics`, {
        headers: { authorization: 'Bearer operator-secret-123456' },
      });
      expect(ok.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('serves the OpenAPI document built from the route declarations', async ({ url }) => {
    const res = await call(url, 'GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/version',
        '/api/v1/me',
        '/api/v1/tokens',
        '/api/v1/tokens/{id}',
        '/api/v1/team',
        '/api/v1/audit',
        '/api/v1/audit/verify',
      ]),
    );
    expect(res.body.paths['/api/v1/tokens'].post.security).toEqual([{ session: [] }]);
    expect(res.body.paths['/api/v1/tokens/{id}'].delete.security).toEqual([
      { bearer: ['read_write'] },
      { basic: ['read_write'] },
    ]);
  });
});

/**
 * POSTs `total` bytes of a JSON string in 64 KiB writes, a short pause between them, as a streaming
 * client uploads; answers the response once it has been read and the upload has finished. A write
 * that fails (the server reset the connection, EPIPE) fails it, as it fails fetch (undici).
 */
function streamBody(
  target: string,
  total: number,
  declareLength: boolean,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(target, {
      method: 'POST',
      headers: declareLength ? { ...headers, 'content-length': String(total) } : headers,
    });
    let answer: { status: number; text: string; headers: IncomingHttpHeaders } | undefined;
    let uploaded = false;
    const settle = () => answer && uploaded && resolve(answer);
    req.on('error', reject);
    req.on('finish', () => {
      uploaded = true;
      settle();
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, text, headers: res.headers };
        settle();
      });
      res.on('error', reject);
    });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    req.write('{"name":"');
    let sent = 9;
    const pump = () => {
      if (req.destroyed) return;
      if (sent >= total - 2) return void req.end('"}');
      const n = Math.min(chunk.length, total - 2 - sent);
      sent += n;
      if (req.write(chunk.subarray(0, n))) setTimeout(pump, 1);
      else req.once('drain', pump);
    };
    pump();
  });
}
