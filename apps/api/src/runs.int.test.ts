import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { describe, expect } from 'vitest';
import { RUN_FAILED_UNAVAILABLE, setDailyAgentBudget, sweepRuns } from '@opsi/core';
import { RunEventLog } from '@opsi/jobs';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  readSse,
  script,
  seqs,
  startTestApi,
  type SseEvent,
} from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// A worker with the scripted engine on every queue; keepalives every 200 ms.
const it = apiTest
  .override({ contextEnv: { SSE_KEEPALIVE_MS: '200' }, workerConfig: {} })
  .extend(
    'streamUrl',
    async ({ url }) =>
      (params: Record<string, string>) =>
        `${url}/api/v1/stream?${new URLSearchParams(params)}`,
  )
  .extend(
    'attachUrl',
    async ({ url }) =>
      (params: Record<string, string>) =>
        `${url}/api/v1/stream/attach?${new URLSearchParams(params)}`,
  )
  /** Streams a scripted run to its end; answers its session and events. */
  .extend('finishedRun', async ({ streamUrl, aWrite }) => async (steps: unknown[]) => {
    const res = await readSse(streamUrl({ prompt: script(steps) }), { token: aWrite });
    return { sessionId: res.headers.get('x-session-id')!, events: res.events };
  });

function expectGapless(events: SseEvent[], from = 1) {
  expect(seqs(events)).toEqual(events.map((_, i) => from + i));
  for (const e of events) {
    expect(e.data.seq).toBe(e.id);
    expect(e.data.kind).toBe(e.event);
    expect(typeof e.data.run_id).toBe('string');
    expect(Date.parse(e.data.at)).not.toBeNaN();
  }
}

function terminalCount(events: SseEvent[]) {
  return events.filter((e) => e.event === 'run.completed' || e.event === 'run.failed').length;
}

describe('POST /api/v1/ask', () => {
  it('answers {reply, session_id} and keeps the conversation', async ({ url, aWrite, aRead }) => {
    const res = await call(url, 'POST', '/api/v1/ask', {
      token: aWrite,
      body: { prompt: script([{ delta: 'Hello ' }, { delta: 'world' }]) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ reply: 'Hello world', session_id: expect.any(String) });
    const history = await call(url, 'GET', `/api/v1/history?session_id=${res.body.session_id}`, {
      token: aRead,
    });
    expect(history.status).toBe(200);
    expect(history.body.session_id).toBe(res.body.session_id);
    expect(history.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', script([{ delta: 'Hello ' }, { delta: 'world' }])],
      ['assistant', 'Hello world'],
    ]);
    expect(history.body.messages[0].run_id).toBe(history.body.messages[1].run_id);
  });

  it('uses a client-chosen session id, creating the session, and continues it', async ({
    url,
    aWrite,
    aRead,
  }) => {
    const sessionId = `client.session:${randomUUID().slice(0, 8)}`;
    for (const prompt of ['first', 'second']) {
      const res = await call(url, 'POST', '/api/v1/ask', {
        token: aWrite,
        body: { prompt, session_id: sessionId },
      });
      expect(res.body).toEqual({ reply: `echo: ${prompt}`, session_id: sessionId });
    }
    const history = await call(url, 'GET', `/api/v1/history?session_id=${sessionId}`, { token: aRead });
    expect(history.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'first',
      'echo: first',
      'second',
      'echo: second',
    ]);
  });

  it('a failed run answers 502 {detail}', async ({ url, aWrite }) => {
    const res = await call(url, 'POST', '/api/v1/ask', {
      token: aWrite,
      body: { prompt: script([{ delta: 'x' }, { fail: 'model exploded' }]) },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'The agent run failed: model exploded' });
  });

  // Found by `npm run drills` (restarts): during a Postgres restart /ask answered 502 for a run whose
  // attempts all failed for want of the database. That is the service unavailable, not the agent.
  it('a run that failed because the database or Redis was unreachable answers 503 {detail} with Retry-After', async ({
    url,
    a,
    aWrite,
    t,
  }) => {
    const prompt = script([{ sleep: 1500 }, { delta: 'late' }]);
    const asked = call(url, 'POST', '/api/v1/ask', { token: aWrite, body: { prompt } });
    let runId: string | undefined;
    for (let i = 0; !runId && i < 300; i++) {
      const row = await t.db
        .selectFrom('agent_runs')
        .select('id')
        .where('tenant_id', '=', a.tenant.id)
        .where('prompt', '=', prompt)
        .executeTakeFirst();
      runId = row?.id;
      if (!runId) await new Promise((r) => setTimeout(r, 20));
    }
    // The sweeper finds its job failed for good with a socket error, as after an outage.
    const log = new RunEventLog(t.redis, t.redisPrefix, 600);
    await sweepRuns(
      { db: t.db, log },
      async (id) =>
        id === runId
          ? { state: 'failed', failedReason: 'connect ECONNREFUSED 127.0.0.1:5432' }
          : { state: 'active' },
      { olderThanMs: 0 },
    );
    const res = await asked;
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: RUN_FAILED_UNAVAILABLE });
    expect(res.headers.get('retry-after')).toBe('5');
  });

  const bad: Array<[string, unknown]> = [
    ['missing prompt', {}],
    ['empty prompt', { prompt: '   ' }],
    ['prompt not a string', { prompt: 42 }],
    ['bad session id', { prompt: 'x', session_id: 'has spaces' }],
    ['long session id', { prompt: 'x', session_id: 'x'.repeat(129) }],
    ['unknown tool', { prompt: 'x', selected_tools: ['findings_everything'] }],
    ['prompt over 20,000 characters', { prompt: `what ${' '.repeat(19_990)} is open?` }],
  ];
  for (const [name, body] of bad) {
    it(`${name} → 400, nothing created, no budget spent`, async ({ url, t }) => {
      const member = await createTenantWithUser(t, { budget: 1 });
      const token = (await mintTestToken(t, member, 'read_write')).token;
      const res = await call(url, 'POST', '/api/v1/ask', { token, body });
      expect(res.status).toBe(400);
      expect(typeof res.body.detail).toBe('string');
      if (name.startsWith('prompt over')) expect(res.body.detail).toContain('at most 20000 characters');
      expect((await call(url, 'GET', '/api/v1/sessions', { token })).body.sessions).toEqual([]);
      expect(
        (await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: 'still have budget' } })).status,
      ).toBe(200);
    });
  }

  it('a read token → 403', async ({ url, aRead }) => {
    const res = await call(url, 'POST', '/api/v1/ask', { token: aRead, body: { prompt: 'x' } });
    expect(res.status).toBe(403);
  });

  it("another tenant's session id → 404, and no budget is spent", async ({ url, bWrite, t }) => {
    const theirs = await call(url, 'POST', '/api/v1/ask', { token: bWrite, body: { prompt: 'mine' } });
    const member = await createTenantWithUser(t, { budget: 1 });
    const token = (await mintTestToken(t, member, 'read_write')).token;
    const res = await call(url, 'POST', '/api/v1/ask', {
      token,
      body: { prompt: 'x', session_id: theirs.body.session_id },
    });
    expect(res.status).toBe(404);
    expect((await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: 'ok' } })).status).toBe(200);
    const history = await call(url, 'GET', `/api/v1/history?session_id=${theirs.body.session_id}`, {
      token: bWrite,
    });
    expect(history.body.messages).toHaveLength(2);
  });
});

describe('GET /api/v1/stream', () => {
  it('streams a gapless sequence from run.started to exactly one terminal event, then closes', async ({
    aWrite,
    streamUrl,
  }) => {
    const res = await readSse(
      streamUrl({
        prompt: script([
          { delta: 'a' },
          { tool: 'lookup', input: { q: 1 }, output: '3 rows' },
          { delta: 'b' },
        ]),
      }),
      { token: aWrite },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toMatch(/no-cache/);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-session-id')).toBeTruthy();
    expectGapless(res.events);
    expect(res.events.map((e) => e.event)).toEqual([
      'run.started',
      'message.delta',
      'tool.started',
      'tool.finished',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(res.events[0]!.data.attempt).toBe(1);
    expect(res.events[2]!.data).toMatchObject({ tool: 'lookup', input: { q: 1 } });
    expect(res.events[3]!.data).toMatchObject({ tool: 'lookup', ok: true, output_preview: '3 rows' });
    expect(res.events[5]!.data.text).toBe('ab');
    expect(res.events[6]!.data.reply).toBe('ab');
    expect(res.aborted).toBe(false);
  });

  it('a failing run ends with one run.failed', async ({ aWrite, streamUrl }) => {
    const res = await readSse(streamUrl({ prompt: script([{ delta: 'a' }, { fail: 'tool timed out' }]) }), {
      token: aWrite,
    });
    expectGapless(res.events);
    expect(res.events.at(-1)).toMatchObject({ event: 'run.failed', data: { detail: 'tool timed out' } });
    expect(terminalCount(res.events)).toBe(1);
  });

  it('sends keepalive comments while idle', async ({ aWrite, streamUrl }) => {
    const res = await readSse(streamUrl({ prompt: script([{ sleep: 700 }, { delta: 'done' }]) }), {
      token: aWrite,
    });
    expect(res.comments.filter((c) => c === 'keepalive').length).toBeGreaterThanOrEqual(2);
    expect(res.events.at(-1)!.event).toBe('run.completed');
  });

  it('refusals come before the stream: 400, 403 (read token, even on GET), 404', async ({
    url,
    aWrite,
    aRead,
    bWrite,
    streamUrl,
  }) => {
    const missing = await readSse(`${url}/api/v1/stream`, { token: aWrite });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/prompt/);
    const read = await readSse(streamUrl({ prompt: 'x' }), { token: aRead });
    expect(read.status).toBe(403);
    const theirs = await call(url, 'POST', '/api/v1/ask', { token: bWrite, body: { prompt: 'b' } });
    const other = await readSse(streamUrl({ prompt: 'x', session_id: theirs.body.session_id }), {
      token: aWrite,
    });
    expect(other.status).toBe(404);
    const tools = await readSse(streamUrl({ prompt: 'x', selected_tools: 'nope,also_nope' }), {
      token: aWrite,
    });
    expect(tools.status).toBe(400);
  });
});

describe('back-pressure', () => {
  it('a client that stops reading is dropped once it falls too far behind; the run goes on', async ({
    aWrite,
    t,
    attachUrl,
  }) => {
    const small = await startTestApi(t, { SSE_MAX_BUFFERED_BYTES: 64 * 1024 });
    try {
      const { port } = new URL(small.url);
      // ~20 MB of events: more than loopback socket buffers absorb, so the server's writes are refused.
      const prompt = script([{ deltas: 10_000, text: 'x'.repeat(2000) }]);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `GET /api/v1/stream?${new URLSearchParams({ prompt })} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${aWrite}\r\n\r\n`,
      );
      let text = '';
      let closed = false;
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('error', () => undefined);
      socket.on('close', () => (closed = true));
      await new Promise((r) => socket.once('data', r));
      socket.pause(); // stop reading
      const sessionId = /X-Session-Id: (\S+)/i.exec(text)![1]!;
      const runOf = () =>
        t.db.selectFrom('agent_runs').select('status').where('session_id', '=', sessionId).executeTakeFirst();
      for (let i = 0; i < 600 && (await runOf())?.status !== 'completed'; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect((await runOf())?.status).toBe('completed');
      socket.resume(); // read what is left: a dropped client never gets to the end
      for (let i = 0; i < 200 && !closed; i++) await new Promise((r) => setTimeout(r, 50));
      expect(text).toMatch(/^HTTP\/1.1 200/);
      expect(closed).toBe(true);
      expect(text).not.toContain('event: run.completed');
      // The run itself completed, and re-attaching delivers all of it.
      const rest = await readSse(attachUrl({ session_id: sessionId }), { token: aWrite, timeoutMs: 120_000 });
      expect(rest.events.at(-1)!.event).toBe('run.completed');
      expectGapless(rest.events);
      expect(rest.events.length).toBe(10_000 + 3); // run.started, the deltas, message.completed, run.completed
    } finally {
      await small.close();
    }
  }, 120_000);
});

describe('GET /api/v1/stream/attach', () => {
  it('replays after after_seq exactly once when the run has ended', async ({
    aWrite,
    attachUrl,
    finishedRun,
  }) => {
    const { sessionId, events } = await finishedRun([{ deltas: 6 }]);
    const k = 3;
    const res = await readSse(attachUrl({ session_id: sessionId, after_seq: String(k) }), { token: aWrite });
    expect(res.status).toBe(200);
    expect(seqs(res.events)).toEqual(seqs(events).slice(k));
    expect(res.events.map((e) => e.data)).toEqual(events.slice(k).map((e) => e.data));
  });

  it('Last-Event-ID wins over after_seq', async ({ aWrite, attachUrl, finishedRun }) => {
    const { sessionId, events } = await finishedRun([{ deltas: 4 }]);
    const res = await readSse(attachUrl({ session_id: sessionId, after_seq: '1' }), {
      token: aWrite,
      headers: { 'last-event-id': '5' },
    });
    expect(seqs(res.events)).toEqual(seqs(events).slice(5));
  });

  it('after the last event of a finished run: 200, nothing, closed', async ({
    aWrite,
    attachUrl,
    finishedRun,
  }) => {
    const { sessionId, events } = await finishedRun([{ delta: 'x' }]);
    const res = await readSse(attachUrl({ session_id: sessionId, after_seq: String(events.length) }), {
      token: aWrite,
    });
    expect(res.status).toBe(200);
    expect(res.events).toEqual([]);
    expect(res.aborted).toBe(false);
  });

  it('a client that drops after seq k and re-attaches while the run is still going gets k+1… exactly once', async ({
    aWrite,
    streamUrl,
    attachUrl,
  }) => {
    const prompt = script([{ deltas: 3 }, { sleep: 400 }, { deltas: 3 }, { sleep: 300 }, { delta: 'end' }]);
    const first = await readSse(streamUrl({ prompt }), { token: aWrite, stopAfter: (ev) => ev.length >= 3 });
    expect(first.aborted).toBe(true);
    const sessionId = first.headers.get('x-session-id')!;
    const k = first.events.at(-1)!.id;
    const rest = await readSse(attachUrl({ session_id: sessionId, after_seq: String(k) }), { token: aWrite });
    const all = [...first.events, ...rest.events];
    expectGapless(all);
    expect(terminalCount(all)).toBe(1);
    expect(all.at(-1)!.event).toBe('run.completed');
    // The dropped connection did not stop the run.
    expect(all.at(-1)!.data.reply).toContain('end');
  });

  it('many concurrent attachers at different cursors each get their own tail, once', async ({
    aWrite,
    streamUrl,
    attachUrl,
  }) => {
    const first = await readSse(
      streamUrl({ prompt: script([{ deltas: 2 }, { sleep: 300 }, { deltas: 5 }]) }),
      {
        token: aWrite,
        stopAfter: (ev) => ev.length >= 2,
      },
    );
    const sessionId = first.headers.get('x-session-id')!;
    const results = await Promise.all(
      [0, 1, 2, 3].map((k) =>
        readSse(attachUrl({ session_id: sessionId, after_seq: String(k) }), { token: aWrite }),
      ),
    );
    const full = results[0]!.events;
    expectGapless(full);
    results.forEach((r, k) => expect(seqs(r.events)).toEqual(seqs(full).slice(k)));
  });

  it('404 for a session without a run, an unknown session, or another tenant’s', async ({
    url,
    aWrite,
    bWrite,
    attachUrl,
  }) => {
    const empty = await call(url, 'POST', '/api/v1/sessions', { token: aWrite, body: { name: 'empty' } });
    expect((await readSse(attachUrl({ session_id: empty.body.id }), { token: aWrite })).status).toBe(404);
    expect((await readSse(attachUrl({ session_id: 'no-such-session' }), { token: aWrite })).status).toBe(404);
    const theirs = await call(url, 'POST', '/api/v1/ask', { token: bWrite, body: { prompt: 'b' } });
    expect((await readSse(attachUrl({ session_id: theirs.body.session_id }), { token: aWrite })).status).toBe(
      404,
    );
  });

  it('400 without session_id or with a bad cursor; 403 for a read token', async ({
    url,
    aWrite,
    aRead,
    attachUrl,
  }) => {
    expect((await readSse(`${url}/api/v1/stream/attach`, { token: aWrite })).status).toBe(400);
    expect((await readSse(attachUrl({ session_id: 'x', after_seq: '-1' }), { token: aWrite })).status).toBe(
      400,
    );
    expect(
      (await readSse(attachUrl({ session_id: 'x' }), { token: aWrite, headers: { 'last-event-id': 'abc' } }))
        .status,
    ).toBe(400);
    expect((await readSse(attachUrl({ session_id: 'x' }), { token: aRead })).status).toBe(403);
  });
});

describe('daily agent budget', () => {
  it('with budget 3: three asks pass, the fourth is 429 with Retry-After; other endpoints keep working', async ({
    url,
    t,
    streamUrl,
    attachUrl,
  }) => {
    const member = await createTenantWithUser(t, { budget: 3 });
    const token = (await mintTestToken(t, member, 'read_write')).token;
    let sessionId = '';
    for (let i = 0; i < 3; i++) {
      const res = await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: `q${i}` } });
      expect(res.status).toBe(200);
      sessionId = res.body.session_id;
    }
    const refused = await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: 'one more' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ detail: expect.stringMatching(/budget/) });
    const now = new Date();
    const expected =
      (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(5);
    const streamed = await readSse(streamUrl({ prompt: 'x' }), { token });
    expect(streamed.status).toBe(429);
    expect(Number(streamed.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const path of ['/api/v1/me', '/api/v1/sessions', `/api/v1/history?session_id=${sessionId}`]) {
      expect((await call(url, 'GET', path, { token })).status).toBe(200);
    }
    const attached = await readSse(attachUrl({ session_id: sessionId }), { token });
    expect(attached.status).toBe(200);
    expect(attached.events.at(-1)!.event).toBe('run.completed');
    // The budget is per token: another token of the same user still has its own.
    const fresh = (await mintTestToken(t, member, 'read_write')).token;
    expect((await call(url, 'POST', '/api/v1/ask', { token: fresh, body: { prompt: 'x' } })).status).toBe(
      200,
    );
  });

  it('20 concurrent asks against budget 5 admit exactly 5', async ({ url, t }) => {
    const member = await createTenantWithUser(t, { budget: 5 });
    const token = (await mintTestToken(t, member, 'read_write')).token;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(url, 'POST', '/api/v1/ask', { token, body: { prompt: `race ${i}` } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const runs = await t.db
      .selectFrom('agent_runs')
      .select('id')
      .where('tenant_id', '=', member.tenant.id)
      .execute();
    expect(runs).toHaveLength(5);
  });

  it('the operator changes the size', async ({ url, t }) => {
    const member = await createTenantWithUser(t, { budget: 0 });
    const token = (await mintTestToken(t, member, 'read_write')).token;
    expect((await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: 'x' } })).status).toBe(429);
    await setDailyAgentBudget(t.db, member.tenant.slug, 1);
    expect((await call(url, 'POST', '/api/v1/ask', { token, body: { prompt: 'x' } })).status).toBe(200);
  });
});

describe('sessions', () => {
  it('create (201), list, rename, history; each scoped to the tenant', async ({
    url,
    aWrite,
    aRead,
    bWrite,
  }) => {
    const created = await call(url, 'POST', '/api/v1/sessions', {
      token: aWrite,
      body: { name: 'Cost review' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Cost review',
      created_at: expect.any(String),
    });
    const unnamed = await call(url, 'POST', '/api/v1/sessions', { token: aWrite });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.name).toBe('Untitled session');
    const list = await call(url, 'GET', '/api/v1/sessions', { token: aRead });
    expect(list.status).toBe(200);
    expect(list.body.sessions.map((s: { id: string }) => s.id)).toContain(created.body.id);
    const renamed = await call(url, 'PATCH', `/api/v1/sessions/${created.body.id}`, {
      token: aWrite,
      body: { name: 'Savings' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.body.id, name: 'Savings' });
    const history = await call(url, 'GET', `/api/v1/history?session_id=${created.body.id}`, { token: aRead });
    expect(history.body).toEqual({ session_id: created.body.id, messages: [] });
    // Another tenant sees none of it.
    const theirList = await call(url, 'GET', '/api/v1/sessions', { token: bWrite });
    expect(theirList.body.sessions.map((s: { id: string }) => s.id)).not.toContain(created.body.id);
    for (const [method, path, body] of [
      ['PATCH', `/api/v1/sessions/${created.body.id}`, { name: 'x' }],
      ['DELETE', `/api/v1/sessions/${created.body.id}`, undefined],
      ['GET', `/api/v1/history?session_id=${created.body.id}`, undefined],
    ] as const) {
      expect((await call(url, method, path, { token: bWrite, body })).status).toBe(404);
    }
    expect(
      (await call(url, 'GET', `/api/v1/history?session_id=${created.body.id}`, { token: aRead })).status,
    ).toBe(200);
  });

  it('400s and 403s', async ({ url, aWrite, aRead }) => {
    expect((await call(url, 'POST', '/api/v1/sessions', { token: aWrite, body: { name: '' } })).status).toBe(
      400,
    );
    expect((await call(url, 'PATCH', '/api/v1/sessions/x', { token: aWrite, body: {} })).status).toBe(400);
    expect((await call(url, 'GET', '/api/v1/history', { token: aRead })).status).toBe(400);
    expect((await call(url, 'POST', '/api/v1/sessions', { token: aRead, body: { name: 'x' } })).status).toBe(
      403,
    );
    expect((await call(url, 'DELETE', '/api/v1/sessions/x', { token: aRead })).status).toBe(403);
    expect((await call(url, 'DELETE', '/api/v1/sessions/no-such', { token: aWrite })).status).toBe(404);
  });

  it('delete removes the messages; a running run is cancelled and ends with run.failed', async ({
    url,
    aWrite,
    aRead,
    t,
    streamUrl,
  }) => {
    let sessionId = '';
    const streaming = readSse(streamUrl({ prompt: script([{ delta: 'working' }, { hang: true }]) }), {
      token: aWrite,
      onEvent: (e) => {
        if (e.event === 'message.delta') sessionId = e.data.run_id;
      },
    });
    // Wait until the run is under way, then delete its session.
    for (let i = 0; i < 100 && !sessionId; i++) await new Promise((r) => setTimeout(r, 50));
    const run = await t.db
      .selectFrom('agent_runs')
      .select(['session_id'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    const deleted = await call(url, 'DELETE', `/api/v1/sessions/${run.session_id}`, { token: aWrite });
    expect(deleted.status).toBe(204);
    const res = await streaming;
    expect(res.events.at(-1)).toMatchObject({
      event: 'run.failed',
      data: { detail: 'Run cancelled: its session was deleted.' },
    });
    expectGapless(res.events);
    const left = await t.db
      .selectFrom('agent_messages')
      .select('id')
      .where('session_id', '=', run.session_id)
      .execute();
    expect(left).toEqual([]);
    expect(
      (await call(url, 'GET', `/api/v1/history?session_id=${run.session_id}`, { token: aRead })).status,
    ).toBe(404);
  });
});
