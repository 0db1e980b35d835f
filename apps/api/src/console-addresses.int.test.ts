import { describe, expect } from 'vitest';
import { apiTest } from '@opsi/test-support/api-fixture';

// Console addresses (decisions.md, Wave 3): the console's pages have real paths the API serves the
// console's frame for; an unknown path a browser asks for is the console's "not found" (404, HTML);
// the API's and the assets' paths keep their answers.

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
/** `get(path, headers)`: a browser's request with tenant A's session cookie. */
const it = apiTest.extend('get', async ({ url, aLogin }) => {
  const { cookie } = aLogin;
  return (path: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { headers: { cookie, accept: HTML, ...headers }, redirect: 'manual' });
});

describe('console addresses', () => {
  it('every page of the console answers its frame at its path (200, HTML)', async ({ get }) => {
    for (const path of [
      '/',
      '/overview',
      '/findings',
      '/findings?domain=finops&sort_by=savings',
      '/findings/0b8f2c52-8d5e-4a53-9d0e-3a7c1e2f4b5a',
      '/plans/p1',
      '/ask',
      '/ask/s1',
      '/incidents',
      '/incidents/i1',
      '/graph?resource=arn%3Aaws%3Ards%3Aus-east-1%3A1%3Adb%3Ax',
      '/report',
      '/settings',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain('text/html');
      expect(await res.text(), path).toContain('id="console"');
    }
  });

  it('an unknown path a browser asks for is the console’s frame with 404, not a JSON body', async ({
    get,
  }) => {
    for (const path of ['/nope', '/findings/a/b', '/graphs', '/overviews']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('text/html');
      expect(await res.text(), path).toContain('id="console"');
    }
  });

  it('API, asset and service paths keep their answers; a client that does not ask for HTML gets JSON', async ({
    get,
  }) => {
    for (const path of [
      '/api/v1/nope',
      '/api/pulse/nope',
      '/console/api/nope',
      '/assets/console/nope.js',
      '/docs/nope',
      '/settings/nope',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/json');
      expect(await res.json(), path).toEqual({ detail: expect.any(String) });
    }
    const plain = await get('/nope', { accept: '*/*' });
    expect(plain.status).toBe(404);
    expect(await plain.json()).toEqual({ detail: expect.any(String) });
    // The contract's findings routes are unchanged beside the console's /findings page.
    const json = await get('/api/v1/pulse/findings', { accept: 'application/json' });
    expect(json.status).toBe(401);
    expect(await json.json()).toEqual({ detail: expect.any(String) });
    const healthz = await get('/healthz');
    expect(healthz.status).toBe(200);
  });

  it('without a session, a page and an unknown path go to sign-in and come back', async ({ url }) => {
    for (const path of ['/findings/f1?x=1', '/nope']) {
      const res = await fetch(`${url}${path}`, { headers: { accept: HTML }, redirect: 'manual' });
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
  });
});
