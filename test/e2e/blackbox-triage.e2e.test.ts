import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  type TestContext,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';
import { freePort, startService } from '../support/processes';

// Black-box checks of issue 13 (incidents and triage): tenant-written triage rules
// (POST/PATCH/DELETE /api/v1/triage/rules, docs/api.md "Triage") and POST /api/v1/triage/alerts under
// concurrency (decisions.md "Wave 2 shapes"; docs/api.md "Triage": group commit, batch_id, pending).
// Real API and worker processes, HTTP only, from the contract alone.

const RULE_KEYS = ['id', 'name', 'kind', 'match', 'action', 'enabled', 'built_in'].sort();
const BUILTINS = [
  'builtin:dedupe-fingerprint',
  'builtin:suppress-info',
  'builtin:suppress-resolved',
  'builtin:correlate-graph',
  'builtin:route-critical-high',
];

let t: TestContext;
let svc: SplitServices;
let base = '';
type Name = 'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'G';
const tok = {} as Record<Name, { rw: string; ro: string; m: TestMember }>;

const req = (method: string, path: string, token: string | undefined, body?: unknown) =>
  call(base, method, path, {
    ...(token !== undefined ? { token } : {}),
    ...(body !== undefined ? { body } : {}),
  });
const tag = () => randomBytes(4).toString('hex');

async function rules(token: string): Promise<any[]> {
  const res = await req('GET', '/api/v1/triage/rules', token);
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body?.rules), res.text).toBe(true);
  return res.body.rules;
}
async function events(token: string): Promise<any[]> {
  const res = await req('GET', '/api/v1/triage/events?limit=500', token);
  expect(res.status, res.text).toBe(200);
  return res.body.events;
}
async function overview(token: string): Promise<any> {
  const res = await req('GET', '/api/v1/triage/overview', token);
  expect(res.status, res.text).toBe(200);
  return res.body;
}
async function post(token: string, body: unknown) {
  return req('POST', '/api/v1/triage/alerts', token, body);
}
/** Posts one alert; expects 202 with one decided event; answers that event. */
async function postOne(token: string, alert: Record<string, unknown>) {
  const res = await post(token, alert);
  expect(res.status, res.text).toBe(202);
  expect(res.body.pending, res.text).toBe(false);
  expect(res.body.events, res.text).toHaveLength(1);
  return res.body.events[0] as { id: number; action: string; incident_id: string | null };
}
async function newRule(token: string, body: Record<string, unknown>) {
  const res = await req('POST', '/api/v1/triage/rules', token, body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

beforeAll(async () => {
  svc = await startSplitServices();
  ({ t, base } = svc);
  for (const name of ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const) {
    const m = await createTenantWithUser(t, { tier: 'team' });
    tok[name] = {
      m,
      rw: (await mintTestToken(t, m, 'read_write')).token,
      ro: (await mintTestToken(t, m, 'read')).token,
    };
  }
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe('triage rules: writes, codes and shapes', () => {
  let mine: any; // tenant A's suppress rule
  let bRule: any; // tenant B's rule

  it('POST → 201 the rule, shaped as GET lists it; defaults action {suppress:true}, enabled true, built_in false (api.md: "POST /api/v1/triage/rules … → 201 the rule")', async () => {
    const body = { name: 'Canary checks never page', kind: 'suppress', match: { source: 'canary' } };
    mine = await newRule(tok.A.rw, body);
    expect(Object.keys(mine).sort()).toEqual(RULE_KEYS);
    expect(typeof mine.id).toBe('string');
    expect(mine.id.startsWith('builtin:')).toBe(false);
    expect(mine).toMatchObject({
      name: 'Canary checks never page',
      kind: 'suppress',
      match: { source: 'canary' },
      action: { suppress: true },
      enabled: true,
      built_in: false,
    });
    const listed = (await rules(tok.A.ro)).find((r) => r.id === mine.id);
    expect(listed).toEqual(mine);
    bRule = await newRule(tok.B.rw, {
      name: 'B quiet',
      kind: 'route',
      match: { source: 'b-only' },
      action: { open_incident: false },
    });
  });

  it("GET lists the tenant's own rules first (oldest first), then the five built-ins; never another tenant's (api.md: \"the tenant's own rules first (oldest first), then the built-in ones\")", async () => {
    const second = await newRule(tok.A.rw, {
      name: 'second',
      kind: 'dedupe',
      match: { fingerprint: '*' },
      action: { window_minutes: 5 },
    });
    const list = await rules(tok.A.ro);
    for (const r of list) expect(Object.keys(r).sort(), JSON.stringify(r)).toEqual(RULE_KEYS);
    const ids = list.map((r) => r.id);
    expect(ids.slice(0, 2)).toEqual([mine.id, second.id]);
    expect(ids.slice(2).sort()).toEqual([...BUILTINS].sort());
    for (const r of list.slice(2)) expect(r.built_in).toBe(true);
    expect(ids).not.toContain(bRule.id);
    const bIds = (await rules(tok.B.ro)).map((r) => r.id);
    expect(bIds).toContain(bRule.id);
    expect(bIds).not.toContain(mine.id);
    expect(bIds).not.toContain(second.id);
    expect((await req('DELETE', `/api/v1/triage/rules/${second.id}`, tok.A.rw)).status).toBe(204);
  });

  it('401 without a token on GET and on all three writes (api.md Errors)', async () => {
    for (const [m, p, b] of [
      ['GET', '/api/v1/triage/rules'],
      ['POST', '/api/v1/triage/rules', { name: 'x', kind: 'suppress' }],
      ['PATCH', `/api/v1/triage/rules/${mine.id}`, { enabled: false }],
      ['DELETE', `/api/v1/triage/rules/${mine.id}`],
    ] as [string, string, unknown?][]) {
      expect((await req(m, p, undefined, b)).status, `${m} ${p}`).toBe(401);
    }
    expect((await rules(tok.A.ro)).find((r) => r.id === mine.id)).toEqual(mine);
  });

  it('a read token is 403 on all three writes and nothing changes (api.md: "A read token is 403 on all three writes.")', async () => {
    const before = await rules(tok.A.ro);
    const p = await req('POST', '/api/v1/triage/rules', tok.A.ro, { name: 'ro', kind: 'suppress' });
    expect(p.status, p.text).toBe(403);
    expect((await req('PATCH', `/api/v1/triage/rules/${mine.id}`, tok.A.ro, { enabled: false })).status).toBe(
      403,
    );
    expect((await req('DELETE', `/api/v1/triage/rules/${mine.id}`, tok.A.ro)).status).toBe(403);
    expect(
      (await req('PATCH', `/api/v1/triage/rules/${BUILTINS[0]}`, tok.A.ro, { enabled: false })).status,
    ).toBe(403);
    expect(await rules(tok.A.ro)).toEqual(before);
  });

  it('400 {detail} naming the field for unknown kind / match key / action field / out of range / missing action, and nothing stored (api.md: "An unknown kind, an unknown match key or action field (for that kind), or a value out of range is 400 {detail} naming the field, and nothing is stored.")', async () => {
    const before = await rules(tok.A.ro);
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'k', kind: 'explode' }, 'kind'],
      [{ name: 'm', kind: 'suppress', match: { colour: 'red' } }, 'colour'],
      [{ name: 'a', kind: 'suppress', action: { window_minutes: 5 } }, 'window_minutes'],
      [{ name: 'a2', kind: 'route', action: { open_incident: true, graph_depth: 2 } }, 'graph_depth'],
      [{ name: 'r', kind: 'dedupe', action: { window_minutes: 0 } }, 'window_minutes'],
      [{ name: 'r2', kind: 'dedupe', action: { window_minutes: 1441 } }, 'window_minutes'],
      [{ name: 'r3', kind: 'correlate', action: { graph_depth: 11 } }, 'graph_depth'],
      [{ name: 'r4', kind: 'correlate', action: { window_minutes: 10081 } }, 'window_minutes'],
      [{ name: 'r5', kind: 'route', action: { open_incident: true, severity: 'SEV9' } }, 'severity'],
      [{ name: 'req1', kind: 'dedupe' }, 'action'],
      [{ name: 'req2', kind: 'route' }, 'action'],
      [{ kind: 'suppress' }, 'name'],
    ];
    for (const [body, field] of bad) {
      const res = await req('POST', '/api/v1/triage/rules', tok.A.rw, body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      expect(typeof res.body?.detail, res.text).toBe('string');
      expect(res.body.detail, `detail names ${field}`).toContain(field);
    }
    expect(await rules(tok.A.ro)).toEqual(before);
  });

  it("PATCH → 200 the rule; at least one field; action checked against the rule's kind; kind cannot change (api.md PATCH)", async () => {
    const res = await req('PATCH', `/api/v1/triage/rules/${mine.id}`, tok.A.rw, {
      name: 'renamed',
      match: { source: 'canary', severity: ['high', 'critical'] },
    });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(RULE_KEYS);
    expect(res.body).toMatchObject({
      id: mine.id,
      name: 'renamed',
      kind: 'suppress',
      match: { source: 'canary', severity: ['high', 'critical'] },
      enabled: true,
      built_in: false,
    });
    mine = res.body;
    expect((await rules(tok.A.ro)).find((r) => r.id === mine.id)).toEqual(mine);
    for (const body of [{}, { action: { open_incident: true } }, { match: { nope: 1 } }, { kind: 'route' }]) {
      const r = await req('PATCH', `/api/v1/triage/rules/${mine.id}`, tok.A.rw, body);
      expect(r.status, `${JSON.stringify(body)} → ${r.text}`).toBe(400);
      expect(typeof r.body?.detail, r.text).toBe('string');
    }
    expect((await rules(tok.A.ro)).find((r) => r.id === mine.id)).toEqual(mine);
  });

  it('404 for an unknown id and for another tenant\'s rule, on PATCH and DELETE; the other rule is untouched (api.md: "An unknown id, or another tenant\'s rule, is 404.")', async () => {
    for (const id of [randomUUID(), 'no-such-rule', bRule.id]) {
      const p = await req('PATCH', `/api/v1/triage/rules/${encodeURIComponent(id)}`, tok.A.rw, {
        enabled: false,
      });
      expect(p.status, `PATCH ${id}: ${p.text}`).toBe(404);
      const d = await req('DELETE', `/api/v1/triage/rules/${encodeURIComponent(id)}`, tok.A.rw);
      expect(d.status, `DELETE ${id}: ${d.text}`).toBe(404);
    }
    expect((await rules(tok.B.ro)).find((r) => r.id === bRule.id)).toEqual(bRule);
  });

  it('409 {detail} for every built-in rule on PATCH and DELETE, and it stays (api.md: "a built-in rule (builtin:…) is 409 {detail}")', async () => {
    const before = await rules(tok.A.ro);
    for (const id of BUILTINS) {
      const p = await req('PATCH', `/api/v1/triage/rules/${id}`, tok.A.rw, { enabled: false });
      expect(p.status, `PATCH ${id}: ${p.text}`).toBe(409);
      expect(typeof p.body?.detail).toBe('string');
      const d = await req('DELETE', `/api/v1/triage/rules/${id}`, tok.A.rw);
      expect(d.status, `DELETE ${id}: ${d.text}`).toBe(409);
      expect(typeof d.body?.detail).toBe('string');
    }
    expect(await rules(tok.A.ro)).toEqual(before);
  });

  it('audit log records triage_rule.created/updated/deleted with the rule id (api.md: "Audit-logged (triage_rule.created)" …)', async () => {
    const r = await newRule(tok.A.rw, { name: 'audited', kind: 'suppress', match: { source: 'audited' } });
    expect((await req('PATCH', `/api/v1/triage/rules/${r.id}`, tok.A.rw, { enabled: false })).status).toBe(
      200,
    );
    expect((await req('DELETE', `/api/v1/triage/rules/${r.id}`, tok.A.rw)).status).toBe(204);
    const res = await req('GET', '/api/v1/audit?limit=500', tok.A.ro);
    expect(res.status, res.text).toBe(200);
    const mineEntries = res.body.entries.filter((e: any) => e.target_id === r.id).map((e: any) => e.action);
    expect(mineEntries.sort()).toEqual(['triage_rule.created', 'triage_rule.deleted', 'triage_rule.updated']);
    const bAudit = await req('GET', '/api/v1/audit?limit=500', tok.B.ro);
    expect(bAudit.body.entries.some((e: any) => e.target_id === r.id)).toBe(false);
    const v = await req('GET', '/api/v1/audit/verify', tok.A.ro);
    expect(v.status, v.text).toBe(200);
  });

  it('DELETE → 204; the rule is gone from GET; a second DELETE and a PATCH are 404 (api.md DELETE)', async () => {
    const r = await newRule(tok.A.rw, { name: 'to delete', kind: 'suppress', match: { source: 'gone' } });
    const d = await req('DELETE', `/api/v1/triage/rules/${r.id}`, tok.A.rw);
    expect(d.status, d.text).toBe(204);
    expect(d.text).toBe('');
    expect((await rules(tok.A.ro)).map((x) => x.id)).not.toContain(r.id);
    expect((await req('DELETE', `/api/v1/triage/rules/${r.id}`, tok.A.rw)).status).toBe(404);
    expect((await req('PATCH', `/api/v1/triage/rules/${r.id}`, tok.A.rw, { enabled: true })).status).toBe(
      404,
    );
  });
});

describe('triage rules: effects on POST /triage/alerts (tenant G)', () => {
  it('suppress rule: matching alerts are suppressed and counted in pipeline.suppressed; others not; disabled stops it; deleted stops it (api.md: "true: suppressed, counted in suppressed, never paged"; "the first enabled rule")', async () => {
    const g = tok.G;
    const src = `canary-${tag()}`;
    const rule = await newRule(g.rw, { name: 'canary', kind: 'suppress', match: { source: src } });
    const ov0 = await overview(g.ro);
    const hit = await postOne(g.rw, {
      title: 'canary down',
      severity: 'critical',
      source: src,
      fingerprint: `s1-${tag()}`,
    });
    expect(hit.action).toBe('suppressed');
    expect(hit.incident_id).toBeNull();
    const miss = await postOne(g.rw, {
      title: 'real down',
      severity: 'critical',
      source: `other-${tag()}`,
      fingerprint: `s2-${tag()}`,
    });
    expect(miss.action).not.toBe('suppressed');
    const ov1 = await overview(g.ro);
    expect(ov1.pipeline.suppressed - ov0.pipeline.suppressed).toBe(1);
    expect(ov1.pipeline.received - ov0.pipeline.received).toBe(2);
    const listed = (await events(g.ro)).find((e) => e.id === hit.id);
    expect(listed?.action).toBe('suppressed');

    expect(
      (await req('PATCH', `/api/v1/triage/rules/${rule.id}`, g.rw, { enabled: false })).body.enabled,
    ).toBe(false);
    const off = await postOne(g.rw, {
      title: 'canary down again',
      severity: 'critical',
      source: src,
      fingerprint: `s3-${tag()}`,
    });
    expect(off.action).not.toBe('suppressed');
    expect((await overview(g.ro)).pipeline.suppressed).toBe(ov1.pipeline.suppressed);

    expect(
      (await req('PATCH', `/api/v1/triage/rules/${rule.id}`, g.rw, { enabled: true })).body.enabled,
    ).toBe(true);
    const on = await postOne(g.rw, {
      title: 'canary down 3',
      severity: 'high',
      source: src,
      fingerprint: `s4-${tag()}`,
    });
    expect(on.action).toBe('suppressed');

    expect((await req('DELETE', `/api/v1/triage/rules/${rule.id}`, g.rw)).status).toBe(204);
    const gone = await postOne(g.rw, {
      title: 'canary down 4',
      severity: 'high',
      source: src,
      fingerprint: `s5-${tag()}`,
    });
    expect(gone.action).not.toBe('suppressed');
  }, 120_000);

  it('suppress {suppress:false} overrides the built-in suppress-info for matching alerts (api.md table: "false: not suppressed (overrides a built-in suppress rule)")', async () => {
    const g = tok.G;
    const src = `info-${tag()}`;
    const plain = await postOne(g.rw, {
      title: 'fyi',
      severity: 'info',
      source: `x-${tag()}`,
      fingerprint: `i1-${tag()}`,
    });
    expect(plain.action).toBe('suppressed');
    const rule = await newRule(g.rw, {
      name: 'keep info',
      kind: 'suppress',
      match: { source: src },
      action: { suppress: false },
    });
    const kept = await postOne(g.rw, {
      title: 'fyi kept',
      severity: 'info',
      source: src,
      fingerprint: `i2-${tag()}`,
    });
    expect(kept.action).not.toBe('suppressed');
    await req('DELETE', `/api/v1/triage/rules/${rule.id}`, g.rw);
  }, 60_000);

  it('route {open_incident:false}: a critical alert opens no incident (action new); route {severity:SEV4}: a high alert opens a SEV4 incident (api.md table, route)', async () => {
    const g = tok.G;
    const quiet = `quiet-${tag()}`;
    const sev4 = `sev4-${tag()}`;
    const base1 = await postOne(g.rw, {
      title: `baseline crit ${tag()}`,
      severity: 'critical',
      source: `base-${tag()}`,
      fingerprint: `r0-${tag()}`,
    });
    expect(base1.action).toBe('incident_opened');
    const r1 = await newRule(g.rw, {
      name: 'quiet',
      kind: 'route',
      match: { source: quiet },
      action: { open_incident: false },
    });
    const r2 = await newRule(g.rw, {
      name: 'sev4',
      kind: 'route',
      match: { source: sev4 },
      action: { open_incident: true, severity: 'SEV4' },
    });
    const q = await postOne(g.rw, {
      title: `quiet crit ${tag()}`,
      severity: 'critical',
      source: quiet,
      fingerprint: `r1-${tag()}`,
    });
    expect(q.action).toBe('new');
    expect(q.incident_id).toBeNull();
    const s = await postOne(g.rw, {
      title: `sev4 high ${tag()}`,
      severity: 'high',
      source: sev4,
      fingerprint: `r2-${tag()}`,
    });
    expect(s.action).toBe('incident_opened');
    const inc = await req('GET', `/api/v1/incidents/${s.incident_id}`, g.ro);
    expect(inc.status, inc.text).toBe(200);
    const i = inc.body?.incident ?? inc.body;
    expect(i.severity).toBe('SEV4');
    expect(i.source).toBe('triage');
    // disabled: the built-in route decides again
    await req('PATCH', `/api/v1/triage/rules/${r1.id}`, g.rw, { enabled: false });
    const q2 = await postOne(g.rw, {
      title: `quiet crit 2 ${tag()}`,
      severity: 'critical',
      source: quiet,
      fingerprint: `r3-${tag()}`,
    });
    expect(q2.action).toBe('incident_opened');
    await req('DELETE', `/api/v1/triage/rules/${r1.id}`, g.rw);
    await req('DELETE', `/api/v1/triage/rules/${r2.id}`, g.rw);
  }, 60_000);
});

describe('POST /triage/alerts under concurrency', () => {
  it('50 concurrent POSTs of distinct alerts (tenant C): each its own one event, none pending, and /triage/events counts 50 (api.md: "events are always this request\'s own alerts, in the order they were sent")', async () => {
    const c = tok.C;
    const k = tag();
    const fps = Array.from({ length: 50 }, (_, i) => `c-${k}-${i}`);
    const answers = await Promise.all(
      fps.map((fp, i) =>
        post(c.rw, { title: `distinct ${k} ${i}`, severity: 'medium', source: 'bb', fingerprint: fp }),
      ),
    );
    for (const r of answers) {
      expect(r.status, r.text).toBe(202);
      expect(r.body.accepted, r.text).toBe(1);
      expect(r.body.pending, r.text).toBe(false);
      expect(typeof r.body.batch_id, r.text).toBe('string');
      expect(r.body.events, r.text).toHaveLength(1);
      expect(Object.keys(r.body.events[0]).sort()).toEqual(['action', 'id', 'incident_id']);
    }
    const ids = answers.map((r) => r.body.events[0].id);
    expect(new Set(ids).size).toBe(50);
    const ev = await events(c.ro);
    const byId = new Map(ev.map((e) => [e.id, e]));
    answers.forEach((r, i) => expect(byId.get(r.body.events[0].id)?.fingerprint, `answer ${i}`).toBe(fps[i]));
    const mine = ev.filter((e) => fps.includes(e.fingerprint));
    expect(mine.length).toBe(50);
    expect(mine.reduce((s, e) => s + e.count, 0)).toBe(50);
    expect((await overview(c.ro)).pipeline.received).toBe(50);
  }, 120_000);

  it("50 concurrent batches of 3 (tenant C): each answer's events are its own alerts, in the order sent (api.md group commit)", async () => {
    const c = tok.C;
    const k = tag();
    const batches = Array.from({ length: 50 }, (_, i) =>
      [2, 0, 1].map((j) => ({
        title: `b ${k} ${i}.${j}`,
        severity: 'low',
        source: 'bb',
        fingerprint: `cb-${k}-${i}-${j}`,
      })),
    );
    const answers = await Promise.all(batches.map((b, i) => post(c.rw, i % 2 ? { alerts: b } : b)));
    const ev = await events(c.ro);
    const byId = new Map(ev.map((e) => [e.id, e]));
    answers.forEach((r, i) => {
      expect(r.status, r.text).toBe(202);
      expect(r.body.accepted).toBe(3);
      expect(r.body.pending).toBe(false);
      expect(
        r.body.events.map((e: any) => byId.get(e.id)?.fingerprint),
        `answer ${i}`,
      ).toEqual(batches[i]!.map((a) => a.fingerprint));
    });
    expect((await overview(c.ro)).pipeline.received).toBe(200);
  }, 120_000);

  it('50 concurrent POSTs of the SAME fingerprint (tenant D) make one event with count 50 (issue 13: "a webhook burst of the same alert makes one event with a count, not many")', async () => {
    const d = tok.D;
    const fp = `same-${tag()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        post(d.rw, { title: 'Checkout 5xx', severity: 'high', source: 'bb', fingerprint: fp }),
      ),
    );
    for (const r of answers) {
      expect(r.status, r.text).toBe(202);
      expect(r.body.pending, r.text).toBe(false);
      expect(r.body.events, r.text).toHaveLength(1);
    }
    const ev = (await events(d.ro)).filter((e) => e.fingerprint === fp);
    expect(ev.map((e) => [e.id, e.count])).toEqual([[ev[0]?.id, 50]]);
    expect(new Set(answers.map((r) => r.body.events[0].id))).toEqual(new Set([ev[0].id]));
    const ov = await overview(d.ro);
    expect(ov.pipeline.received).toBe(50);
    expect(ov.pipeline.deduplicated).toBe(49);
    expect(ov.pipeline.incidents_opened).toBe(1);
    const incs = await req('GET', '/api/v1/incidents?limit=50', d.ro);
    const list = incs.body?.incidents ?? incs.body;
    expect(list.filter((i: any) => i.source === 'triage')).toHaveLength(1);
  }, 120_000);

  it("two tenants posting concurrently (E, F, even with the same fingerprints) never see each other's events or incidents (api.md tenant isolation)", async () => {
    const k = tag();
    const mk = (n: number) => ({
      title: `iso ${k} ${n}`,
      severity: 'critical',
      source: 'bb',
      fingerprint: `iso-${k}-${n % 5}`,
    });
    const jobs: Promise<{ who: 'E' | 'F'; r: any }>[] = [];
    for (let i = 0; i < 25; i++) {
      jobs.push(post(tok.E.rw, mk(i)).then((r) => ({ who: 'E' as const, r })));
      jobs.push(post(tok.F.rw, mk(i)).then((r) => ({ who: 'F' as const, r })));
    }
    const answers = await Promise.all(jobs);
    const ids: Record<'E' | 'F', Set<number>> = { E: new Set(), F: new Set() };
    const incIds: Record<'E' | 'F', Set<string>> = { E: new Set(), F: new Set() };
    for (const { who, r } of answers) {
      expect(r.status, r.text).toBe(202);
      expect(r.body.pending).toBe(false);
      expect(r.body.events).toHaveLength(1);
      ids[who].add(r.body.events[0].id);
      if (r.body.events[0].incident_id) incIds[who].add(r.body.events[0].incident_id);
    }
    for (const [me, other] of [
      ['E', 'F'],
      ['F', 'E'],
    ] as const) {
      const ev = await events(tok[me].ro);
      expect(ev.filter((e) => ids[other].has(e.id))).toEqual([]);
      expect(new Set(ev.map((e) => e.id))).toEqual(ids[me]);
      expect(ev.reduce((s, e) => s + e.count, 0)).toBe(25);
      expect(ev).toHaveLength(5);
      const incs = await req('GET', '/api/v1/incidents?limit=50', tok[me].ro);
      const list: any[] = incs.body?.incidents ?? incs.body;
      expect(list.filter((i) => incIds[other].has(i.id))).toEqual([]);
      for (const id of incIds[other])
        expect((await req('GET', `/api/v1/incidents/${id}`, tok[me].ro)).status).toBe(404);
    }
    expect(incIds.E.size).toBe(5);
    expect(incIds.F.size).toBe(5);
  }, 120_000);
});

describe('concurrency: more shapes and sizes', () => {
  it("a tenant's rule never applies to another tenant's alerts, even posted concurrently (api.md: GET lists \"the tenant's own\"; rules are per tenant)", async () => {
    const k = tag();
    const r = await newRule(tok.E.rw, { name: 'mute all', kind: 'suppress', match: {} });
    const jobs: Promise<any>[] = [];
    for (let i = 0; i < 20; i++) {
      const a = { title: `mute ${k} ${i}`, severity: 'high', source: 'bb', fingerprint: `mute-${k}-${i}` };
      jobs.push(post(tok.E.rw, a).then((res) => ({ who: 'E', res })));
      jobs.push(post(tok.F.rw, a).then((res) => ({ who: 'F', res })));
    }
    for (const { who, res } of await Promise.all(jobs)) {
      expect(res.status, res.text).toBe(202);
      expect(res.body.pending).toBe(false);
      if (who === 'E') expect(res.body.events[0].action, `E ${res.text}`).toBe('suppressed');
      else expect(res.body.events[0].action, `F ${res.text}`).not.toBe('suppressed');
    }
    expect((await req('DELETE', `/api/v1/triage/rules/${r.id}`, tok.E.rw)).status).toBe(204);
  }, 120_000);

  it('match semantics: list values, title_contains (case-insensitive), labels (all equal), fingerprint "*" (api.md "How rules apply")', async () => {
    const g = tok.G;
    const k = tag();
    const rs = [
      await newRule(g.rw, { name: 'list', kind: 'suppress', match: { source: [`l1-${k}`, `l2-${k}`] } }),
      await newRule(g.rw, { name: 'title', kind: 'suppress', match: { title_contains: `NoisY-${k}` } }),
      await newRule(g.rw, {
        name: 'labels',
        kind: 'suppress',
        match: { labels: { team: `t-${k}`, env: 'dev' }, fingerprint: '*' },
      }),
    ];
    const cases: [Record<string, unknown>, boolean][] = [
      [{ title: 'a', source: `l2-${k}` }, true],
      [{ title: 'b', source: `l3-${k}` }, false],
      [{ title: `this is noisy-${k} stuff`, source: 'bb' }, true],
      [{ title: 'quiet', source: 'bb', labels: { team: `t-${k}`, env: 'dev', extra: '1' } }, true],
      [{ title: 'quiet2', source: 'bb', labels: { team: `t-${k}`, env: 'prod' } }, false],
    ];
    for (const [i, [a, suppressed]] of cases.entries()) {
      const e = await postOne(g.rw, { severity: 'high', fingerprint: `m-${k}-${i}`, ...a });
      expect(e.action === 'suppressed', `${JSON.stringify(a)} → ${e.action}`).toBe(suppressed);
    }
    for (const r of rs) await req('DELETE', `/api/v1/triage/rules/${r.id}`, g.rw);
  }, 60_000);

  it('a batch with a repeated fingerprint answers the same event id at each place, in order, count 2 (api.md "in the order they were sent"; dedupe)', async () => {
    const k = tag();
    const x = { title: `x ${k}`, severity: 'medium', source: 'bb', fingerprint: `x-${k}` };
    const y = { title: `y ${k}`, severity: 'medium', source: 'bb', fingerprint: `y-${k}` };
    const res = await post(tok.G.rw, [x, y, x]);
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(3);
    const [ex, ey, ex2] = res.body.events;
    expect(ex.id).toBe(ex2.id);
    expect(ex.id).not.toBe(ey.id);
    const ev = (await events(tok.G.ro)).filter((e) => e.fingerprint === x.fingerprint);
    expect(ev.map((e) => e.count)).toEqual([2]);
  }, 60_000);

  it('mixed concurrent requests (our JSON, Alertmanager v4 with 3 alerts, SNS alarm, two 1000-alert batches) each get their own events in order; totals match (decisions.md Wave 2 shapes; api.md group commit)', async () => {
    const h = await createTenantWithUser(t, { tier: 'team' });
    const rw = (await mintTestToken(t, h, 'read_write')).token;
    const ro = (await mintTestToken(t, h, 'read')).token;
    const k = tag();
    type Sent = { body: unknown; fps: string[] };
    const sent: Sent[] = [];
    for (let i = 0; i < 10; i++) {
      const fp = `mix-${k}-j${i}`;
      sent.push({ body: { title: `j ${i}`, severity: 'low', source: 'bb', fingerprint: fp }, fps: [fp] });
      const am = [0, 1, 2].map((j) => `mix-${k}-am${i}-${j}`);
      sent.push({
        body: {
          version: '4',
          status: 'firing',
          receiver: 'opsi',
          groupKey: `g${i}`,
          truncatedAlerts: 0,
          groupLabels: {},
          commonLabels: {},
          commonAnnotations: {},
          externalURL: 'http://am',
          alerts: am.map((fp, j) => ({
            status: 'firing',
            labels: { alertname: `A${i}${j}`, severity: 'warning' },
            annotations: { summary: `am ${i} ${j}` },
            startsAt: new Date().toISOString(),
            endsAt: '0001-01-01T00:00:00Z',
            generatorURL: 'http://p',
            fingerprint: fp,
          })),
        },
        fps: am,
      });
    }
    for (let b = 0; b < 2; b++) {
      const fps = Array.from({ length: 1000 }, (_, i) => `mix-${k}-big${b}-${i % 100}`);
      sent.push({
        body: fps.map((fp, i) => ({
          title: `big ${b} ${i}`,
          severity: 'low',
          source: 'bb',
          fingerprint: fp,
        })),
        fps,
      });
    }
    const sns = {
      Type: 'Notification',
      MessageId: randomUUID(),
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:alarms',
      Subject: 'ALARM',
      Timestamp: new Date().toISOString(),
      SignatureVersion: '1',
      Signature: 'X',
      SigningCertURL: 'https://x',
      UnsubscribeURL: 'https://x',
      Message: JSON.stringify({
        AlarmName: `mix-${k}-alarm`,
        AlarmDescription: 'latency',
        AWSAccountId: '123456789012',
        NewStateValue: 'ALARM',
        NewStateReason: 'Threshold Crossed',
        StateChangeTime: new Date().toISOString(),
        Region: 'US East (N. Virginia)',
        AlarmArn: `arn:aws:cloudwatch:us-east-1:123456789012:alarm:mix-${k}-alarm`,
        OldStateValue: 'OK',
        Trigger: {
          MetricName: 'Latency',
          Namespace: 'AWS/ELB',
          Dimensions: [{ name: 'LoadBalancer', value: `lb-${k}` }],
        },
      }),
    };
    // The alarm as a relay posts it (bare): an SNS envelope must be signed (sns.e2e.test.ts does that).
    const answers = await Promise.all([
      ...sent.map((s) => post(rw, s.body)),
      post(rw, JSON.parse(sns.Message)),
    ]);
    const snsAns = answers.pop()!;
    expect(snsAns.status, snsAns.text).toBe(202);
    expect(snsAns.body.events).toHaveLength(1);
    const res = await req('GET', '/api/v1/triage/events?limit=500', ro);
    expect(res.status).toBe(200);
    const byId = new Map((res.body.events as any[]).map((e) => [e.id, e]));
    let total = 1;
    answers.forEach((r, i) => {
      expect(r.status, r.text.slice(0, 300)).toBe(202);
      expect(r.body.accepted).toBe(sent[i]!.fps.length);
      expect(r.body.pending, `request ${i}`).toBe(false);
      expect(r.body.events, `request ${i}`).toHaveLength(sent[i]!.fps.length);
      total += sent[i]!.fps.length;
      const ids = r.body.events.map((e: any) => e.id);
      expect(
        ids.map((id: number) => byId.get(id)?.fingerprint),
        `request ${i}`,
      ).toEqual(sent[i]!.fps);
    });
    // 10 + 30 + 2×100 + 1 groups; their counts add up to every alert sent
    const evs = res.body.events as any[];
    expect(evs).toHaveLength(241);
    expect(evs.reduce((s, e) => s + e.count, 0)).toBe(total);
    expect((await overview(ro)).pipeline.received).toBe(total);
  }, 150_000);

  it('20 concurrent rule creations: 20 distinct rules listed, the audit chain still verifies (api.md audit chain)', async () => {
    const k = tag();
    const res = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        req('POST', '/api/v1/triage/rules', tok.F.rw, {
          name: `c ${k} ${i}`,
          kind: 'suppress',
          match: { source: `c-${k}-${i}` },
        }),
      ),
    );
    for (const r of res) expect(r.status, r.text).toBe(201);
    const list = await rules(tok.F.ro);
    expect(list.filter((r) => r.name.startsWith(`c ${k} `))).toHaveLength(20);
    const v = await req('GET', '/api/v1/audit/verify', tok.F.ro);
    expect(v.body?.valid, v.text).toBe(true);
    const created = (await req('GET', '/api/v1/audit?limit=500', tok.F.ro)).body.entries.filter(
      (e: any) => e.action === 'triage_rule.created' && res.some((r) => r.body.id === e.target_id),
    );
    expect(created).toHaveLength(20);
  }, 60_000);

  it('rule bodies: a match value out of range and non-boolean enabled are 400 naming the field, nothing stored', async () => {
    const before = await rules(tok.F.ro);
    const bad: [string, string, Record<string, unknown>, string][] = [
      [
        'POST',
        '/api/v1/triage/rules',
        { name: 'x', kind: 'suppress', match: { severity: 'apocalyptic' } },
        'severity',
      ],
      ['POST', '/api/v1/triage/rules', { name: 'x', kind: 'suppress', match: { status: 'maybe' } }, 'status'],
      ['POST', '/api/v1/triage/rules', { name: 'x', kind: 'suppress', enabled: 'yes' }, 'enabled'],
      [
        'POST',
        '/api/v1/triage/rules',
        { name: 'x', kind: 'suppress', action: { suppress: 'no' } },
        'suppress',
      ],
      ['PATCH', `/api/v1/triage/rules/${before[0].id}`, { enabled: 'no' }, 'enabled'],
      ['PATCH', `/api/v1/triage/rules/${before[0].id}`, { match: { colour: 1 } }, 'colour'],
    ];
    for (const [m, p, b, field] of bad) {
      const r = await req(m, p, tok.F.rw, b);
      expect(r.status, `${m} ${JSON.stringify(b)} → ${r.text}`).toBe(400);
      expect(r.body?.detail ?? '', `${m} ${JSON.stringify(b)}`).toContain(field);
    }
    expect(await rules(tok.F.ro)).toEqual(before);
  });
});

describe('concurrency: rules taking effect, tokens, resolved', () => {
  it('a rule created (201) applies to the next 30 concurrent POSTs; disabled (200), to none of the next 30 (api.md: "A rule applies from the next triage batch on")', async () => {
    const g = tok.G;
    const k = tag();
    const src = `burst-${k}`;
    const r = await newRule(g.rw, { name: 'burst', kind: 'suppress', match: { source: src } });
    const on = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(g.rw, { title: `b ${i}`, severity: 'high', source: src, fingerprint: `bon-${k}-${i}` }),
      ),
    );
    expect(on.map((x) => x.body?.events?.[0]?.action)).toEqual(Array(30).fill('suppressed'));
    const p = await req('PATCH', `/api/v1/triage/rules/${r.id}`, g.rw, { enabled: false });
    expect(p.status, p.text).toBe(200);
    const off = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(g.rw, { title: `b ${i}`, severity: 'medium', source: src, fingerprint: `boff-${k}-${i}` }),
      ),
    );
    expect(off.filter((x) => x.body?.events?.[0]?.action === 'suppressed')).toHaveLength(0);
    await req('DELETE', `/api/v1/triage/rules/${r.id}`, g.rw);
  }, 120_000);

  it('concurrent POSTs with valid, revoked, read and unknown tokens each get their own answer (401 revoked/unknown, 403 read, 202 valid) and only the valid ones are stored (api.md Errors; DELETE /tokens: "Revokes … at once")', async () => {
    const m = await createTenantWithUser(t, { tier: 'team' });
    const rw = (await mintTestToken(t, m, 'read_write')).token;
    const ro = (await mintTestToken(t, m, 'read')).token;
    const doomed = await mintTestToken(t, m, 'read_write');
    expect(
      (await post(doomed.token, { title: 'pre', severity: 'low', source: 'bb', fingerprint: `pre-${tag()}` }))
        .status,
    ).toBe(202);
    const rv = await req('DELETE', `/api/v1/tokens/${doomed.id}`, doomed.token);
    expect(rv.status, rv.text).toBe(204);
    const k = tag();
    const kinds = ['rw', 'revoked', 'ro', 'unknown'] as const;
    const token = { rw, revoked: doomed.token, ro, unknown: `opsi_${randomBytes(32).toString('base64url')}` };
    const want = { rw: 202, revoked: 401, ro: 403, unknown: 401 };
    const jobs = Array.from({ length: 60 }, (_, i) => {
      const kind = kinds[i % 4]!;
      return post(token[kind], {
        title: `tok ${i}`,
        severity: 'low',
        source: 'bb',
        fingerprint: `tok-${k}-${i}`,
      }).then((r) => ({ kind, i, r }));
    });
    const answers = await Promise.all(jobs);
    for (const { kind, i, r } of answers) expect(r.status, `${kind} #${i}: ${r.text}`).toBe(want[kind]);
    const ev = (await events(ro)).filter((e) => e.fingerprint.startsWith(`tok-${k}-`));
    expect(ev.map((e) => Number(e.fingerprint.split('-').pop()) % 4).every((x) => x === 0)).toBe(true);
    expect(ev).toHaveLength(15);
  }, 60_000);

  it("a resolved notification for nothing firing is suppressed (builtin:suppress-resolved); concurrent same-fingerprint answers all carry the group's incident_id (api.md built-ins; event shape)", async () => {
    const g = tok.G;
    const k = tag();
    const e = await postOne(g.rw, {
      title: `res ${k}`,
      severity: 'high',
      source: 'bb',
      fingerprint: `res-${k}`,
      status: 'resolved',
    });
    expect(e.action).toBe('suppressed');
    const fp = `grp-${k}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(g.rw, { title: `grp ${k}`, severity: 'critical', source: 'bb', fingerprint: fp }),
      ),
    );
    const ev = (await events(g.ro)).filter((x) => x.fingerprint === fp);
    expect(ev).toHaveLength(1);
    expect(ev[0].count).toBe(20);
    expect(typeof ev[0].incident_id).toBe('string');
    for (const r of answers) {
      expect(r.body.events[0].id).toBe(ev[0].id);
      expect(r.body.events[0].incident_id, r.text).toBe(ev[0].incident_id);
    }
    const incs = await req('GET', '/api/v1/incidents?limit=50', g.ro);
    const list: any[] = incs.body?.incidents ?? incs.body;
    expect(list.filter((i) => i.title?.includes(`grp ${k}`) || i.id === ev[0].incident_id)).toHaveLength(1);
  }, 60_000);
});

describe('POST /triage/alerts: bad bodies (tenant C)', () => {
  it('not one of the three shapes, an empty batch, over 1000 alerts: 400 {detail}, nothing stored (api.md: "one alert or a batch (at most 1000)"; "Anything that is none of the three shapes is 400 naming what was wrong, and nothing is stored")', async () => {
    const c = tok.C;
    const before = await events(c.ro);
    const ov0 = await overview(c.ro);
    const ok = (n: number) => ({
      title: `over ${n}`,
      severity: 'medium',
      source: 'bb',
      fingerprint: `over-${n}`,
    });
    const bad: [string, unknown][] = [
      ['object of no shape', { hello: 'world' }],
      ['empty array', []],
      ['empty alerts', { alerts: [] }],
      ['alertmanager with no alerts', { version: '4', status: 'firing', alerts: [] }],
      ['1001 alerts', Array.from({ length: 1001 }, (_, i) => ok(i))],
      ['1001 alerts under alerts', { alerts: Array.from({ length: 1001 }, (_, i) => ok(i)) }],
      ['unknown severity', { title: 't', severity: 'apocalyptic', source: 'bb' }],
      ['SNS of no alarm', { Type: 'Notification', Message: JSON.stringify({ hello: 1 }) }],
      ['a string', 'alert!'],
      ['null', null],
    ];
    for (const [what, body] of bad) {
      const res = await post(c.rw, body);
      expect(res.status, `${what}: ${res.text.slice(0, 200)}`).toBe(400);
      expect(typeof res.body?.detail, `${what}: ${res.text.slice(0, 200)}`).toBe('string');
    }
    const after = await events(c.ro);
    expect(after.map((e) => [e.id, e.count])).toEqual(before.map((e) => [e.id, e.count]));
    expect((await overview(c.ro)).pipeline).toEqual(ov0.pipeline);
  }, 60_000);

  it('a batch of exactly 1000 is accepted (api.md: "at most 1000")', async () => {
    const k = tag();
    const res = await post(
      tok.C.rw,
      Array.from({ length: 1000 }, (_, i) => ({
        title: `k ${k} ${i}`,
        severity: 'low',
        source: 'bb',
        fingerprint: `k-${k}-${i % 100}`,
      })),
    );
    expect(res.status, res.text.slice(0, 300)).toBe(202);
    expect(res.body.accepted).toBe(1000);
    if (!res.body.pending) expect(res.body.events).toHaveLength(1000);
  }, 60_000);

  it('a read token is 403 on POST /triage/alerts and nothing is stored', async () => {
    const before = await events(tok.C.ro);
    const r = await post(tok.C.ro, {
      title: 'ro',
      severity: 'critical',
      source: 'bb',
      fingerprint: `ro-${tag()}`,
    });
    expect(r.status, r.text).toBe(403);
    expect((await events(tok.C.ro)).map((e) => [e.id, e.count])).toEqual(before.map((e) => [e.id, e.count]));
  });
});

describe('pending: no triage worker (own API process)', () => {
  it('without a worker: 202 {accepted, batch_id, pending: true, events: []}; the alerts are decided once a worker starts, each once (api.md: "When the decision takes longer, pending is true and events empty; the alerts are decided anyway"; operations.md)', async () => {
    const lone = await startSplitServices({ worker: false, env: { TRIAGE_WAIT_MS: '500' } });
    try {
      const m = await createTenantWithUser(lone.t, { tier: 'team' });
      const rw = (await mintTestToken(lone.t, m, 'read_write')).token;
      const ro = (await mintTestToken(lone.t, m, 'read')).token;
      const k = tag();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call(lone.base, 'POST', '/api/v1/triage/alerts', {
            token: rw,
            body: { title: `p ${i}`, severity: 'medium', source: 'bb', fingerprint: `p-${k}-${i % 5}` },
          }),
        ),
      );
      for (const r of answers) {
        expect(r.status, r.text).toBe(202);
        expect(r.body).toMatchObject({ accepted: 1, pending: true, events: [] });
        expect(typeof r.body.batch_id).toBe('string');
      }
      const port = await freePort();
      const worker = await startService(
        { ...lone.env, WORKER_METRICS_PORT: String(port) },
        { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${port}/healthz` },
      );
      try {
        const deadline = Date.now() + 60_000;
        let ev: any[] = [];
        while (Date.now() < deadline) {
          ev = (await call(lone.base, 'GET', '/api/v1/triage/events?limit=500', { token: ro })).body.events;
          if (ev.reduce((s: number, e: any) => s + e.count, 0) >= 10) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(ev).toHaveLength(5);
        expect(ev.map((e) => e.count)).toEqual([2, 2, 2, 2, 2]);
        const ov = (await call(lone.base, 'GET', '/api/v1/triage/overview', { token: ro })).body;
        expect(ov.pipeline.received).toBe(10);
      } finally {
        await worker.stop();
      }
    } finally {
      await lone.stop();
    }
  }, 150_000);
});
