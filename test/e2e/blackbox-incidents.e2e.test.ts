import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  readSse,
  type TestContext,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';
import { until as pollUntil } from '../support/poll';

// Black-box checks of issue 13 (incidents and triage) from the contract alone: api-v1.md (Incidents,
// Triage, Errors, Limits), decisions.md (Incidents; Wave 2 shapes). Real API and worker processes, a
// `small` demo, HTTP only; facts about the demo come from SQL over the inventory tables.

const INCIDENT_KEYS = [
  'id',
  'title',
  'severity',
  'status',
  'description',
  'created_at',
  'updated_at',
  'resolved_at',
  'source',
  'resources',
  'war_room',
];
const EVENT_KEYS = ['id', 'incident_id', 'kind', 'body', 'actor', 'created_at'];
const NODE_KEYS = ['id', 'arn', 'native_id', 'type', 'name', 'account_id', 'region'];
const TRIAGE_EVENT_KEYS = [
  'id',
  'at',
  'source',
  'fingerprint',
  'title',
  'severity',
  'resource',
  'action',
  'incident_id',
  'count',
];
const TRIAGE_ACTIONS = ['new', 'deduplicated', 'suppressed', 'correlated', 'incident_opened'];
const TERMINAL = ['run.completed', 'run.failed'];

let t: TestContext;
let svc: SplitServices;
let base = '';
let a: TestMember; // team, demo seed 7, scanned
let b: TestMember; // team, no environment (webhooks, isolation)
let free: TestMember; // free tier
let poor: TestMember; // team, daily agent budget 1
let rwA = '';
let roA = '';
let rwB = '';
let roB = '';
let rwFree = '';
let rwPoor = '';

const req = (method: string, path: string, token: string, body?: unknown) =>
  call(base, method, path, body === undefined ? { token } : { token, body });

const until = <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 90_000) =>
  pollUntil(what, probe, boundMs, 500);

const admin = (args: string[]) => svc.admin(args, 240_000);

/** The incident object of a detail/create answer (bare or under `incident`). */
const inc = (body: any) => (body && typeof body.id === 'string' ? body : body?.incident);

/** The event array of a timeline answer (under the plural noun). */
function timelineOf(body: any): any[] {
  const arr = body?.events ?? body?.timeline;
  expect(Array.isArray(arr), `timeline list in ${JSON.stringify(body)}`).toBe(true);
  return arr;
}

async function timeline(id: string, token = rwA, afterId?: number) {
  const res = await req(
    'GET',
    `/api/v1/incidents/${id}/timeline${afterId !== undefined ? `?after_id=${afterId}` : ''}`,
    token,
  );
  expect(res.status, res.text).toBe(200);
  return timelineOf(res.body);
}

async function create(token: string, body: Record<string, unknown>) {
  const res = await req('POST', '/api/v1/incidents', token, body);
  expect(res.status, res.text).toBe(201);
  const i = inc(res.body);
  expect(i, res.text).toBeTruthy();
  return i;
}

async function triageEvents(token: string) {
  const res = await req('GET', '/api/v1/triage/events?limit=500', token);
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body.events)).toBe(true);
  return res.body.events as any[];
}

beforeAll(async () => {
  svc = await startSplitServices();
  ({ t, base } = svc);
  a = await createTenantWithUser(t, { tier: 'team' });
  b = await createTenantWithUser(t, { tier: 'team' });
  free = await createTenantWithUser(t, { tier: 'free' });
  poor = await createTenantWithUser(t, { tier: 'team', budget: 1 });
  rwA = (await mintTestToken(t, a, 'read_write')).token;
  roA = (await mintTestToken(t, a, 'read')).token;
  rwB = (await mintTestToken(t, b, 'read_write')).token;
  roB = (await mintTestToken(t, b, 'read')).token;
  rwFree = (await mintTestToken(t, free, 'read_write')).token;
  rwPoor = (await mintTestToken(t, poor, 'read_write')).token;
  await admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '7']);
  await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
}, 600_000);

afterAll(async () => {
  await svc?.stop();
});

describe('incidents: create, validation, shapes', () => {
  it('POST without title is 400 {detail}; empty title is 400', async () => {
    for (const body of [{}, { severity: 'SEV2' }, { title: '' }]) {
      const res = await req('POST', '/api/v1/incidents', rwA, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body?.detail, res.text).toBe('string');
    }
  });

  it('unknown severity on create is 400 and nothing is stored', async () => {
    const title = `bad-sev-${randomBytes(3).toString('hex')}`;
    for (const severity of ['SEV5', 'sev1', 'critical', 'SEV0']) {
      const res = await req('POST', '/api/v1/incidents', rwA, { title, severity });
      expect(res.status, severity).toBe(400);
    }
    const list = await req('GET', '/api/v1/incidents?limit=500', rwA);
    expect(list.body.incidents.filter((i: any) => i.title === title)).toEqual([]);
  });

  it('defaults: SEV3, status open, source manual, full Wave 2 shape; detail equals', async () => {
    const i = await create(rwA, { title: 'DB latency', description: 'p99 up' });
    for (const k of INCIDENT_KEYS) expect(i, `incident field ${k}`).toHaveProperty(k);
    expect(i.severity).toBe('SEV3');
    expect(i.status).toBe('open');
    expect(i.source).toBe('manual');
    expect(i.description).toBe('p99 up');
    expect(i.war_room).toBeNull();
    expect(i.resolved_at).toBeNull();
    expect(Array.isArray(i.resources)).toBe(true);
    const got = await req('GET', `/api/v1/incidents/${i.id}`, roA);
    expect(got.status).toBe(200);
    const d = inc(got.body);
    for (const k of INCIDENT_KEYS) expect(d, `detail field ${k}`).toHaveProperty(k);
    expect(d.id).toBe(i.id);
    expect(d.title).toBe('DB latency');
  });

  it('every severity SEV1..SEV4 is accepted', async () => {
    for (const severity of ['SEV1', 'SEV2', 'SEV3', 'SEV4']) {
      const i = await create(rwA, { title: `sev ${severity}`, severity });
      expect(i.severity).toBe(severity);
    }
  });

  it('creating writes exactly one `created` timeline event, with the event shape', async () => {
    const i = await create(rwA, { title: 'one created' });
    const events = await timeline(i.id);
    expect(events.map((e) => e.kind)).toEqual(['created']);
    for (const k of EVENT_KEYS) expect(events[0], `event field ${k}`).toHaveProperty(k);
    expect(events[0].incident_id).toBe(i.id);
    expect(typeof events[0].id).toBe('number');
  });

  it('unknown incident id is 404 on every endpoint', async () => {
    const ghost = '00000000-0000-4000-8000-000000000000';
    const checks: [string, string, unknown?][] = [
      ['GET', `/api/v1/incidents/${ghost}`],
      ['PATCH', `/api/v1/incidents/${ghost}`, { status: 'investigating' }],
      ['GET', `/api/v1/incidents/${ghost}/timeline`],
      ['POST', `/api/v1/incidents/${ghost}/timeline`, { body: 'x' }],
      ['POST', `/api/v1/incidents/${ghost}/agent-investigate`, {}],
      ['POST', `/api/v1/incidents/${ghost}/war-room`, {}],
    ];
    for (const [m, p, body] of checks) {
      const res = await req(m, p, rwA, body);
      expect(res.status, `${m} ${p}`).toBe(404);
    }
  });
});

describe('incidents: PATCH and timeline', () => {
  it('each PATCH change writes status_changed / severity_changed; resolved sets resolved_at', async () => {
    const i = await create(rwA, { title: 'patch me' });
    let res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { status: 'investigating' });
    expect(res.status, res.text).toBe(200);
    expect(inc(res.body).status).toBe('investigating');
    res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { severity: 'SEV1' });
    expect(res.status, res.text).toBe(200);
    expect(inc(res.body).severity).toBe('SEV1');
    res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { status: 'mitigated' });
    expect(res.status).toBe(200);
    res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { status: 'resolved' });
    expect(res.status).toBe(200);
    expect(inc(res.body).resolved_at).not.toBeNull();
    res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { title: 'patched', description: 'd2' });
    expect(res.status).toBe(200);
    const d = inc((await req('GET', `/api/v1/incidents/${i.id}`, rwA)).body);
    expect(d.title).toBe('patched');
    expect(d.description).toBe('d2');
    expect(d.status).toBe('resolved');
    expect(d.severity).toBe('SEV1');
    const kinds = (await timeline(i.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'created')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'status_changed')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'severity_changed')).toHaveLength(1);
  });

  it('PATCH with unknown status or severity is 400 and changes nothing', async () => {
    const i = await create(rwA, { title: 'patch bad' });
    for (const body of [
      { status: 'closed' },
      { status: 'OPEN' },
      { severity: 'SEV5' },
      { severity: 'high' },
    ]) {
      const res = await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const d = inc((await req('GET', `/api/v1/incidents/${i.id}`, rwA)).body);
    expect(d.status).toBe('open');
    expect(d.severity).toBe('SEV3');
    expect((await timeline(i.id)).map((e) => e.kind)).toEqual(['created']);
  });

  it('POST note is 201 and adds a `note` event; missing body is 400', async () => {
    const i = await create(rwA, { title: 'notes' });
    const res = await req('POST', `/api/v1/incidents/${i.id}/timeline`, rwA, { body: 'checked the LB' });
    expect(res.status, res.text).toBe(201);
    const bad = await req('POST', `/api/v1/incidents/${i.id}/timeline`, rwA, {});
    expect(bad.status).toBe(400);
    const events = await timeline(i.id);
    expect(events.map((e) => e.kind)).toEqual(['created', 'note']);
    expect(JSON.stringify(events[1].body)).toContain('checked the LB');
  });

  it('timeline ids strictly increase and after_id=n returns exactly what came after n', async () => {
    const i = await create(rwA, { title: 'after_id' });
    for (let k = 0; k < 5; k++) {
      const res = await req('POST', `/api/v1/incidents/${i.id}/timeline`, rwA, { body: `note ${k}` });
      expect(res.status).toBe(201);
    }
    await req('PATCH', `/api/v1/incidents/${i.id}`, rwA, { severity: 'SEV2' });
    const all = await timeline(i.id);
    expect(all).toHaveLength(7);
    const ids = all.map((e) => e.id as number);
    for (let k = 1; k < ids.length; k++) expect(ids[k]).toBeGreaterThan(ids[k - 1]!);
    for (let k = 0; k < ids.length; k++) {
      const after = await timeline(i.id, roA, ids[k]);
      expect(after.map((e) => e.id)).toEqual(ids.slice(k + 1));
    }
    expect(await timeline(i.id, roA, ids.at(-1)! + 1000)).toEqual([]);
    expect((await timeline(i.id, roA, 0)).map((e) => e.id)).toEqual(ids);
  });
});

describe('incidents: list filters and bounds', () => {
  it('{incidents: [...]}, newest first, status and severity filters', async () => {
    const x = await create(rwA, { title: 'filt SEV4', severity: 'SEV4' });
    await req('PATCH', `/api/v1/incidents/${x.id}`, rwA, { status: 'mitigated' });
    const res = await req('GET', '/api/v1/incidents?limit=500', roA);
    expect(res.status).toBe(200);
    const list = res.body.incidents as any[];
    expect(Array.isArray(list)).toBe(true);
    for (const i of list) for (const k of INCIDENT_KEYS) expect(i, `list field ${k}`).toHaveProperty(k);
    const times = list.map((i) => Date.parse(i.created_at));
    for (let k = 1; k < times.length; k++) expect(times[k]).toBeLessThanOrEqual(times[k - 1]!);
    const mitigated = (await req('GET', '/api/v1/incidents?status=mitigated&limit=500', roA)).body.incidents;
    expect(mitigated.length).toBeGreaterThan(0);
    expect(mitigated.every((i: any) => i.status === 'mitigated')).toBe(true);
    expect(mitigated.map((i: any) => i.id)).toEqual(
      list.filter((i) => i.status === 'mitigated').map((i) => i.id),
    );
    const sev4 = (await req('GET', '/api/v1/incidents?severity=SEV4&limit=500', roA)).body.incidents;
    expect(sev4.map((i: any) => i.id)).toEqual(list.filter((i) => i.severity === 'SEV4').map((i) => i.id));
    const both = (await req('GET', '/api/v1/incidents?severity=SEV4&status=mitigated', roA)).body.incidents;
    expect(both.map((i: any) => i.id)).toContain(x.id);
    expect(both.every((i: any) => i.severity === 'SEV4' && i.status === 'mitigated')).toBe(true);
  });

  it('limit default 50, limit/offset paging', async () => {
    const all = (await req('GET', '/api/v1/incidents?limit=500', roA)).body.incidents as any[];
    while (all.length < 52) all.unshift(await create(rwA, { title: `page ${all.length}` }));
    const full = (await req('GET', '/api/v1/incidents?limit=500', roA)).body.incidents as any[];
    const def = (await req('GET', '/api/v1/incidents', roA)).body.incidents as any[];
    expect(def).toHaveLength(50);
    expect(def.map((i) => i.id)).toEqual(full.slice(0, 50).map((i) => i.id));
    const page = (await req('GET', '/api/v1/incidents?limit=2&offset=3', roA)).body.incidents as any[];
    expect(page.map((i) => i.id)).toEqual(full.slice(3, 5).map((i) => i.id));
    const one = (await req('GET', '/api/v1/incidents?limit=1', roA)).body.incidents as any[];
    expect(one.map((i) => i.id)).toEqual([full[0].id]);
    const beyond = await req('GET', `/api/v1/incidents?offset=${full.length + 10}`, roA);
    expect(beyond.status).toBe(200);
    expect(beyond.body.incidents).toEqual([]);
  });

  it('limit outside 1..500, offset < 0, unknown status/severity filter: 400', async () => {
    for (const q of [
      'limit=0',
      'limit=501',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'offset=-1',
      'offset=abc',
      'status=closed',
      'severity=SEV9',
    ]) {
      const res = await req('GET', `/api/v1/incidents?${q}`, roA);
      expect(res.status, q).toBe(400);
    }
    expect((await req('GET', '/api/v1/incidents?limit=500&offset=0', roA)).status).toBe(200);
  });
});

describe('incidents: auth and isolation', () => {
  let id = '';
  beforeAll(async () => {
    id = (await create(rwA, { title: 'isolation' })).id;
  });

  it('no token 401 on every endpoint', async () => {
    for (const [m, p] of [
      ['GET', '/api/v1/incidents'],
      ['POST', '/api/v1/incidents'],
      ['GET', `/api/v1/incidents/${id}`],
      ['GET', `/api/v1/incidents/${id}/timeline`],
      ['GET', '/api/v1/triage/overview'],
      ['GET', '/api/v1/triage/events'],
      ['GET', '/api/v1/triage/rules'],
      ['POST', '/api/v1/triage/alerts'],
    ] as const) {
      const res = await call(base, m, p, m === 'POST' ? { body: { title: 'x' } } : {});
      expect(res.status, `${m} ${p}`).toBe(401);
    }
  });

  it('read token: 403 on every write, nothing changes', async () => {
    const writes: [string, string, unknown][] = [
      ['POST', '/api/v1/incidents', { title: 'ro' }],
      ['PATCH', `/api/v1/incidents/${id}`, { status: 'resolved' }],
      ['POST', `/api/v1/incidents/${id}/timeline`, { body: 'ro note' }],
      ['POST', `/api/v1/incidents/${id}/agent-investigate`, {}],
      ['POST', `/api/v1/incidents/${id}/war-room`, {}],
      ['POST', '/api/v1/triage/alerts', { title: 'ro alert', severity: 'critical', source: 'test' }],
    ];
    for (const [m, p, body] of writes) {
      const res = await req(m, p, roA, body);
      expect(res.status, `${m} ${p}`).toBe(403);
    }
    const d = inc((await req('GET', `/api/v1/incidents/${id}`, roA)).body);
    expect(d.status).toBe('open');
    expect(d.war_room).toBeNull();
    expect((await timeline(id)).map((e) => e.kind)).toEqual(['created']);
  });

  it("another tenant's incident id: 404 on every incident endpoint, nothing changes", async () => {
    const checks: [string, string, string, unknown?][] = [
      ['GET', `/api/v1/incidents/${id}`, roB],
      ['PATCH', `/api/v1/incidents/${id}`, rwB, { status: 'resolved' }],
      ['GET', `/api/v1/incidents/${id}/timeline`, roB],
      ['GET', `/api/v1/incidents/${id}/timeline?after_id=0`, roB],
      ['POST', `/api/v1/incidents/${id}/timeline`, rwB, { body: 'intruder' }],
      ['POST', `/api/v1/incidents/${id}/agent-investigate`, rwB, {}],
      ['POST', `/api/v1/incidents/${id}/war-room`, rwB, {}],
    ];
    for (const [m, p, tok, body] of checks) {
      const res = await req(m, p, tok, body);
      expect(res.status, `${m} ${p}`).toBe(404);
    }
    const sse = await readSse(`${base}/api/v1/incidents/${id}/timeline/stream`, {
      token: roB,
      timeoutMs: 10_000,
    });
    expect(sse.status, 'GET timeline/stream').toBe(404);
    const listB = (await req('GET', '/api/v1/incidents?limit=500', roB)).body.incidents as any[];
    expect(listB.map((i) => i.id)).not.toContain(id);
    expect((await timeline(id)).map((e) => e.kind)).toEqual(['created']);
  });
});

describe('incidents: live timeline (SSE)', () => {
  it('replays with id: equal to event ids, resumes after Last-Event-ID, a new note arrives live', async () => {
    const i = await create(rwA, { title: 'sse' });
    for (let k = 0; k < 3; k++)
      await req('POST', `/api/v1/incidents/${i.id}/timeline`, rwA, { body: `n${k}` });
    const ids = (await timeline(i.id)).map((e) => e.id as number);
    expect(ids).toHaveLength(4);
    const url = `${base}/api/v1/incidents/${i.id}/timeline/stream`;

    const replay = await readSse(url, { token: roA, stopAfter: (ev) => ev.length >= 4, timeoutMs: 20_000 });
    expect(replay.status).toBe(200);
    expect(replay.events.map((e) => e.id)).toEqual(ids);

    const resumed = await readSse(url, {
      token: roA,
      headers: { 'last-event-id': String(ids[1]) },
      stopAfter: (ev) => ev.length >= 2,
      timeoutMs: 20_000,
    });
    expect(resumed.events.map((e) => e.id)).toEqual(ids.slice(2));

    const live = readSse(url, {
      token: roA,
      headers: { 'last-event-id': String(ids.at(-1)) },
      stopAfter: (ev) => ev.some((e) => JSON.stringify(e.data).includes('live note')),
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 1500));
    const note = await req('POST', `/api/v1/incidents/${i.id}/timeline`, rwA, { body: 'live note' });
    expect(note.status).toBe(201);
    const after = await timeline(i.id, roA, ids.at(-1));
    expect(after).toHaveLength(1);
    const seen = (await live).events;
    expect(seen.map((e) => e.id)).toEqual([after[0].id]);
    expect(JSON.stringify(seen[0]!.data)).toContain('live note');
  });
});

describe('war room', () => {
  it('201 then 200 with the same id and session_id, one war_room_opened event, incident.war_room set', async () => {
    const i = await create(rwA, { title: 'war' });
    const first = await req('POST', `/api/v1/incidents/${i.id}/war-room`, rwA, {});
    expect(first.status, first.text).toBe(201);
    for (const k of ['id', 'incident_id', 'session_id', 'created_at', 'participants']) {
      expect(first.body, `war room field ${k}`).toHaveProperty(k);
    }
    expect(first.body.incident_id).toBe(i.id);
    expect(Array.isArray(first.body.participants)).toBe(true);
    for (const p of first.body.participants) {
      expect(p).toHaveProperty('user_id');
      expect(p).toHaveProperty('name');
    }
    const second = await req('POST', `/api/v1/incidents/${i.id}/war-room`, rwA, {});
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.session_id).toBe(first.body.session_id);
    const kinds = (await timeline(i.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'war_room_opened')).toHaveLength(1);
    const d = inc((await req('GET', `/api/v1/incidents/${i.id}`, roA)).body);
    expect(d.war_room).toMatchObject({ id: first.body.id, session_id: first.body.session_id });
  });

  it('free tier: 402 {error:"tier_restricted", message, upgrade_required:true}, nothing written', async () => {
    const i = await create(rwFree, { title: 'free war' });
    const res = await req('POST', `/api/v1/incidents/${i.id}/war-room`, rwFree, {});
    expect(res.status, res.text).toBe(402);
    expect(res.body.error).toBe('tier_restricted');
    expect(typeof res.body.message).toBe('string');
    expect(res.body.upgrade_required).toBe(true);
    expect((await timeline(i.id, rwFree)).map((e) => e.kind)).toEqual(['created']);
  });
});

describe('agent investigation', () => {
  it('202 {job_id,status,run_id,session_id}; the run streams to exactly one terminal event; started + completed events', async () => {
    const i = await create(rwA, { title: 'Prod database CPU high', severity: 'SEV2' });
    const res = await req('POST', `/api/v1/incidents/${i.id}/agent-investigate`, rwA, {});
    expect(res.status, res.text).toBe(202);
    for (const k of ['job_id', 'status', 'run_id', 'session_id'])
      expect(res.body, `field ${k}`).toHaveProperty(k);
    const sse = await readSse(
      `${base}/api/v1/stream/attach?session_id=${encodeURIComponent(res.body.session_id)}&after_seq=0`,
      { token: rwA, timeoutMs: 240_000 },
    );
    expect(sse.status, JSON.stringify(sse.body)).toBe(200);
    expect(sse.events.length).toBeGreaterThan(0);
    expect(sse.events.filter((e) => TERMINAL.includes(e.event))).toHaveLength(1);
    expect(TERMINAL).toContain(sse.events.at(-1)!.event);
    expect(new Set(sse.events.map((e) => e.data.run_id))).toEqual(new Set([res.body.run_id]));
    const events = await until(
      'investigation_completed/failed on the timeline',
      async () => {
        const ev = await timeline(i.id);
        return ev.some((e) => e.kind === 'investigation_completed' || e.kind === 'investigation_failed')
          ? ev
          : undefined;
      },
      60_000,
    );
    const kinds = events.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'investigation_started')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'investigation_completed' || k === 'investigation_failed')).toHaveLength(
      1,
    );
    expect(kinds.indexOf('investigation_started')).toBeLessThan(
      kinds.findIndex((k) => k === 'investigation_completed' || k === 'investigation_failed'),
    );
    if (sse.events.at(-1)!.event === 'run.completed') expect(kinds).toContain('investigation_completed');
  }, 300_000);

  it('spends the agent budget: 429 when spent (tenant budget 1)', async () => {
    const i = await create(rwPoor, { title: 'budget' });
    const first = await req('POST', `/api/v1/incidents/${i.id}/agent-investigate`, rwPoor, {});
    expect(first.status, first.text).toBe(202);
    const second = await req('POST', `/api/v1/incidents/${i.id}/agent-investigate`, rwPoor, {});
    expect(second.status, second.text).toBe(429);
  });
});

describe('triage: reads', () => {
  it('overview, events and rules have the Wave 2 shapes', async () => {
    const ov = await req('GET', '/api/v1/triage/overview', roA);
    expect(ov.status).toBe(200);
    for (const k of ['received', 'deduplicated', 'suppressed', 'correlated', 'incidents_opened']) {
      expect(typeof ov.body.pipeline?.[k], `pipeline.${k}`).toBe('number');
    }
    for (const k of ['open_alerts', 'rules', 'last_event_at']) expect(ov.body, k).toHaveProperty(k);
    const rules = await req('GET', '/api/v1/triage/rules', roA);
    expect(rules.status).toBe(200);
    expect(rules.body.rules.length).toBeGreaterThan(0);
    for (const r of rules.body.rules) {
      for (const k of ['id', 'name', 'kind', 'match', 'action', 'enabled', 'built_in'])
        expect(r, k).toHaveProperty(k);
      expect(['dedupe', 'suppress', 'correlate', 'route']).toContain(r.kind);
    }
    expect(rules.body.rules.some((r: any) => r.built_in === true)).toBe(true);
    const ev = await req('GET', '/api/v1/triage/events', roA);
    expect(ev.status).toBe(200);
    expect(Array.isArray(ev.body.events)).toBe(true);
  });

  it('triage/events limit outside 1..500 is 400', async () => {
    for (const q of ['limit=0', 'limit=501', 'limit=-3', 'limit=x']) {
      expect((await req('GET', `/api/v1/triage/events?${q}`, roA)).status, q).toBe(400);
    }
  });
});

describe('triage: POST /api/v1/triage/alerts (tenant B, no environment)', () => {
  it('a burst of the same alert (same fingerprint) x10 makes one event with count 10', async () => {
    const fingerprint = `fp-burst-${randomBytes(4).toString('hex')}`;
    const alert = { title: 'Checkout 5xx rate high', severity: 'critical', source: 'blackbox', fingerprint };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => req('POST', '/api/v1/triage/alerts', rwB, alert)),
    );
    for (const r of answers) {
      expect(r.status, r.text).toBe(202);
      expect(typeof r.body.accepted).toBe('number');
      expect(r.body.events).toHaveLength(1);
      for (const k of ['id', 'action', 'incident_id']) expect(r.body.events[0], k).toHaveProperty(k);
      expect(TRIAGE_ACTIONS).toContain(r.body.events[0].action);
    }
    const mine = await until(
      'count 10',
      async () => {
        const ev = (await triageEvents(roB)).filter((e) => e.fingerprint === fingerprint);
        return ev.reduce((s, e) => s + (e.count ?? 0), 0) >= 10 ? ev : undefined;
      },
      20_000,
    ).catch(async () => (await triageEvents(roB)).filter((e) => e.fingerprint === fingerprint));
    expect(mine, JSON.stringify(mine)).toHaveLength(1);
    expect(mine[0].count).toBe(10);
    for (const k of TRIAGE_EVENT_KEYS) expect(mine[0], `triage event field ${k}`).toHaveProperty(k);
    expect(new Set(answers.map((r) => r.body.events[0].id))).toEqual(new Set([mine[0].id]));
  });

  it('a batch of our JSON is accepted', async () => {
    const tag = randomBytes(3).toString('hex');
    const res = await req('POST', '/api/v1/triage/alerts', rwB, [
      { title: `batch one ${tag}`, severity: 'high', source: 'blackbox', fingerprint: `b1-${tag}` },
      { title: `batch two ${tag}`, severity: 'critical', source: 'blackbox', fingerprint: `b2-${tag}` },
    ]);
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(2);
    expect(res.body.events).toHaveLength(2);
  });

  it('an Alertmanager webhook v4 payload is accepted: 202 {accepted, events:[{id, action, incident_id}]}', async () => {
    const fp = randomBytes(8).toString('hex');
    const now = new Date().toISOString();
    const payload = {
      version: '4',
      groupKey: '{}:{alertname="HighLatency"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'opsi',
      groupLabels: { alertname: 'HighLatency' },
      commonLabels: { alertname: 'HighLatency', severity: 'critical', service: 'checkout' },
      commonAnnotations: { summary: 'Checkout p99 latency above 2s' },
      externalURL: 'http://alertmanager:9093',
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'HighLatency', severity: 'critical', service: 'checkout' },
          annotations: { summary: 'Checkout p99 latency above 2s' },
          startsAt: now,
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://prometheus:9090/graph',
          fingerprint: fp,
        },
      ],
    };
    const res = await req('POST', '/api/v1/triage/alerts', rwB, payload);
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(1);
    expect(res.body.events).toHaveLength(1);
    for (const k of ['id', 'action', 'incident_id']) expect(res.body.events[0], k).toHaveProperty(k);
    const ev = await triageEvents(roB);
    expect(ev.map((e) => e.id)).toContain(res.body.events[0].id);
  });

  it('an unsigned SNS notification is 403 (decisions.md Wave 3: every SNS message is verified); its CloudWatch alarm posted bare is accepted', async () => {
    const alarm = {
      AlarmName: 'prod-db-cpu-high',
      AlarmDescription: 'CPU above 90%',
      AWSAccountId: '123456789012',
      NewStateValue: 'ALARM',
      NewStateReason: 'Threshold Crossed: 1 datapoint [97.0] was greater than the threshold (90.0).',
      StateChangeTime: new Date().toISOString().replace('Z', '+0000'),
      Region: 'US East (N. Virginia)',
      AlarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:prod-db-cpu-high',
      OldStateValue: 'OK',
      Trigger: {
        MetricName: 'CPUUtilization',
        Namespace: 'AWS/RDS',
        StatisticType: 'Statistic',
        Statistic: 'AVERAGE',
        Unit: null,
        Dimensions: [{ name: 'DBInstanceIdentifier', value: 'prod-db' }],
        Period: 60,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 90,
      },
    };
    const sns = {
      Type: 'Notification',
      MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:alarms',
      Subject: 'ALARM: "prod-db-cpu-high" in US East (N. Virginia)',
      Message: JSON.stringify(alarm),
      Timestamp: new Date().toISOString(),
      SignatureVersion: '1',
      UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe',
    };
    const forged = await req('POST', '/api/v1/triage/alerts', rwB, sns);
    expect(forged.status, forged.text).toBe(403);
    // Signed deliveries from a local SNS: test/e2e/sns.e2e.test.ts.
    const res = await req('POST', '/api/v1/triage/alerts', rwB, alarm);
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(1);
    expect(res.body.events).toHaveLength(1);
    for (const k of ['id', 'action', 'incident_id']) expect(res.body.events[0], k).toHaveProperty(k);
  });

  it('garbage is 400 and nothing is stored (triage/events and overview unchanged)', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const before = await triageEvents(roB);
    const ovBefore = (await req('GET', '/api/v1/triage/overview', roB)).body;
    const garbage: { body?: unknown; raw?: string }[] = [
      { body: { foo: 1 } },
      { body: { severity: 'critical', source: 'x' } },
      { body: { version: '4', alerts: 'nope' } },
      { body: { Type: 'Notification', Message: 'not json at all' } },
      { body: [{ title: 'good', severity: 'critical', source: 'x' }, { nope: true }] },
      { body: 42 },
      { raw: 'this is not json' },
    ];
    for (const g of garbage) {
      const res = await call(base, 'POST', '/api/v1/triage/alerts', {
        token: rwB,
        ...(g.raw !== undefined
          ? { rawBody: g.raw, headers: { 'content-type': 'application/json' } }
          : { body: g.body }),
      });
      expect(res.status, JSON.stringify(g)).toBe(400);
    }
    await new Promise((r) => setTimeout(r, 1500));
    const after = await triageEvents(roB);
    expect(after.map((e) => [e.id, e.count])).toEqual(before.map((e) => [e.id, e.count]));
    const ovAfter = (await req('GET', '/api/v1/triage/overview', roB)).body;
    expect(ovAfter.pipeline).toEqual(ovBefore.pipeline);
  });

  it("tenant A does not see tenant B's triage events", async () => {
    const b = new Set((await triageEvents(roB)).map((e) => e.id));
    expect(b.size).toBeGreaterThan(0);
    const aIds = (await triageEvents(roA)).map((e) => e.id);
    expect(aIds.filter((id) => b.has(id))).toEqual([]);
  });
});

describe('triage: the demo incident storyline after a scan (tenant A)', () => {
  let prodIds = new Set<string>();
  let list: any[] = [];
  let open: any[] = [];
  let incident: any;
  let events: any[] = [];
  let attached: any[] = [];
  beforeAll(async () => {
    const prodDbs = (
      await sql<{ id: string }>`select id from resources
        where tenant_id = ${a.tenant.id} and deleted_at is null and type = 'aws_rds_db_instance'
        and (tags::text ilike '%prod%' or coalesce(name, native_id) ilike 'prod%')`.execute(t.db)
    ).rows;
    prodIds = new Set(prodDbs.map((r) => r.id));
    await until(
      'a triage incident',
      async () => {
        const l = (await req('GET', '/api/v1/incidents?limit=500', roA)).body.incidents as any[];
        return l.some((i) => i.source === 'triage') ? l : undefined;
      },
      120_000,
    );
    await new Promise((r) => setTimeout(r, 3000)); // let the rest of the storm settle
    list = (await req('GET', '/api/v1/incidents?limit=500', roA)).body.incidents as any[];
    open = list.filter((i) => i.source === 'triage' && i.status !== 'resolved');
    if (open[0]) incident = inc((await req('GET', `/api/v1/incidents/${open[0].id}`, roA)).body);
    events = await triageEvents(roA);
    attached = incident ? events.filter((e) => e.incident_id === incident.id) : [];
  }, 200_000);

  it('exactly one open triage incident, on the prod database', () => {
    expect(prodIds.size, 'a production database in the demo').toBeGreaterThan(0);
    expect(
      open.map((i) => ({ id: i.id, title: i.title, status: i.status })),
      JSON.stringify(list.filter((i) => i.source === 'triage').map((i) => [i.title, i.status])),
    ).toHaveLength(1);
    for (const n of incident.resources)
      for (const k of NODE_KEYS) expect(n, `node field ${k}`).toHaveProperty(k);
    expect(
      incident.resources.some((n: any) => prodIds.has(n.id)),
      `the prod database is attached: ${JSON.stringify(incident.resources.map((n: any) => n.name))}`,
    ).toBe(true);
  });

  it('its alerts are attached (CPU, connections, 5xx, the duplicates)', () => {
    for (const e of events)
      for (const k of TRIAGE_EVENT_KEYS) expect(e, `triage event ${k}`).toHaveProperty(k);
    expect(attached.length, JSON.stringify(events)).toBeGreaterThanOrEqual(3);
  });

  it('the 5 duplicates are counted once: one event per fingerprint on the incident, one with count 5', () => {
    const summary = events.map((e) => ({
      fp: e.fingerprint,
      title: e.title,
      action: e.action,
      count: e.count,
      incident_id: e.incident_id,
    }));
    // dedupe is within a window (issue 13): the week-old occurrence may keep its own event, so this
    // counts per fingerprint among the events of the current incident
    const fps = attached.map((e) => e.fingerprint);
    expect(fps.length, JSON.stringify(summary)).toBe(new Set(fps).size);
    expect(
      attached.some((e) => e.count === 5),
      JSON.stringify(summary),
    ).toBe(true);
  });

  it('the recurrence of the week-old incident is linked', async () => {
    const others = list.filter((i) => i.id !== incident.id).map((i) => i.id);
    const raw = JSON.stringify(incident) + JSON.stringify(await timeline(incident.id, roA));
    expect(
      others.some((id) => raw.includes(id)),
      `older incidents: ${JSON.stringify(list.filter((i) => i.source === 'triage').map((i) => [i.id, i.title, i.status, i.created_at]))}`,
    ).toBe(true);
  });

  it('investigating it: timeline events arrive live on the SSE stream in order; the completed one cites ids', async () => {
    const before = await timeline(incident.id, roA);
    const lastId = before.at(-1)!.id as number;
    const done = (ev: { data: any }[]) =>
      ev.some((e) => /investigation_(completed|failed)/.test(JSON.stringify(e.data)));
    const live = readSse(`${base}/api/v1/incidents/${incident.id}/timeline/stream`, {
      token: roA,
      headers: { 'last-event-id': String(lastId) },
      stopAfter: done,
      timeoutMs: 240_000,
    });
    await new Promise((r) => setTimeout(r, 1000));
    const res = await req('POST', `/api/v1/incidents/${incident.id}/agent-investigate`, rwA, {});
    expect(res.status, res.text).toBe(202);
    const streamed = (await live).events;
    const after = await timeline(incident.id, roA, lastId);
    const ids = streamed.map((e) => e.id);
    for (let k = 1; k < ids.length; k++) expect(ids[k]).toBeGreaterThan(ids[k - 1]!);
    expect(ids).toEqual(after.map((e) => e.id).slice(0, ids.length));
    const kinds = after.map((e) => e.kind);
    expect(kinds).toContain('investigation_started');
    const completed = after.find((e) => e.kind === 'investigation_completed');
    expect(completed, JSON.stringify(after)).toBeTruthy();
    const cited = [...prodIds, ...attached.map((e) => e.id), ...incident.resources.map((n: any) => n.id)];
    const text = JSON.stringify(completed.body);
    expect(
      cited.some((id) => text.includes(String(id))),
      `summary cites an id: ${text.slice(0, 600)}`,
    ).toBe(true);
  }, 300_000);

  it('overview counts the storm: received >= the attached counts, duplicates counted as deduplicated', async () => {
    const ov = (await req('GET', '/api/v1/triage/overview', roA)).body;
    expect(ov.pipeline.received).toBeGreaterThanOrEqual(attached.reduce((s, e) => s + e.count, 0));
    expect(ov.pipeline.deduplicated, JSON.stringify(ov)).toBeGreaterThanOrEqual(4);
  });
});
