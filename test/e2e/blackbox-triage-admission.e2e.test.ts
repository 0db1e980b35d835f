import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  startService,
  type ServiceProcess,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of POST /api/v1/triage/alerts admission under concurrency, from the contract and
// the docs alone: README (QUEUE_TENANT_BACKLOG_MAX, TRIAGE_WAIT_MS, TRIAGE_BATCH_IN_FLIGHT),
// docs/operations.md ("Backlog bound"; "Triage and incidents"), docs/api.md ("Triage"; the 503 row),
// docs/architecture.md ("Fairness and backpressure"), decisions.md ("Wave 2 shapes").
// Real API and worker processes over HTTP; the test database is read only to count the tenant's rows.
//
// How the backlog is brought to its bound without knowing the code: the API runs with a small
// QUEUE_TENANT_BACKLOG_MAX and no worker serves the triage queue, so each admitted batch is a job that
// waits (operations.md: "Without a triage worker, posted alerts are stored and answered pending: true
// after TRIAGE_WAIT_MS, and are decided when one starts").
//
// Two API processes share the database and Redis (the bound is the tenant's, per queue): `fast`
// (TRIAGE_WAIT_MS=300) answers pending quickly while no worker runs; `slow` (TRIAGE_WAIT_MS=10000)
// is where "decided" (pending: false) is asserted, so a loaded machine cannot turn a decision into
// a pending answer.

const BOUND = 3;
const FAST_WAIT_MS = 300;

let svc: SplitServices;
let fast = '';
let slow = '';
let slowApi: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;

interface Tenant {
  m: TestMember;
  rw: string;
  ro: string;
}
let A: Tenant; // brought to its bound
let B: Tenant; // posts while A is at its bound
let C: Tenant; // 200 single alerts below the bound
let D: Tenant; // mixed shapes below the bound

const tag = () => randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tenant(): Promise<Tenant> {
  const m = await createTenantWithUser(svc.t, { tier: 'team' });
  return {
    m,
    rw: (await mintTestToken(svc.t, m, 'read_write')).token,
    ro: (await mintTestToken(svc.t, m, 'read')).token,
  };
}

const post = (base: string, token: string, body: unknown) =>
  call(base, 'POST', '/api/v1/triage/alerts', { token, body });

async function events(token: string): Promise<any[]> {
  const res = await call(slow, 'GET', '/api/v1/triage/events?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body?.events), res.text).toBe(true);
  return res.body.events;
}
async function overview(token: string): Promise<any> {
  const res = await call(slow, 'GET', '/api/v1/triage/overview', { token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}
const countSum = (evs: any[]) => evs.reduce((s, e) => s + Number(e.count), 0);
/** fingerprint → count, from /triage/events. */
const byFingerprint = (evs: any[]) => Object.fromEntries(evs.map((e) => [e.fingerprint, e.count]));

/** Tables of the tenant's triage and incident state (found by listing tables, not from the code). */
let tables: string[] = [];
async function listTables(): Promise<string[]> {
  const r = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
    where c.table_schema = 'public' and c.column_name = 'tenant_id'
      and (c.table_name like 'triage%' or c.table_name like 'incident%')
    order by c.table_name`.execute(svc.t.db);
  return r.rows.map((x) => x.table_name);
}
/** Rows per table of one tenant. */
async function rowCounts(tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of tables) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}
      where tenant_id = ${tenantId}`.execute(svc.t.db);
    out[name] = r.rows[0]!.n;
  }
  return out;
}
/** Rows of the tenant (in any of those tables) whose content mentions `needle`. */
async function rowsMentioning(tenantId: string, needle: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of tables) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)} as x
      where x.tenant_id = ${tenantId} and row_to_json(x)::text like ${`%${needle}%`}`.execute(svc.t.db);
    out[name] = r.rows[0]!.n;
  }
  return out;
}

/** Our JSON alert. */
const ours = (fp: string, i: number, severity = 'medium') => ({
  title: `alert ${fp} ${i}`,
  severity,
  source: 'bb-admission',
  fingerprint: fp,
});
/** An Alertmanager webhook payload (version 4) with one alert per fingerprint. */
const alertmanager = (fps: string[]) => ({
  version: '4',
  status: 'firing',
  receiver: 'opsi',
  groupKey: `{}:{alertname="${fps[0]}"}`,
  truncatedAlerts: 0,
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://alertmanager.example',
  alerts: fps.map((fp, j) => ({
    status: 'firing',
    labels: { alertname: `AM${j}`, severity: 'warning' },
    annotations: { summary: `am ${fp} ${j}` },
    startsAt: new Date().toISOString(),
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus.example',
    fingerprint: fp,
  })),
});

/** A request body and the fingerprints of its alerts, in the order sent. */
interface Sent {
  body: unknown;
  fps: string[];
}
/** The i-th request of a mixed burst: a single alert, an array, {alerts: [...]}, or Alertmanager v4. */
function mixed(prefix: string, i: number): Sent {
  const n = 1 + (i % 3);
  const fps = Array.from({ length: n }, (_, j) => `${prefix}-${i}-${j}`);
  switch (i % 4) {
    case 0:
      return { body: ours(fps[0]!, i), fps: fps.slice(0, 1) };
    case 1:
      return { body: fps.map((fp, j) => ours(fp, j)), fps };
    case 2:
      return { body: { alerts: fps.map((fp, j) => ours(fp, j, 'low')) }, fps };
    default:
      return { body: alertmanager(fps), fps };
  }
}

/** Runs `jobs` with at most `width` at once; answers the results in job order. */
async function pool<T>(width: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out = new Array<T>(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

/** Polls until `done` or the bound; answers the last value. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, boundMs = 30_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await sleep(300);
    v = await read();
  }
  return v;
}

function expectRefused(res: { status: number; headers: Headers; body: any; text: string }, what: string) {
  expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(503);
  expect(typeof res.body?.detail, `${what}: {detail} in ${res.text.slice(0, 300)}`).toBe('string');
  expect(res.body.detail.length, `${what}: empty detail`).toBeGreaterThan(0);
  expect(res.headers.get('retry-after'), `${what}: Retry-After`).toBe('10');
}

beforeAll(async () => {
  svc = await startSplitServices({
    worker: false,
    env: { QUEUE_TENANT_BACKLOG_MAX: String(BOUND), TRIAGE_WAIT_MS: String(FAST_WAIT_MS) },
  });
  fast = svc.base;
  [slowApi, worker] = await Promise.all([
    startService({ ...svc.env, TRIAGE_WAIT_MS: '10000' }, { entry: 'apps/api/src/main.ts' }),
    svc.startWorker({ WORKER_QUEUES: 'triage' }),
  ]);
  slow = slowApi.url;
  [A, B, C, D] = await Promise.all([tenant(), tenant(), tenant(), tenant()]);
  tables = await listTables();
}, 180_000);

afterAll(async () => {
  await slowApi?.stop();
  await svc?.stop();
});

// ---------------------------------------------------------------------------------------------------
describe(`A at its bound (QUEUE_TENANT_BACKLOG_MAX=${BOUND}, no triage worker)`, () => {
  const k = tag();
  let eventsBefore: any[] = [];
  let overviewBefore: any;
  let decidedBefore = 0; // A's alerts decided while a worker still served triage
  let admitted = 0; // fill alerts answered 202 (pending) once the worker had stopped
  const FILL = [`fill-${k}-0`, `fill-${k}-1`]; // each fill request is one batch of these two
  const burstTag = `burst-${k}`;
  let bSent: Sent[] = [];
  let rowsAtBound: Record<string, number> = {};

  it('setup, api.md "Triage": "It answers 202 once the triage job has decided the batch": A has decided events (pending: false) while a worker serves triage; then the worker stops', async () => {
    expect(tables, 'triage tables with tenant_id').toEqual(expect.arrayContaining(['triage_events']));
    const first = await Promise.all(
      Array.from({ length: 4 }, (_, i) => post(slow, A.rw, ours(`pre-${k}-${i % 2}`, i, 'low'))),
    );
    for (const r of first) {
      expect(r.status, r.text).toBe(202);
      expect(r.body.pending, r.text).toBe(false);
      expect(r.body.events, r.text).toHaveLength(1);
    }
    decidedBefore = 4;
    await worker!.stop();
    worker = undefined;
    eventsBefore = await events(A.ro);
    expect(countSum(eventsBefore)).toBe(decidedBefore);
    overviewBefore = await overview(A.ro);
    expect(overviewBefore.pipeline.received).toBe(decidedBefore);
  }, 60_000);

  it('operations.md "Triage and incidents": "Without a triage worker, posted alerts are stored and answered pending: true after TRIAGE_WAIT_MS" and "Backlog bound": "how many jobs of one tenant may wait in one queue. A request that would add one more (… POST /api/v1/triage/alerts) answers 503 {detail} … with Retry-After: 10" (the count "give or take one")', async () => {
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < BOUND + 3 && !refused; i++) {
      const r = await post(
        fast,
        A.rw,
        FILL.map((fp) => ours(fp, i)),
      );
      if (r.status === 503) {
        refused = r;
        break;
      }
      expect(r.status, r.text).toBe(202);
      expect(r.body, r.text).toMatchObject({ accepted: 2, pending: true, events: [] });
      expect(typeof r.body.batch_id, r.text).toBe('string');
      admitted += 2;
    }
    expect(
      refused,
      `a refusal within ${BOUND + 3} sequential posts (admitted ${admitted / 2})`,
    ).toBeDefined();
    expectRefused(refused!, 'the post over the bound');
    expect(admitted / 2).toBeGreaterThanOrEqual(BOUND - 1);
    expect(admitted / 2).toBeLessThanOrEqual(BOUND + 1);
    rowsAtBound = await rowCounts(A.m.tenant.id);
  }, 60_000);

  it('operations.md "Backlog bound": "Posted alerts are admitted per batch (every request of a refused batch gets the 503)", "before anything is written", "other tenants are not affected": 36 concurrent posts of A (single alerts, arrays, {alerts}, Alertmanager v4; over both API processes) are all 503 {detail} + Retry-After: 10, while B posting at the same time is 202', async () => {
    const aSent = Array.from({ length: 36 }, (_, i) => mixed(burstTag, i));
    const bk = tag();
    bSent = [
      { body: ours(`b-${bk}-0`, 0), fps: [`b-${bk}-0`] },
      { body: alertmanager([`b-${bk}-1`, `b-${bk}-2`]), fps: [`b-${bk}-1`, `b-${bk}-2`] },
    ];
    const [aAnswers, bAnswers] = await Promise.all([
      Promise.all(aSent.map((s, i) => post(i % 3 === 2 ? slow : fast, A.rw, s.body))),
      Promise.all(bSent.map((s) => post(fast, B.rw, s.body))),
    ]);
    aAnswers.forEach((r, i) => expectRefused(r, `A request ${i} (${i % 3 === 2 ? 'slow' : 'fast'} API)`));
    bAnswers.forEach((r, i) => {
      expect(r.status, `B request ${i}: ${r.text}`).toBe(202);
      // no worker serves triage yet: B is admitted and answered pending (decided below, once one starts)
      expect(r.body, r.text).toMatchObject({ accepted: bSent[i]!.fps.length, pending: true, events: [] });
    });
  }, 60_000);

  it('api-v1.md: "read token: GET endpoints only" (api.md: "Any other method gets 403"): 10 concurrent read-token posts of A at its bound are 403 {detail}', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(i % 2 ? slow : fast, A.ro, mixed(`${burstTag}-ro`, i).body)),
    );
    for (const r of answers) {
      expect(r.status, r.text).toBe(403);
      expect(typeof r.body?.detail, r.text).toBe('string');
    }
  });

  it('operations.md: "before anything is written": A\'s /triage/events and /triage/overview are unchanged, and the database holds no new row of A (in any triage or incident table) and nothing of the refused requests', async () => {
    expect((await events(A.ro)).map((e) => [e.id, e.fingerprint, e.count])).toEqual(
      eventsBefore.map((e) => [e.id, e.fingerprint, e.count]),
    );
    expect((await overview(A.ro)).pipeline).toEqual(overviewBefore.pipeline);
    expect(await rowCounts(A.m.tenant.id)).toEqual(rowsAtBound);
    const mentions = await rowsMentioning(A.m.tenant.id, burstTag);
    expect(mentions, 'rows of A mentioning the refused requests').toEqual(
      Object.fromEntries(tables.map((n) => [n, 0])),
    );
    // B's admitted alerts are stored (the bound is A's, not B's)
    const bRows = await rowsMentioning(B.m.tenant.id, bSent[0]!.fps[0]!.slice(0, -2));
    expect(Object.values(bRows).reduce((s, n) => s + n, 0)).toBeGreaterThanOrEqual(3);
  });

  it('operations.md: "… answered pending: true …, and are decided when one starts": once a worker serves triage, A\'s admitted alerts are decided exactly once (counts add up to the alerts answered 202, nothing of the refused ones), and B\'s too', async () => {
    worker = await svc.startWorker({ WORKER_QUEUES: 'triage' });
    const want = decidedBefore + admitted;
    const aEvents = await until(
      () => events(A.ro),
      (evs) => countSum(evs) >= want,
    );
    const bWant = bSent.reduce((s, x) => s + x.fps.length, 0);
    await until(
      () => events(B.ro),
      (evs) => countSum(evs) >= bWant,
    );
    await sleep(1500); // anything decided twice (or a refused request stored after all) would show now
    const aFinal = await events(A.ro);
    expect(countSum(aFinal), JSON.stringify(aEvents)).toBe(want);
    const counts = byFingerprint(aFinal);
    expect(counts[FILL[0]!]).toBe(admitted / 2);
    expect(counts[FILL[1]!]).toBe(admitted / 2);
    expect(aFinal.filter((e) => String(e.fingerprint).includes(burstTag))).toEqual([]);
    expect((await overview(A.ro)).pipeline.received).toBe(want);
    const bFinal = await events(B.ro);
    expect(countSum(bFinal)).toBe(bWant);
    expect(Object.keys(byFingerprint(bFinal)).sort()).toEqual(bSent.flatMap((s) => s.fps).sort());
    expect(await rowsMentioning(A.m.tenant.id, burstTag)).toEqual(
      Object.fromEntries(tables.map((n) => [n, 0])),
    );
  }, 60_000);

  it('operations.md: "other tenants are not affected" / the bound is a backlog, not a quota: once drained, 12 concurrent posts of A are 202 and decided again (pending: false, each answer its own alerts in order)', async () => {
    const sent = Array.from({ length: 12 }, (_, i) => mixed(`after-${k}`, i));
    const answers = await Promise.all(sent.map((s) => post(slow, A.rw, s.body)));
    const evs = await events(A.ro);
    const fpOf = new Map(evs.map((e) => [e.id, e.fingerprint]));
    answers.forEach((r, i) => {
      expect(r.status, `request ${i}: ${r.text}`).toBe(202);
      expect(r.body.pending, `request ${i}: ${r.text}`).toBe(false);
      expect(r.body.accepted).toBe(sent[i]!.fps.length);
      expect(
        r.body.events.map((e: any) => fpOf.get(e.id)),
        `request ${i}`,
      ).toEqual(sent[i]!.fps);
    });
    expect(countSum(evs)).toBe(decidedBefore + admitted + sent.reduce((s, x) => s + x.fps.length, 0));
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
describe('below the bound (a worker serves triage)', () => {
  it('api.md "Triage": "Concurrent requests of one tenant are coalesced …; events are always this request\'s own alerts, in the order they were sent" and "a burst is one event": 200 single alerts of 5 fingerprints at concurrency 50 → each 202, not pending, its own event; 5 events whose counts sum to 200', async () => {
    expect(worker, 'the worker started by the previous block').toBeDefined();
    const k = tag();
    const fps = Array.from({ length: 5 }, (_, j) => `burst200-${k}-${j}`);
    const answers = await pool(
      50,
      Array.from({ length: 200 }, (_, i) => () => post(slow, C.rw, ours(fps[i % 5]!, i))),
    );
    const evs = await events(C.ro);
    const fpOf = new Map(evs.map((e) => [e.id, e.fingerprint]));
    answers.forEach((r, i) => {
      expect(r.status, `request ${i}: ${r.text}`).toBe(202);
      expect(r.body.accepted, `request ${i}`).toBe(1);
      expect(r.body.pending, `request ${i}: ${r.text}`).toBe(false);
      expect(r.body.events, `request ${i}`).toHaveLength(1);
      expect(fpOf.get(r.body.events[0].id), `request ${i}`).toBe(fps[i % 5]);
    });
    expect(evs).toHaveLength(5);
    expect(countSum(evs)).toBe(200);
    expect(byFingerprint(evs)).toEqual(Object.fromEntries(fps.map((fp) => [fp, 40])));
    expect((await overview(C.ro)).pipeline.received).toBe(200);
  }, 60_000);

  it('api.md "Triage": "events are always this request\'s own alerts, in the order they were sent": 40 concurrent mixed requests (single, array, {alerts}, Alertmanager v4) → none pending, each its own events in order; counts add up exactly', async () => {
    const k = tag();
    const sent = Array.from({ length: 40 }, (_, i) => mixed(`mix-${k}`, i));
    const answers = await Promise.all(sent.map((s) => post(slow, D.rw, s.body)));
    const evs = await events(D.ro);
    const fpOf = new Map(evs.map((e) => [e.id, e.fingerprint]));
    answers.forEach((r, i) => {
      expect(r.status, `request ${i}: ${r.text}`).toBe(202);
      expect(r.body.pending, `request ${i}: ${r.text}`).toBe(false);
      expect(r.body.accepted, `request ${i}`).toBe(sent[i]!.fps.length);
      expect(
        r.body.events.map((e: any) => fpOf.get(e.id)),
        `request ${i}`,
      ).toEqual(sent[i]!.fps);
    });
    const total = sent.reduce((s, x) => s + x.fps.length, 0);
    expect(evs).toHaveLength(total); // every fingerprint distinct
    expect(countSum(evs)).toBe(total);
  }, 60_000);

  it('decisions.md "POST /api/v1/triage/alerts (read_write)" and api.md "read: Any other method gets 403": 20 concurrent read-token posts (beside 5 read_write ones) are 403 {detail}; events, overview and rows of the tenant change only by the read_write alerts', async () => {
    const k = tag();
    const evs0 = await events(C.ro);
    const ov0 = await overview(C.ro);
    const rows0 = await rowCounts(C.m.tenant.id);
    const roSent = Array.from({ length: 20 }, (_, i) => mixed(`ro-${k}`, i));
    const rwSent = Array.from({ length: 5 }, (_, i) => ({ body: ours(`rw-${k}`, i), fps: [`rw-${k}`] }));
    const [roAns, rwAns] = await Promise.all([
      Promise.all(roSent.map((s, i) => post(i % 2 ? slow : fast, C.ro, s.body))),
      Promise.all(rwSent.map((s) => post(slow, C.rw, s.body))),
    ]);
    for (const r of roAns) {
      expect(r.status, r.text).toBe(403);
      expect(typeof r.body?.detail, r.text).toBe('string');
    }
    for (const r of rwAns) expect(r.status, r.text).toBe(202);
    const evs1 = await events(C.ro);
    expect(evs1.filter((e) => String(e.fingerprint).startsWith(`ro-${k}`))).toEqual([]);
    expect(countSum(evs1)).toBe(countSum(evs0) + 5);
    expect(byFingerprint(evs1)[`rw-${k}`]).toBe(5);
    expect((await overview(C.ro)).pipeline.received).toBe(ov0.pipeline.received + 5);
    expect(Object.values(await rowsMentioning(C.m.tenant.id, `ro-${k}`)).every((n) => n === 0)).toBe(true);
    const rows1 = await rowCounts(C.m.tenant.id);
    // the 5 read_write alerts (one fingerprint, medium: no incident) add one event row and, in the
    // inbox, one row each; no other row of the tenant changes
    const expected: Record<string, number> = { ...rows0, triage_events: rows0.triage_events! + 1 };
    if ('triage_inbox' in rows0) expected.triage_inbox = rows0.triage_inbox! + 5;
    expect(rows1).toEqual(expected);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
describe('at the edge of the bound: waves of concurrent posts, no worker, then a worker', () => {
  it('operations.md "Backlog bound": "how many jobs of one tenant may wait in one queue", "The count is the tenant\'s waiting jobs …, give or take one", "Posted alerts are admitted per batch (every request of a refused batch gets the 503)", "before anything is written"; architecture.md: "One Lua script … so concurrent producers agree"; README: "Start as many API and worker processes as you need": 4 waves of 10 concurrent mixed posts of A over two API processes with no worker → each 202 pending or 503 {detail} + Retry-After: 10; at most BOUND+1 batches admitted; once a worker starts, exactly the alerts answered 202 are decided, and nothing of the 503 ones is stored', async () => {
    await worker!.stop();
    worker = undefined;
    const k = tag();
    const before = await events(A.ro);
    const rows0 = await rowCounts(A.m.tenant.id);
    const sent: Sent[] = [];
    const answers: Awaited<ReturnType<typeof post>>[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const batch = Array.from({ length: 10 }, (_, i) => mixed(`edge-${k}-w${wave}`, i));
      sent.push(...batch);
      answers.push(
        ...(await Promise.all(batch.map((s, i) => post(i % 4 === 3 ? slow : fast, A.rw, s.body)))),
      );
      await sleep(FAST_WAIT_MS + 200); // earlier batches answered: their slots are free, their jobs still wait
    }
    const ok = answers.map((r, i) => ({ r, s: sent[i]! })).filter((x) => x.r.status === 202);
    const refused = answers.map((r, i) => ({ r, s: sent[i]!, i })).filter((x) => x.r.status !== 202);
    for (const { r, i } of refused) expectRefused(r, `edge request ${i}`);
    for (const { r, s } of ok) {
      expect(r.body.accepted, r.text).toBe(s.fps.length);
      // a request of the slow API (TRIAGE_WAIT_MS=10000) that was admitted also ends pending: no worker
      expect(r.body.pending, r.text).toBe(true);
      expect(r.body.events, r.text).toEqual([]);
    }
    expect(ok.length, 'at least one post admitted (A had no backlog)').toBeGreaterThan(0);
    expect(refused.length, 'at least one post refused (the backlog only grows)').toBeGreaterThan(0);
    // one job per admitted batch ("its job id is the batch id"), and no worker takes any: every admitted
    // batch is a waiting job of A, so at most BOUND (give or take one) may be admitted. Soft, so that
    // the storage checks below still run and report.
    const batches = new Set(ok.map((x) => x.r.body.batch_id));
    expect
      .soft(
        batches.size,
        `admitted batches (each a waiting job of A; refusals said: ${refused[0]?.r.body?.detail}) ${[...batches].join(', ')}`,
      )
      .toBeLessThanOrEqual(BOUND + 1);
    // nothing of the refused requests is in the database
    for (const { s, i } of refused) {
      for (const fp of s.fps) {
        const m = await rowsMentioning(A.m.tenant.id, fp);
        expect(
          Object.values(m).reduce((a, n) => a + n, 0),
          `refused request ${i}, ${fp}`,
        ).toBe(0);
      }
    }
    const admittedAlerts = ok.reduce((a, x) => a + x.s.fps.length, 0);
    const rows1 = await rowCounts(A.m.tenant.id);
    if ('triage_inbox' in rows0) expect(rows1.triage_inbox).toBe(rows0.triage_inbox! + admittedAlerts);

    worker = await svc.startWorker({ WORKER_QUEUES: 'triage' });
    const want = countSum(before) + admittedAlerts;
    await until(
      () => events(A.ro),
      (evs) => countSum(evs) >= want,
    );
    await sleep(1500);
    const after = await events(A.ro);
    expect(countSum(after)).toBe(want);
    const got = byFingerprint(after);
    for (const { s } of ok) for (const fp of s.fps) expect(got[fp], `admitted ${fp}`).toBe(1);
    for (const { s } of refused) for (const fp of s.fps) expect(got[fp], `refused ${fp}`).toBeUndefined();
  }, 90_000);
});
