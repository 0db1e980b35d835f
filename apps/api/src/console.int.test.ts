import { describe, expect } from 'vitest';
import {
  addUser,
  call,
  createTenantWithUser,
  loginOverHttp,
  mintTestToken,
  readSse,
} from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// The console's own routes: agent turns started from a browser session (POST /console/api/runs, then
// the session twin of /stream/attach), and the daily budget they spend (per user, beside each token's).

// A worker with the scripted engine on every queue ends the runs these tests start.
const it = apiTest.override({ workerConfig: {} });

describe('agent turns from the console', () => {
  it('start with the session and CSRF header (202), stream over the session twin of /stream/attach', async ({
    t,
    api,
  }) => {
    const a = await createTenantWithUser(t);
    const s = await loginOverHttp(api.url, a.user.email, a.password);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const started = await call(api.url, 'POST', '/console/api/runs', { headers, body: { prompt: 'hello' } });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ run_id: expect.any(String), session_id: expect.any(String) });
    const stream = await readSse(
      `${api.url}/console/api/stream/attach?session_id=${started.body.session_id}&after_seq=0`,
      { headers: { cookie: s.cookie } },
    );
    expect(stream.status).toBe(200);
    expect(stream.events[0]!.event).toBe('run.started');
    expect(stream.events.at(-1)!.event).toBe('run.completed');
    expect(stream.events.at(-1)!.data.reply).toBe('echo: hello');
    // The run is the tenant's like any other: a token reads its history.
    const token = (await mintTestToken(t, a, 'read')).token;
    const history = await call(api.url, 'GET', `/api/v1/history?session_id=${started.body.session_id}`, {
      token,
    });
    expect(history.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
  });

  it('spend the user’s daily budget, apart from each token’s; a refusal is 429', async ({ t, api }) => {
    const a = await createTenantWithUser(t, { budget: 1 });
    const s = await loginOverHttp(api.url, a.user.email, a.password);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    expect(
      (await call(api.url, 'POST', '/console/api/runs', { headers, body: { prompt: 'one' } })).status,
    ).toBe(202);
    const refused = await call(api.url, 'POST', '/console/api/runs', { headers, body: { prompt: 'two' } });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/for this user/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A second browser session of the same user shares the budget; a token of the user has its own.
    const again = await loginOverHttp(api.url, a.user.email, a.password);
    expect(
      (
        await call(api.url, 'POST', '/console/api/runs', {
          headers: { cookie: again.cookie, 'x-csrf-token': again.csrf },
          body: { prompt: 'three' },
        })
      ).status,
    ).toBe(429);
    const token = (await mintTestToken(t, a, 'read_write')).token;
    expect((await call(api.url, 'POST', '/api/v1/sessions', { token, body: {} })).status).toBe(201);
    const viaToken = await call(api.url, 'GET', '/api/v1/stream?prompt=four', { token });
    expect(viaToken.status).toBe(200);
    // Another member of the tenant has a budget of their own.
    const b = await addUser(t, a, 'member');
    const sb = await loginOverHttp(api.url, b.user.email, b.password);
    expect(
      (
        await call(api.url, 'POST', '/console/api/runs', {
          headers: { cookie: sb.cookie, 'x-csrf-token': sb.csrf },
          body: { prompt: 'five' },
        })
      ).status,
    ).toBe(202);
  });

  it('refuse a session of another tenant (404) and a blank prompt (400)', async ({ t, api }) => {
    const a = await createTenantWithUser(t);
    const b = await createTenantWithUser(t);
    const sa = await loginOverHttp(api.url, a.user.email, a.password);
    const sb = await loginOverHttp(api.url, b.user.email, b.password);
    const started = await call(api.url, 'POST', '/console/api/runs', {
      headers: { cookie: sa.cookie, 'x-csrf-token': sa.csrf },
      body: { prompt: 'mine' },
    });
    const other = await call(api.url, 'POST', '/console/api/runs', {
      headers: { cookie: sb.cookie, 'x-csrf-token': sb.csrf },
      body: { prompt: 'yours?', session_id: started.body.session_id },
    });
    expect(other.status).toBe(404);
    const attach = await call(
      api.url,
      'GET',
      `/console/api/stream/attach?session_id=${started.body.session_id}`,
      {
        headers: { cookie: sb.cookie },
      },
    );
    expect(attach.status).toBe(404);
    const blank = await call(api.url, 'POST', '/console/api/runs', {
      headers: { cookie: sa.cookie, 'x-csrf-token': sa.csrf },
      body: { prompt: '   ' },
    });
    expect(blank.status).toBe(400);
  });
});
