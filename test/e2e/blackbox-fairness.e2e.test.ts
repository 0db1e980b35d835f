import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis as IORedis } from 'ioredis';
import {
  call,
  createTenantWithUser,
  freePort,
  mintTestToken,
  readSse,
  script,
  startService,
  type ServiceProcess,
  type TestMember,
} from '../support/index';
import { startDrillRedis, type DrillRedis } from '../support/drills';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of issue 19, "Fairness" and "Backpressure and limits", from the contract alone:
// README (QUEUE_TENANT_BACKLOG_MAX, WORKER_* settings), docs/operations.md ("Fairness and
// backpressure"), docs/api.md (the 503 rows, /stream, /stream/attach, agent-investigate, triage
// alerts, the daily agent budget), docs/reliability.md, api-v1.md (Limits: the agent budget is the
// only rate limit, 429). Real API and worker processes, HTTP only, AGENT_ENGINE=scripted.
// Never asserts on durations: on statuses, counts and order.

const TERMINAL = ['run.completed', 'run.failed'];
const turn = (tag: string) => script([{ delta: `${tag} ` }, { delta: 'done' }]);

async function startWorker(svc: SplitServices, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const metricsPort = await freePort();
  return startService(
    { ...svc.env, ...env, WORKER_METRICS_PORT: String(metricsPort) },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
}

/** The status of GET /stream/attach for a session (hangs up once the head arrives). */
async function attachStatus(base: string, token: string, session: string) {
  const r = await openStreamUrl(
    `${base}/api/v1/stream/attach?session_id=${encodeURIComponent(session)}&after_seq=0`,
    token,
  );
  return r;
}

/** GET /stream; once the answer's head arrives, hang up (the run is durable). */
async function openStream(base: string, token: string, prompt: string, session: string) {
  return openStreamUrl(
    `${base}/api/v1/stream?prompt=${encodeURIComponent(prompt)}&session_id=${encodeURIComponent(session)}`,
    token,
  );
}

async function openStreamUrl(url: string, token: string) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 20_000);
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const ct = res.headers.get('content-type') ?? '';
    let body: any;
    if (ct.startsWith('text/event-stream')) controller.abort();
    else body = await res.json().catch(() => undefined);
    return { status: res.status, headers: res.headers, body, runId: res.headers.get('x-run-id') };
  } catch (e) {
    return { status: -1, headers: new Headers(), body: { error: String(e) }, runId: null };
  } finally {
    clearTimeout(timer);
  }
}

/** POST /ask; a turn that is admitted but not run within the bound answers status -1 ("hung"). */
async function ask(base: string, token: string, prompt: string, session: string, boundMs = 20_000) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), boundMs);
  try {
    const res = await fetch(`${base}/api/v1/ask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt, session_id: session }),
      signal: controller.signal,
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body };
  } catch {
    return { status: -1, headers: new Headers(), body: 'no answer within the bound (admitted, not run?)' };
  } finally {
    clearTimeout(timer);
  }
}

/** The stored events of a session's latest run, up to its terminal event. */
async function runEvents(base: string, token: string, session: string) {
  const r = await readSse(
    `${base}/api/v1/stream/attach?session_id=${encodeURIComponent(session)}&after_seq=0`,
    { token, timeoutMs: 90_000, stopAfter: (evs) => evs.some((e) => TERMINAL.includes(e.event)) },
  );
  return r;
}

function expectBackpressure503(res: { status: number; headers: Headers; body: any }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
  expect(typeof res.body?.detail, `${what}: {detail} in ${JSON.stringify(res.body)}`).toBe('string');
  expect(res.headers.get('retry-after'), `${what}: Retry-After`).toBeTruthy();
}

// ---------------------------------------------------------------------------------------------------
describe('backpressure: QUEUE_TENANT_BACKLOG_MAX=5, no worker at first', () => {
  const MAX = 5;
  const BUDGET = 8;
  let svc: SplitServices;
  let base = '';
  let worker: ServiceProcess | undefined;
  let a: TestMember;
  let b: TestMember;
  let tokFill = ''; // A's token that fills the backlog
  let tokR = ''; // A's token whose requests are refused: its budget must stay whole
  let tokB = '';
  let incA = '';
  let incB = '';
  const fillSessions: string[] = [];
  let agentAdmitted = 0;
  let triageAdmitted = 0;

  beforeAll(async () => {
    svc = await startSplitServices({
      worker: false,
      env: { AGENT_ENGINE: 'scripted', QUEUE_TENANT_BACKLOG_MAX: String(MAX), TRIAGE_WAIT_MS: '1' },
    });
    base = svc.base;
    a = await createTenantWithUser(svc.t, { tier: 'team', budget: BUDGET });
    b = await createTenantWithUser(svc.t, { tier: 'team' });
    tokFill = (await mintTestToken(svc.t, a, 'read_write', { name: 'fill' })).token;
    tokR = (await mintTestToken(svc.t, a, 'read_write', { name: 'refused' })).token;
    tokB = (await mintTestToken(svc.t, b, 'read_write')).token;
    const ia = await call(base, 'POST', '/api/v1/incidents', {
      token: tokFill,
      body: { title: 'bp incident A' },
    });
    expect(ia.status, ia.text).toBe(201);
    incA = (ia.body.id ?? ia.body.incident?.id) as string;
    const ib = await call(base, 'POST', '/api/v1/incidents', {
      token: tokB,
      body: { title: 'bp incident B' },
    });
    expect(ib.status, ib.text).toBe(201);
    incB = (ib.body.id ?? ib.body.incident?.id) as string;
  });

  afterAll(async () => {
    await worker?.stop();
    await svc?.stop();
  });

  it("[operations.md: 'how many jobs of one tenant may wait in one queue ... answers 503 {detail} ... with Retry-After: 10'] A's agent turns beyond the bound (give or take one) are 503 {detail} + Retry-After", async () => {
    let refused: Awaited<ReturnType<typeof openStream>> | undefined;
    for (let i = 0; i < MAX + 3; i++) {
      const s = `bp-fill-${i}`;
      const r = await openStream(base, tokFill, turn(`fill${i}`), s);
      if (r.status === 200) {
        fillSessions.push(s);
        agentAdmitted++;
        continue;
      }
      refused = r;
      break;
    }
    expect(refused, `a refusal within ${MAX + 3} requests (admitted ${agentAdmitted})`).toBeDefined();
    expectBackpressure503(refused!, 'stream beyond the backlog');
    expect(agentAdmitted).toBeGreaterThanOrEqual(MAX - 1);
    expect(agentAdmitted).toBeLessThanOrEqual(MAX + 1);
    expect(refused!.headers.get('retry-after')).toBe('10');
    expect(refused!.body.detail).toMatch(/waiting/i);
  });

  it("[api.md 503 row: '/ask, /stream, an investigation ... before anything is written or spent'] /ask, /stream and agent-investigate of A answer 503 {detail} + Retry-After", async () => {
    const r1 = await ask(base, tokR, turn('refused-ask'), 'bp-refused-ask');
    expectBackpressure503(r1, '/ask of A with a full backlog');
    const r2 = await openStream(base, tokR, turn('refused-stream'), 'bp-refused-stream');
    expectBackpressure503(r2, '/stream of A with a full backlog');
    const r3 = await call(base, 'POST', `/api/v1/incidents/${incA}/agent-investigate`, {
      token: tokR,
      body: {},
    });
    expectBackpressure503(r3, 'agent-investigate of A with a full backlog');
  });

  it("[operations.md: 'other tenants are not affected'] B at the same moment: /stream 200, agent-investigate 202", async () => {
    const s = await openStream(base, tokB, turn('b-stream'), 'bp-b-stream');
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.runId).toBeTruthy();
    const inv = await call(base, 'POST', `/api/v1/incidents/${incB}/agent-investigate`, {
      token: tokB,
      body: {},
    });
    expect(inv.status, inv.text).toBe(202);
    expect(inv.body.status).toBe('queued');
  });

  it("[operations.md: bound per tenant and queue, 'POST /api/v1/triage/alerts' answers 503] A's triage alerts beyond the bound are 503; B's are admitted (202)", async () => {
    let refused: any;
    for (let i = 0; i < MAX + 3; i++) {
      const r = await call(base, 'POST', '/api/v1/triage/alerts', {
        token: tokFill,
        body: {
          title: `bp-fill-alert-${i}`,
          severity: 'low',
          source: 'bbfair',
          fingerprint: `bp-fill-fp-${i}`,
        },
      });
      if (r.status === 202) {
        triageAdmitted++;
        continue;
      }
      refused = r;
      break;
    }
    expect(refused, `a refusal within ${MAX + 3} triage posts (admitted ${triageAdmitted})`).toBeDefined();
    expectBackpressure503(refused, 'triage alerts of A with a full triage backlog');
    expect(triageAdmitted).toBeGreaterThanOrEqual(MAX - 1);
    expect(triageAdmitted).toBeLessThanOrEqual(MAX + 1);
    const again = await call(base, 'POST', '/api/v1/triage/alerts', {
      token: tokR,
      body: { title: 'bp-refused-alert', severity: 'low', source: 'bbfair', fingerprint: 'bp-refused-fp' },
    });
    expectBackpressure503(again, 'a further triage post of A');
    const bb = await call(base, 'POST', '/api/v1/triage/alerts', {
      token: tokB,
      body: { title: 'bp-b-alert', severity: 'low', source: 'bbfair', fingerprint: 'bp-b-fp' },
    });
    expect(bb.status, bb.text).toBe(202);
  });

  it("[api.md: 'before anything is written or spent'] the refused /ask and /stream left no session/run; the refused investigation wrote no timeline event", async () => {
    for (const s of ['bp-refused-ask', 'bp-refused-stream']) {
      const at = await attachStatus(base, tokR, s);
      expect(at.status, `attach ${s}: ${JSON.stringify(at.body)}`).toBe(404);
    }
    const list = await call(base, 'GET', '/api/v1/sessions', { token: tokR });
    expect(list.status).toBe(200);
    const names = JSON.stringify(list.body);
    expect(names).not.toContain('bp-refused-ask');
    expect(names).not.toContain('bp-refused-stream');
    const tl = await call(base, 'GET', `/api/v1/incidents/${incA}/timeline`, { token: tokR });
    expect(tl.status).toBe(200);
    const kinds = ((tl.body.events ?? tl.body.timeline ?? []) as any[]).map((e) => e.kind);
    expect(kinds.filter((k) => String(k).startsWith('investigation'))).toEqual([]);
  });

  it("[api-v1.md Limits: 'the agent budget is the only rate limit' (429); issue 19: 'the agent budget stays the only rate limit'] a token over its budget gets 429, also while its tenant's backlog is full", async () => {
    const c = await createTenantWithUser(svc.t, { tier: 'team', budget: 1 });
    const toks: string[] = [];
    for (let i = 0; i < MAX + 4; i++)
      toks.push((await mintTestToken(svc.t, c, 'read_write', { name: `c${i}` })).token);
    const first = await openStream(base, toks[0]!, turn('c-first'), 'bp-c-0');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // C's backlog is not full (one job waits): the exhausted token gets 429
    const over = await openStream(base, toks[0]!, turn('c-over'), 'bp-c-over');
    expect(over.status, JSON.stringify(over.body)).toBe(429);
    expect(over.headers.get('retry-after')).toBeTruthy();
    // fill C's backlog with its other tokens (one unit each) until 503
    let full = false;
    for (let i = 1; i < toks.length && !full; i++) {
      const r = await openStream(base, toks[i]!, turn(`c${i}`), `bp-c-${i}`);
      if (r.status === 503) full = true;
      else expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(full, "C's backlog full").toBe(true);
    const over2 = await ask(base, toks[0]!, turn('c-over2'), 'bp-c-over2');
    expect(over2.status, `exhausted token with a full backlog: ${JSON.stringify(over2.body)}`).toBe(429);
  });

  it("[operations.md: 'other tenants are not affected', 'nothing is written'] once a worker drains A's backlog, A is admitted again; the refused alert was never triaged", async () => {
    worker = await startWorker(svc);
    for (const s of fillSessions) {
      const r = await runEvents(base, tokFill, s);
      expect(
        r.events.some((e) => e.event === 'run.completed'),
        `fill run ${s} completed`,
      ).toBe(true);
    }
    // triage drained: every admitted fill alert decided
    const deadline = Date.now() + 60_000;
    let titles: string[];
    for (;;) {
      const ev = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token: tokFill });
      expect(ev.status).toBe(200);
      titles = (ev.body.events as any[]).map((e) => e.title);
      if (titles.filter((x) => x.startsWith('bp-fill-alert-')).length >= triageAdmitted) break;
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(titles.filter((x) => x.startsWith('bp-fill-alert-')).length).toBe(triageAdmitted);
    expect(titles).not.toContain('bp-refused-alert');
    // A's triage admitted again
    const t2 = await call(base, 'POST', '/api/v1/triage/alerts', {
      token: tokFill,
      body: { title: 'bp-after-alert', severity: 'low', source: 'bbfair', fingerprint: 'bp-after-fp' },
    });
    expect(t2.status, t2.text).toBe(202);
    // the incident of A got no investigation from the refused request
    const tl = await call(base, 'GET', `/api/v1/incidents/${incA}/timeline`, { token: tokR });
    const kinds = ((tl.body.events ?? tl.body.timeline ?? []) as any[]).map((e) => e.kind);
    expect(kinds.filter((k) => String(k).startsWith('investigation'))).toEqual([]);
  });

  it("[api.md: 'A request refused ... spends nothing'; api-v1.md Limits: 'exceeding gives 429'] the refused token still has its whole budget: exactly BUDGET turns admitted after the drain, then 429 (not 503)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < BUDGET + 1; i++) {
      const r = await ask(base, tokR, turn(`after${i}`), `bp-after-${i}`, 60_000);
      statuses.push(r.status);
      if (r.status !== 200) {
        if (r.status === 429) {
          expect(typeof r.body?.detail).toBe('string');
          expect(r.headers.get('retry-after')).toBeTruthy();
        }
        break;
      }
    }
    expect(statuses).toEqual([...Array(BUDGET).fill(200), 429]);
  });
});

// ---------------------------------------------------------------------------------------------------
describe('fairness: one worker slot (WORKER_CONCURRENCY_AGENT=1), A queues 30 turns, then B one', () => {
  const N_A = 30;
  let svc: SplitServices;
  let base = '';
  let worker: ServiceProcess | undefined;
  let tokA = '';
  let tokB = '';

  beforeAll(async () => {
    svc = await startSplitServices({
      worker: false,
      env: { AGENT_ENGINE: 'scripted', WORKER_CONCURRENCY_AGENT: '1' },
    });
    base = svc.base;
    const a = await createTenantWithUser(svc.t, { tier: 'team' });
    const b = await createTenantWithUser(svc.t, { tier: 'team' });
    tokA = (await mintTestToken(svc.t, a, 'read_write')).token;
    tokB = (await mintTestToken(svc.t, b, 'read_write')).token;
  });

  afterAll(async () => {
    await worker?.stop();
    await svc?.stop();
  });

  it("[operations.md: 'the pool serves them round-robin ... delays another tenant's next job by about one job per busy tenant, not by its backlog'; reliability.md: 'B's turn queued behind 30 of A's starts among the first three'] B's run starts among the first 3; each tenant keeps its own order", async () => {
    const aSessions: string[] = [];
    for (let i = 0; i < N_A; i++) {
      const s = `fair-a-${String(i).padStart(2, '0')}`;
      const r = await openStream(base, tokA, turn(`a${i}`), s);
      expect(r.status, `A turn ${i}: ${JSON.stringify(r.body)}`).toBe(200);
      aSessions.push(s);
    }
    const rb = await openStream(base, tokB, turn('b0'), 'fair-b-0');
    expect(rb.status, JSON.stringify(rb.body)).toBe(200);

    worker = await startWorker(svc, { WORKER_CONCURRENCY_AGENT: '1', WORKER_QUEUES: 'agent' });

    const started = async (tok: string, s: string) => {
      const r = await runEvents(base, tok, s);
      const st = r.events.find((e) => e.event === 'run.started');
      expect(st, `run.started of ${s}`).toBeDefined();
      expect(
        r.events.some((e) => e.event === 'run.completed'),
        `${s} completed`,
      ).toBe(true);
      return Date.parse(st!.data.at);
    };
    const bAt = await started(tokB, 'fair-b-0');
    const aAts: number[] = [];
    for (const s of aSessions) aAts.push(await started(tokA, s));

    // ordering (one slot: runs start one after another, so the start stamps are an order)
    const aBeforeB = aAts.filter((x) => x <= bAt).length; // ties counted against B
    expect(aBeforeB, `A's runs started before (or with) B's: ${aBeforeB} of ${N_A}`).toBeLessThanOrEqual(2);
    for (let i = 1; i < aAts.length; i++) {
      expect(aAts[i]!, `A's run ${i} started not before A's run ${i - 1}`).toBeGreaterThanOrEqual(
        aAts[i - 1]!,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------------
describe("Redis at maxmemory with noeviction (a redis-server of the file's own)", () => {
  let redis: DrillRedis;
  let svc: SplitServices;
  let base = '';
  let worker: ServiceProcess | undefined;
  let client: IORedis;
  let tokA = '';
  let incA = '';
  const OOM_BUDGET = 3;
  // one token per refused request kind, so a spent unit is attributed to its request
  const refusedTok: Record<string, { token: string; id: string }> = {};

  beforeAll(async () => {
    redis = await startDrillRedis();
    client = new IORedis(redis.url, { maxRetriesPerRequest: 1 });
    svc = await startSplitServices({
      worker: false,
      // A single redis-server of its own, also in the Redis Cluster pass (npm run test:redis-cluster).
      env: { REDIS_URL: redis.url, REDIS_CLUSTER: 'false', AGENT_ENGINE: 'scripted', TRIAGE_WAIT_MS: '1' },
    });
    base = svc.base;
    const a = await createTenantWithUser(svc.t, { tier: 'team', budget: OOM_BUDGET });
    tokA = (await mintTestToken(svc.t, a, 'read_write')).token;
    for (const k of ['ask', 'stream', 'investigate', 'ask2'])
      refusedTok[k] = await mintTestToken(svc.t, a, 'read_write', { name: `oom-${k}` });
    const ia = await call(base, 'POST', '/api/v1/incidents', {
      token: tokA,
      body: { title: 'oom incident' },
    });
    expect(ia.status, ia.text).toBe(201);
    incA = (ia.body.id ?? ia.body.incident?.id) as string;
  });

  afterAll(async () => {
    await worker?.stop();
    await svc?.stop();
    client?.disconnect();
    await redis?.destroy();
  });

  it("[operations.md: 'a full Redis refuses writes. Every request that would enqueue then answers 503 {detail} ..., never a 500; nothing is enqueued or written'] at the edge of maxmemory (Redis just full, as it is in practice), requests are admitted or 503 — never 500 — and a 503 spent no budget and left no run", async () => {
    // first in its stack: the API process has not served an /ask yet; no worker runs
    const a2 = await createTenantWithUser(svc.t, { tier: 'team', budget: OOM_BUDGET });
    const kinds = ['ask', 'stream', 'investigate', 'triage'];
    const toks: { kind: string; tok: { token: string; id: string } }[] = [];
    for (let i = 0; i < 12; i++)
      toks.push({
        kind: kinds[i % 4]!,
        tok: await mintTestToken(svc.t, a2, 'read_write', { name: `edge-${i}` }),
      });
    const ia = await call(base, 'POST', '/api/v1/incidents', {
      token: toks[0]!.tok.token,
      body: { title: 'edge incident' },
    });
    expect(ia.status, ia.text).toBe(201);
    const inc = (ia.body.id ?? ia.body.incident?.id) as string;

    // Redis filled up to maxmemory (the last write refused), not beyond it
    await client.config('SET', 'maxmemory', '0');
    const info = await client.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    await client.config('SET', 'maxmemory', String(used + 2 * 1024 * 1024));
    const chunk = 'x'.repeat(64 * 1024);
    let oom = false;
    for (let i = 0; i < 2000 && !oom; i++) {
      try {
        await client.set(`bbfair-edge:${i}`, chunk);
      } catch (e) {
        oom = /OOM/.test(String(e));
      }
    }
    expect(oom, 'Redis refuses writes (OOM)').toBe(true);

    const answers: {
      kind: string;
      session: string;
      tok: { token: string; id: string };
      status: number;
      detail: unknown;
    }[] = [];
    for (const [i, { kind, tok }] of toks.entries()) {
      const session = `edge-${i}`;
      let r: { status: number; body: any };
      if (kind === 'ask') r = await ask(base, tok.token, turn(session), session, 5_000);
      else if (kind === 'stream') r = await openStream(base, tok.token, turn(session), session);
      else if (kind === 'investigate')
        r = await call(base, 'POST', `/api/v1/incidents/${inc}/agent-investigate`, {
          token: tok.token,
          body: {},
        });
      else
        r = await call(base, 'POST', '/api/v1/triage/alerts', {
          token: tok.token,
          body: { title: `edge-alert-${i}`, severity: 'low', source: 'bbfair', fingerprint: `edge-fp-${i}` },
        });
      answers.push({ kind, session, tok, status: r.status, detail: r.body?.detail });
      // a refused agent request's token is checked for a whole budget once a worker runs (last test)
      if (r.status === 503 && kind !== 'triage') refusedTok[session] = tok;
    }
    await client.config('SET', 'maxmemory', '0');
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', 'bbfair-edge:*', 'COUNT', 500);
      if (keys.length) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');

    const statuses = answers.map((x) => `${x.kind}:${x.status}`);
    // never a 500 (a 5xx other than 503)
    const bad = answers
      .filter((x) => x.status >= 500 && x.status !== 503)
      .map((x) => `${x.kind} ${x.status} ${JSON.stringify(x.detail)}`);
    // a 503 left nothing: no run in its session, no budget unit spent
    const leftovers: string[] = [];
    const day = new Date().toISOString().slice(0, 10);
    for (const x of answers.filter((y) => y.status === 503 && (y.kind === 'ask' || y.kind === 'stream'))) {
      const at = await attachStatus(base, x.tok.token, x.session);
      if (at.status !== 404) leftovers.push(`${x.kind} ${x.session}: a run exists (attach ${at.status})`);
    }
    for (const x of answers.filter((y) => y.status === 503 && y.kind !== 'triage')) {
      const counter = Number((await client.get(`${svc.t.redisPrefix}:budget:${x.tok.id}:${day}`)) ?? 0);
      if (counter !== 0) leftovers.push(`${x.kind} ${x.session}: budget counter ${counter} after a 503`);
    }
    expect({ bad, leftovers }, `statuses at the edge: ${statuses.join(' ')}`).toEqual({
      bad: [],
      leftovers: [],
    });
  });
  it("[operations.md: 'Every request that would enqueue then answers 503 {detail} ... never a 500; nothing is enqueued or written, and jobs already queued stay queued and run once memory is back']", async () => {
    const before = await openStream(base, tokA, turn('queued-before'), 'oom-before');
    expect(before.status, JSON.stringify(before.body)).toBe(200);

    // fill Redis to maxmemory with noeviction
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 32; i++) await client.set(`bbfair-junk:${i}`, chunk);
    // maxmemory below what is used: every write that may grow memory is refused, steadily
    const info = await client.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    await client.config('SET', 'maxmemory', String(used - 1024 * 1024));
    let oom = false;
    try {
      await client.set('bbfair-probe', 'x');
    } catch (e) {
      oom = /OOM/.test(String(e));
    }
    expect(oom, 'Redis refuses writes (OOM)').toBe(true);

    const results: Record<string, { status: number; headers: Headers; body: any }> = {};
    results.ask = await ask(base, refusedTok.ask!.token, turn('oom-ask'), 'oom-ask');
    results.stream = await openStream(base, refusedTok.stream!.token, turn('oom-stream'), 'oom-stream');
    results.investigate = await call(base, 'POST', `/api/v1/incidents/${incA}/agent-investigate`, {
      token: refusedTok.investigate!.token,
      body: {},
    });
    results.triage = await call(base, 'POST', '/api/v1/triage/alerts', {
      token: tokA,
      body: { title: 'oom-alert', severity: 'low', source: 'bbfair', fingerprint: 'oom-fp' },
    });
    // /ask again, after the API has seen the OOM on other routes
    results.ask2 = await ask(base, refusedTok.ask2!.token, turn('oom-ask2'), 'oom-ask2');

    // memory back
    await client.config('SET', 'maxmemory', '0');
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', 'bbfair-junk:*', 'COUNT', 500);
      if (keys.length) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');

    const summary = Object.fromEntries(
      Object.entries(results).map(([k, v]) => [
        k,
        `${v.status} ${JSON.stringify(v.body)} RA=${v.headers.get('retry-after')}`,
      ]),
    );
    for (const [k, v] of Object.entries(results)) {
      expect(v.status, `${k}: ${JSON.stringify(summary)}`).toBe(503);
      expect(typeof v.body?.detail, `${k}: {detail}`).toBe('string');
      expect(v.headers.get('retry-after'), `${k}: Retry-After`).toBeTruthy();
    }
  });

  it('the job queued before the refusal runs once memory is back; the refused turns left no run', async () => {
    worker = await startWorker(svc);
    const r = await runEvents(base, tokA, 'oom-before');
    expect(r.events.map((e) => e.event)).toContain('run.completed');
    expect(r.events.filter((e) => TERMINAL.includes(e.event))).toHaveLength(1);
    const left: Record<string, unknown> = {};
    for (const s of ['oom-ask', 'oom-ask2', 'oom-stream']) {
      const at = await attachStatus(base, tokA, s);
      if (at.status !== 404)
        left[s] = (await runEvents(base, tokA, s)).events.map((e) => [
          e.event,
          e.data.detail ?? e.data.reply,
        ]);
    }
    expect(left, 'sessions of refused turns that have a run (their events)').toEqual({});
    const ev = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token: tokA });
    expect((ev.body.events as any[]).map((e) => e.title)).not.toContain('oom-alert');
  });

  it("[operations.md: 'nothing is enqueued or written'; api.md: 'before anything is written or spent'] each refused request (own token) spent no budget: exactly OOM_BUDGET turns, then 429", async () => {
    worker ??= await startWorker(svc);
    const day = new Date().toISOString().slice(0, 10);
    const observed: Record<string, unknown> = {};
    for (const [k, tok] of Object.entries(refusedTok)) {
      const counter = await client.get(`${svc.t.redisPrefix}:budget:${tok.id}:${day}`);
      const statuses: number[] = [];
      for (let i = 0; i < OOM_BUDGET + 1; i++) {
        const r = await ask(base, tok.token, turn(`oom-after-${k}-${i}`), `oom-after-${k}-${i}`, 60_000);
        statuses.push(r.status);
        if (r.status !== 200) break;
      }
      observed[k] = { counter_after_refusal: Number(counter ?? 0), statuses };
    }
    const expected = Object.fromEntries(
      Object.keys(refusedTok).map((k) => [
        k,
        { counter_after_refusal: 0, statuses: [...Array(OOM_BUDGET).fill(200), 429] },
      ]),
    );
    expect(observed).toEqual(expected);
    // and, a worker serving triage having run all along since, the refused alert was never triaged
    const ev = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token: tokA });
    expect((ev.body.events as any[]).map((e) => e.title)).not.toContain('oom-alert');
  });
});
