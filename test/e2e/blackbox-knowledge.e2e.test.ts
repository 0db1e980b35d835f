import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  addUser,
  call,
  createTenantWithUser,
  mintTestToken,
  type TestContext,
  type TestMember,
} from '../support/index';
import { freePort, type ServiceProcess } from '../support/processes';
import { startSplitServices, type SplitServices } from '../support/split';
import { until as pollUntil } from '../support/poll';

// Black-box checks of issue 15 (morning report, notifications, integrations catalog, runbooks,
// learnings, webhook notifier) from the contract alone: api-v1.md "Knowledge, notifications, tools,
// organization", decisions.md "Knowledge, notifications, plan review" and "Wave 2 shapes", and the
// notifier section of docs/api.md. Real API and worker processes, a `small` demo, HTTP only.

let t: TestContext;
let svc: SplitServices;
const processes: ServiceProcess[] = [];
let base = '';
let a: TestMember; // team, owner, demo small, scanned
let aMember: TestMember; // a `member` of A
let b: TestMember; // team, another tenant
let rwA = '';
let readA = '';
let rwMemberA = '';
let rwB = '';

const SECRET = 'whsec-blackbox-0123456789abcdef';
interface Received {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl = '';

const until = <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 120_000) =>
  pollUntil(what, probe, boundMs, 500);

const admin = (args: string[]) => svc.admin(args);

const get = (path: string, token = rwA) => call(base, 'GET', path, { token });
const post = (path: string, body: unknown, token = rwA) => call(base, 'POST', path, { token, body });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += String(d)));
    req.on('end', () => {
      received.push({ headers: req.headers, raw });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const rport = await freePort();
  await new Promise<void>((r) => receiver.listen(rport, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${rport}/hooks/opsi-path-credential`;

  // The receiver is on loopback, which notifiers may reach only through the test allow-list.
  svc = await startSplitServices({ env: { OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' } });
  ({ t, base } = svc);
  processes.push(svc.api, svc.worker!); // their logs are checked for secrets below
  a = await createTenantWithUser(t, { tier: 'team' });
  aMember = await addUser(t, a, 'member');
  b = await createTenantWithUser(t, { tier: 'team' });
  rwA = (await mintTestToken(t, a, 'read_write')).token;
  readA = (await mintTestToken(t, a, 'read')).token;
  rwMemberA = (await mintTestToken(t, aMember, 'read_write')).token;
  rwB = (await mintTestToken(t, b, 'read_write')).token;
  await admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '7']);
  await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
}, 600_000);

afterAll(async () => {
  receiver?.close();
  await svc?.stop();
});

let report: any;

describe('morning report', () => {
  it('latest is 404 {detail} before the first report (A and B)', async () => {
    for (const tok of [rwA, rwB]) {
      const r = await get('/api/v1/reports/morning/latest', tok);
      expect(r.status, r.text).toBe(404);
      expect(typeof r.body?.detail).toBe('string');
    }
  });

  it('a read token is refused on POST /reports/morning (403); no token is 401', async () => {
    expect((await post('/api/v1/reports/morning', undefined, readA)).status).toBe(403);
    expect((await call(base, 'POST', '/api/v1/reports/morning')).status).toBe(401);
  });

  it('installing a webhook notifier: member 403, read token 403, owner 201', async () => {
    const body = {
      tool_id: 'webhook',
      settings: { url: receiverUrl, secret: SECRET, events: ['report.morning'] },
    };
    expect((await post('/api/v1/marketplace/tenant/tools', body, rwMemberA)).status).toBe(403);
    expect((await post('/api/v1/marketplace/tenant/tools', body, readA)).status).toBe(403);
    const r = await post('/api/v1/marketplace/tenant/tools', body, rwA);
    expect(r.status, r.text).toBe(201);
    expect(r.text).not.toContain(SECRET);
    expect(r.text).not.toContain('opsi-path-credential');
  });

  it('tenant tools: bad settings are 400 (webhook without secret, short secret, bad url, unknown id)', async () => {
    const bad = [
      { tool_id: 'webhook', settings: { url: receiverUrl } },
      { tool_id: 'webhook', settings: { url: receiverUrl, secret: 'short' } },
      { tool_id: 'webhook', settings: { url: 'ftp://example.com/x', secret: SECRET } },
      { tool_id: 'no-such-tool' },
      { tool_id: 'webhook', settings: { url: receiverUrl, secret: SECRET, events: [] } },
    ];
    for (const body of bad) {
      const r = await post('/api/v1/marketplace/tenant/tools', body, rwB);
      expect(r.status, JSON.stringify(body) + ' ' + r.text).toBe(400);
    }
  });

  it('POST /reports/morning → 202 {job_id, status}, then latest has the contract shape', async () => {
    const r = await post('/api/v1/reports/morning', undefined, rwA);
    expect(r.status, r.text).toBe(202);
    expect(r.body).toHaveProperty('job_id');
    expect(r.body).toHaveProperty('status');
    report = await until('the first report', async () => {
      const l = await get('/api/v1/reports/morning/latest');
      return l.status === 200 ? l.body : undefined;
    });
    for (const k of ['id', 'generated_at', 'period', 'headline', 'sections'])
      expect(report).toHaveProperty(k);
    expect(report.period).toHaveProperty('from');
    expect(report.period).toHaveProperty('to');
    expect(typeof report.headline).toBe('string');
    const s = report.sections;
    for (const k of [
      'new_findings',
      'resolved_findings',
      'regressed_findings',
      'savings',
      'drift',
      'incidents',
      'top_clusters',
    ])
      expect(s, `section ${k}`).toHaveProperty(k);
    expect(Array.isArray(s.new_findings)).toBe(true);
    expect(Array.isArray(s.resolved_findings)).toBe(true);
    expect(Array.isArray(s.regressed_findings)).toBe(true);
    expect(Array.isArray(s.top_clusters)).toBe(true);
    expect(typeof s.savings.open_monthly).toBe('number');
    expect(typeof s.savings.realized_monthly).toBe('number');
    for (const k of ['opened', 'resolved', 'open']) expect(Array.isArray(s.incidents[k]), k).toBe(true);
    // each list item carries the ids it is about
    for (const f of [...s.new_findings, ...s.resolved_findings, ...s.regressed_findings])
      expect(typeof f.finding_id === 'string' || typeof f.id === 'string', JSON.stringify(f)).toBe(true);
    for (const c of s.top_clusters)
      expect(typeof c.group_id === 'string' || typeof c.id === 'string', JSON.stringify(c)).toBe(true);
    expect(s.new_findings.length, 'the scan just opened findings').toBeGreaterThan(0);
    expect(s.top_clusters.length).toBeGreaterThan(0);
  }, 180_000);

  it('new_findings lists exactly the findings of A detected in (from, to] (independent SQL)', async () => {
    const rows = await sql<{ id: string }>`select id from findings where tenant_id = ${a.tenant.id}
      and detected_at > ${new Date(report.period.from)} and detected_at <= ${new Date(report.period.to)}`.execute(
      t.db,
    );
    const expected = rows.rows.map((r) => r.id).sort();
    const got = report.sections.new_findings.map((f: any) => f.finding_id ?? f.id).sort();
    expect(got).toEqual(expected);
  });

  it('GET /reports/morning lists it (newest first); limit 1..500 else 400; B sees none', async () => {
    const l = await get('/api/v1/reports/morning');
    expect(l.status, l.text).toBe(200);
    expect(Array.isArray(l.body.reports)).toBe(true);
    expect(l.body.reports.map((x: any) => x.id)).toContain(report.id);
    for (const lim of ['1', '500'])
      expect((await get(`/api/v1/reports/morning?limit=${lim}`)).status, lim).toBe(200);
    for (const lim of ['0', '501', '-1', 'abc'])
      expect((await get(`/api/v1/reports/morning?limit=${lim}`)).status, lim).toBe(400);
    const lb = await get('/api/v1/reports/morning', rwB);
    expect(lb.status).toBe(200);
    expect(lb.body.reports).toEqual([]);
    expect((await get('/api/v1/reports/morning/latest', rwB)).status).toBe(404);
  });

  it('the report created a notification for A (report_id), none for B', async () => {
    const n = await until('the report notification', async () => {
      const r = await get('/api/v1/notifications');
      expect(r.status, r.text).toBe(200);
      return r.body.notifications.find((x: any) => x.report_id === report.id);
    });
    expect(n.read).toBe(false);
    const nb = await get('/api/v1/notifications', rwB);
    expect(nb.status).toBe(200);
    expect(nb.body.notifications.find((x: any) => x.report_id === report.id)).toBeUndefined();
  });

  it('the webhook notifier delivered the report: JSON body, HMAC signature verifies', async () => {
    const d = await until('a webhook delivery', async () => received.find((x) => x.raw.includes(report.id)));
    expect(String(d.headers['content-type'])).toMatch(/application\/json/);
    const body = JSON.parse(d.raw);
    expect(body.event).toBe('report.morning');
    expect(body.data?.report?.id).toBe(report.id);
    expect(body.tenant?.id).toBe(a.tenant.id);
    expect(d.headers['x-opsi-event']).toBe('report.morning');
    expect(d.headers['x-opsi-delivery']).toBeTruthy();
    const ts = String(d.headers['x-opsi-timestamp']);
    expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(600);
    const expected = 'sha256=' + createHmac('sha256', SECRET).update(`${ts}.${d.raw}`).digest('hex');
    const sig = String(d.headers['x-opsi-signature']);
    expect(sig.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(expected), Buffer.from(sig))).toBe(true);
    expect(d.raw).not.toContain(SECRET);
  }, 180_000);
});

describe('notifications', () => {
  it('limit 1 and 500 are accepted (limit is 1..500 wherever it appears)', async () => {
    for (const lim of ['1', '500'])
      expect(
        (await get(`/api/v1/notifications?limit=${lim}`)).status,
        `limit=${lim}: ${(await get(`/api/v1/notifications?limit=${lim}`)).text}`,
      ).toBe(200);
  });

  it('limit outside 1..500 and unread other than true|false are 400', async () => {
    for (const lim of ['0', '501', '-5', 'x'])
      expect((await get(`/api/v1/notifications?limit=${lim}`)).status, lim).toBe(400);
    expect((await get('/api/v1/notifications?unread=maybe')).status).toBe(400);
  });

  it('read-all: read token 403; rw → {success: true, marked: n}; they stay listed with read: true', async () => {
    expect((await post('/api/v1/notifications/read-all', undefined, readA)).status).toBe(403);
    const unread = (await get('/api/v1/notifications?unread=true')).body.notifications;
    expect(unread.length).toBeGreaterThan(0);
    const r = await post('/api/v1/notifications/read-all', undefined, rwA);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual(expect.objectContaining({ success: true, marked: unread.length }));
    const all = (await get('/api/v1/notifications')).body.notifications;
    expect(all.find((x: any) => x.report_id === report.id)).toBeTruthy();
    for (const n of all) expect(n.read).toBe(true);
    expect((await get('/api/v1/notifications?unread=true')).body.notifications).toEqual([]);
    const again = await post('/api/v1/notifications/read-all', undefined, rwA);
    expect(again.body).toEqual(expect.objectContaining({ success: true, marked: 0 }));
  });
});

describe('integrations catalog and tenant tools', () => {
  it('GET /marketplace/tools: shape, kinds, the issue’s entries; webhook installed for A only', async () => {
    const r = await get('/api/v1/marketplace/tools');
    expect(r.status, r.text).toBe(200);
    const tools = r.body.tools as any[];
    for (const x of tools) {
      for (const k of ['id', 'name', 'category', 'description', 'kind', 'installed'])
        expect(x, k).toHaveProperty(k);
      expect(['connector', 'notifier', 'agent_tool', 'alert_source']).toContain(x.kind);
      expect(typeof x.installed).toBe('boolean');
    }
    const ids = tools.map((x) => x.id);
    for (const id of ['demo', 'terraform_state', 'aws', 'alertmanager', 'cloudwatch_sns', 'webhook', 'slack'])
      expect(ids, id).toContain(id);
    expect(tools.some((x) => x.kind === 'agent_tool')).toBe(true);
    expect(tools.find((x) => x.id === 'webhook').installed).toBe(true);
    expect(tools.find((x) => x.id === 'demo').installed).toBe(true);
    const rb = await get('/api/v1/marketplace/tools', rwB);
    expect(rb.body.tools.find((x: any) => x.id === 'webhook').installed).toBe(false);
    expect(rb.body.tools.find((x: any) => x.id === 'demo').installed).toBe(false);
  });

  it('GET /marketplace/tenant/tools: shape; settings never hold a secret; B does not see A’s', async () => {
    const r = await get('/api/v1/marketplace/tenant/tools', readA);
    expect(r.status, r.text).toBe(200);
    for (const x of r.body.tools)
      for (const k of ['id', 'name', 'category', 'status', 'installed_at', 'settings'])
        expect(x, k).toHaveProperty(k);
    const wh = r.body.tools.find((x: any) => x.id === 'webhook');
    expect(wh).toBeTruthy();
    expect(r.text).not.toContain(SECRET);
    expect(r.text).not.toContain('opsi-path-credential');
    expect(JSON.stringify(wh.settings)).not.toMatch(/secret"\s*:\s*"/);
    const rb = await get('/api/v1/marketplace/tenant/tools', rwB);
    expect(rb.status).toBe(200);
    expect(rb.body.tools.find((x: any) => x.id === 'webhook')).toBeUndefined();
  });

  it('POST again reconfigures (200); connector is 409', async () => {
    const body = {
      tool_id: 'webhook',
      settings: { url: receiverUrl, secret: SECRET, events: ['report.morning'] },
    };
    expect((await post('/api/v1/marketplace/tenant/tools', body, rwA)).status).toBe(200);
    expect((await post('/api/v1/marketplace/tenant/tools', { tool_id: 'demo' }, rwA)).status).toBe(409);
  });

  it('DELETE: member 403, read 403, B 404, owner 204, then 404', async () => {
    const del = (tok: string) =>
      call(base, 'DELETE', '/api/v1/marketplace/tenant/tools/webhook', { token: tok });
    expect((await del(rwMemberA)).status).toBe(403);
    expect((await del(readA)).status).toBe(403);
    expect((await del(rwB)).status).toBe(404);
    expect((await del(rwA)).status).toBe(204);
    expect((await del(rwA)).status).toBe(404);
  });
});

describe('runbooks', () => {
  let mine: any;
  it('GET shape with built-in runbooks', async () => {
    const r = await get('/api/v1/runbooks', readA);
    expect(r.status, r.text).toBe(200);
    expect(r.body.runbooks.length).toBeGreaterThan(0);
    for (const rb of r.body.runbooks) {
      for (const k of ['id', 'title', 'service', 'applies_to', 'steps', 'source', 'updated_at'])
        expect(rb, k).toHaveProperty(k);
      expect(['built_in', 'tenant']).toContain(rb.source);
      for (const k of ['detectors', 'resource_types', 'alert_fingerprints'])
        expect(rb.applies_to, k).toHaveProperty(k);
      expect(Array.isArray(rb.steps)).toBe(true);
    }
    expect(r.body.runbooks.some((x: any) => x.source === 'built_in')).toBe(true);
  });

  it('POST validation: 400s; read token 403', async () => {
    const bad = [
      {},
      { steps: ['a'] },
      { title: 'x' },
      { title: 'x', steps: 'not-a-list' },
      { title: '', steps: ['a'] },
      { title: 'x', steps: [1, 2] },
      { title: 'x', steps: ['a'], unknown_field: 1 },
    ];
    for (const body of bad) {
      const r = await post('/api/v1/runbooks', body, rwA);
      expect(r.status, JSON.stringify(body) + ' ' + r.text).toBe(400);
    }
    expect((await post('/api/v1/runbooks', { title: 'x', steps: ['a'] }, readA)).status).toBe(403);
  });

  it('POST → 201 with source tenant; A lists it, B does not', async () => {
    const r = await post(
      '/api/v1/runbooks',
      { title: 'Blackbox: rotate keys', service: 'payments', steps: ['check', 'rotate'] },
      rwA,
    );
    expect(r.status, r.text).toBe(201);
    mine = r.body.runbook ?? r.body;
    expect(mine.source).toBe('tenant');
    expect(mine.title).toBe('Blackbox: rotate keys');
    expect(mine.steps).toEqual(['check', 'rotate']);
    expect((await get('/api/v1/runbooks')).body.runbooks.map((x: any) => x.id)).toContain(mine.id);
    const lb = await get('/api/v1/runbooks', rwB);
    expect(lb.body.runbooks.map((x: any) => x.id)).not.toContain(mine.id);
    expect(lb.body.runbooks.every((x: any) => x.source === 'built_in')).toBe(true);
  });
});

describe('learnings', () => {
  let l: any;
  it('POST validation and read token 403', async () => {
    expect((await post('/api/v1/learnings', {}, rwA)).status).toBe(400);
    expect((await post('/api/v1/learnings', { fact: '' }, rwA)).status).toBe(400);
    expect((await post('/api/v1/learnings', { fact: 'x' }, readA)).status).toBe(403);
  });

  it('POST → learning with provenance (source user, status active, created_by)', async () => {
    const r = await post('/api/v1/learnings', {
      fact: 'Blackbox: payments DB is single-AZ on purpose',
      service: 'payments',
    });
    expect([200, 201]).toContain(r.status);
    l = r.body.learning ?? r.body;
    for (const k of [
      'id',
      'fact',
      'service',
      'status',
      'source',
      'created_by',
      'created_at',
      'last_used_at',
      'used_count',
    ])
      expect(l, k).toHaveProperty(k);
    expect(l.status).toBe('active');
    expect(l.source).toBe('user');
    const list = await get('/api/v1/learnings', readA);
    expect(list.status).toBe(200);
    expect(list.body.learnings.map((x: any) => x.id)).toContain(l.id);
  });

  it('isolation: B does not list it; B’s PATCH of A’s id is 404', async () => {
    const lb = await get('/api/v1/learnings', rwB);
    expect(lb.body.learnings.map((x: any) => x.id)).not.toContain(l.id);
    const lbA = await get('/api/v1/learnings?status=archived', rwB);
    expect((lbA.body.learnings ?? []).map((x: any) => x.id)).not.toContain(l.id);
    const p = await call(base, 'PATCH', `/api/v1/learnings/${l.id}`, {
      token: rwB,
      body: { status: 'archived' },
    });
    expect(p.status, p.text).toBe(404);
  });

  it('PATCH: read 403, bad status 400; {status: archived} archives; default list is active only', async () => {
    const patch = (body: unknown, tok = rwA) =>
      call(base, 'PATCH', `/api/v1/learnings/${l.id}`, { token: tok, body });
    expect((await patch({ status: 'archived' }, readA)).status).toBe(403);
    expect((await patch({ status: 'gone' })).status).toBe(400);
    const r = await patch({ status: 'archived' });
    expect(r.status, r.text).toBe(200);
    expect((r.body.learning ?? r.body).status).toBe('archived');
    const def = await get('/api/v1/learnings');
    expect(def.body.learnings.map((x: any) => x.id)).not.toContain(l.id);
    for (const x of def.body.learnings) expect(x.status).toBe('active');
    const arch = await get('/api/v1/learnings?status=archived');
    expect(arch.body.learnings.map((x: any) => x.id)).toContain(l.id);
    expect((await get('/api/v1/learnings?status=bogus')).status).toBe(400);
  });

  it('PATCH an unknown id is 404, a non-UUID is 400 or 404', async () => {
    const r = await call(base, 'PATCH', '/api/v1/learnings/00000000-0000-4000-8000-000000000000', {
      token: rwA,
      body: { status: 'archived' },
    });
    expect(r.status).toBe(404);
    const nu = await call(base, 'PATCH', '/api/v1/learnings/not-a-uuid', {
      token: rwA,
      body: { status: 'archived' },
    });
    expect([400, 404]).toContain(nu.status);
  });
});

describe('secrets', () => {
  it('neither the webhook secret nor the URL path appears in any API or worker log line', () => {
    for (const p of processes) {
      expect(p.output()).not.toContain(SECRET);
      expect(p.output()).not.toContain('opsi-path-credential');
    }
  });
});
