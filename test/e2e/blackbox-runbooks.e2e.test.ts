import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of the runbooks' dates (issue 28) from the contract alone: api-v1.md ("GET
// /api/v1/runbooks | read | Tenant runbooks", "Timestamps are UTC, ISO 8601", "404 No such resource in
// the caller's tenant"), decisions.md "Wave 2 shapes" (`{runbooks: [{…, source, updated_at}]}`, `POST
// /api/v1/runbooks` → 201) and "Identity and tokens" (crossing tenants), and docs/api.md "Runbooks"
// ("Every runbook has an `updated_at`: a tenant runbook's last write; a built-in one's is when its text
// last changed … not the time of the request"). Real API and worker processes, a `small` demo, HTTP only.

let svc: SplitServices;
let base = '';
let a: TestMember;
let b: TestMember;
let rwA = '';
let readA = '';
let rwB = '';
/** Taken before the service started: a built-in text cannot have changed at its start or later. */
let beforeStart = 0;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;
const get = (path: string, token = rwA) => call(base, 'GET', path, { token });
const post = (path: string, body: unknown, token = rwA) => call(base, 'POST', path, { token, body });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The list, checked for the decided shape; answers it with the moment the answer arrived. */
async function list(path = '/api/v1/runbooks', token = rwA) {
  const r = await get(path, token);
  const answeredAt = Date.now();
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  expect(Array.isArray(r.body.runbooks), r.text.slice(0, 300)).toBe(true);
  return { runbooks: r.body.runbooks as any[], answeredAt, dateHeader: r.headers.get('date') };
}

/** updated_at is present, a string, ISO 8601 (UTC offset given), a real instant, not after `notAfter`. */
function expectTimestamp(rb: any, notAfter: number) {
  expect(rb, `${rb.id} has updated_at`).toHaveProperty('updated_at');
  expect(rb.updated_at, `${rb.id}: updated_at is not null`).not.toBeNull();
  expect(typeof rb.updated_at, `${rb.id}: updated_at ${JSON.stringify(rb.updated_at)}`).toBe('string');
  expect(rb.updated_at, `${rb.id}: ISO 8601`).toMatch(ISO_8601);
  const at = Date.parse(rb.updated_at);
  expect(Number.isFinite(at), `${rb.id}: ${rb.updated_at} parses`).toBe(true);
  // same machine, same clock: 1 s of slack for rounding only
  expect(at, `${rb.id}: ${rb.updated_at} is not in the future`).toBeLessThanOrEqual(notAfter + 1000);
  return at;
}

beforeAll(async () => {
  beforeStart = Date.now();
  svc = await startSplitServices();
  base = svc.base;
  a = await createTenantWithUser(svc.t, { tier: 'team' });
  b = await createTenantWithUser(svc.t, { tier: 'team' });
  rwA = (await mintTestToken(svc.t, a, 'read_write')).token;
  readA = (await mintTestToken(svc.t, a, 'read')).token;
  rwB = (await mintTestToken(svc.t, b, 'read_write')).token;
  await svc.admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '42']);
  await svc.admin(['scan', '--tenant', a.tenant.slug, '--wait']);
}, 600_000);

afterAll(async () => {
  await svc?.stop();
});

describe('built-in runbooks: updated_at', () => {
  // decisions.md: `{runbooks: [{id, title, service, applies_to, steps, source, updated_at}]}`;
  // api-v1.md: "Timestamps are UTC, ISO 8601"; issue 28: built-ins answered `updated_at: null`.
  it('every runbook in GET /api/v1/runbooks has updated_at: an ISO 8601 timestamp, not null, not in the future', async () => {
    const { runbooks, answeredAt } = await list('/api/v1/runbooks', readA);
    expect(runbooks.filter((r) => r.source === 'built_in').length).toBeGreaterThan(0);
    for (const rb of runbooks) expectTimestamp(rb, answeredAt);
  });

  // docs/api.md: "a built-in one's is when its text last changed … (not the time of the request)".
  it('a built-in runbook answers the same updated_at on two requests seconds apart, older than the service', async () => {
    const first = await list();
    await sleep(2100);
    const second = await list();
    const builtIns = first.runbooks.filter((r) => r.source === 'built_in');
    expect(builtIns.length).toBeGreaterThan(0);
    const again = new Map(second.runbooks.map((r) => [r.id, r]));
    for (const rb of builtIns) {
      const at = expectTimestamp(rb, first.answeredAt);
      expect(again.get(rb.id)?.updated_at, `${rb.id} on the second request`).toBe(rb.updated_at);
      // when its text last changed: before this service process was started, not its boot time
      expect(at, `${rb.id}: ${rb.updated_at} is older than the service's start`).toBeLessThan(beforeStart);
    }
  });

  // A built-in's text is the same for every tenant, so is the moment it last changed.
  it('another tenant sees the same built-in runbooks with the same updated_at', async () => {
    const mine = await list('/api/v1/runbooks?source=built_in');
    const theirs = await list('/api/v1/runbooks?source=built_in', rwB);
    const byId = new Map(theirs.runbooks.map((r) => [r.id, r.updated_at]));
    expect(mine.runbooks.length).toBeGreaterThan(0);
    for (const rb of mine.runbooks) expect(byId.get(rb.id), rb.id).toBe(rb.updated_at);
  });

  // docs/api.md: `service` and `finding_id` narrow the list; the runbooks answered are the same records.
  it('updated_at is set on the narrowed lists too (service=, finding_id=)', async () => {
    const findings = (await get('/api/v1/pulse/findings')).body.findings as any[];
    expect(findings.length, 'the demo has findings').toBeGreaterThan(0);
    for (const path of [
      '/api/v1/runbooks?service=payments',
      '/api/v1/runbooks?source=built_in',
      `/api/v1/runbooks?finding_id=${findings[0].id}`,
    ]) {
      const { runbooks, answeredAt } = await list(path);
      expect(runbooks.length, `${path} answers runbooks`).toBeGreaterThan(0);
      for (const rb of runbooks) expectTimestamp(rb, answeredAt);
    }
  });
});

describe('a tenant runbook: updated_at and isolation', () => {
  let mine: any;
  let createdBefore = 0;
  let createdAfter = 0;

  // decisions.md: `POST /api/v1/runbooks` (read_write) `{title, service?, applies_to?, steps}` → 201;
  // docs/api.md: "a tenant runbook's last write".
  it('POST /api/v1/runbooks → 201 with updated_at at the moment it was written', async () => {
    createdBefore = Date.now();
    const r = await post('/api/v1/runbooks', {
      title: 'bb28: fail over the payments database',
      service: 'payments',
      applies_to: { resource_types: ['aws_rds_db_instance'] },
      steps: ['Confirm the standby is in sync.', 'Fail over.'],
    });
    createdAfter = Date.now();
    expect(r.status, r.text).toBe(201);
    mine = r.body.runbook ?? r.body;
    expect(mine.source).toBe('tenant');
    const at = expectTimestamp(mine, createdAfter);
    expect(at, `${mine.updated_at} is not before the POST was sent`).toBeGreaterThanOrEqual(
      createdBefore - 1000,
    );
  });

  it('the list answers the same updated_at for it, and keeps it on a later request', async () => {
    const first = await list();
    const listed = first.runbooks.find((r) => r.id === mine.id);
    expect(listed, 'A lists its runbook').toBeTruthy();
    expect(listed.updated_at).toBe(mine.updated_at);
    await sleep(2100);
    const second = await list();
    expect(second.runbooks.find((r) => r.id === mine.id)?.updated_at).toBe(mine.updated_at);
  });

  // "a tenant runbook's last write": a write to another runbook is not a write to this one.
  it("creating another runbook does not move the first one's updated_at", async () => {
    const other = await post('/api/v1/runbooks', { title: 'bb28: second', steps: ['Look.'] });
    expect(other.status, other.text).toBe(201);
    const second = other.body.runbook ?? other.body;
    expect(Date.parse(second.updated_at)).toBeGreaterThan(Date.parse(mine.updated_at));
    const { runbooks } = await list();
    expect(runbooks.find((r) => r.id === mine.id)?.updated_at).toBe(mine.updated_at);
  });

  // api-v1.md "404 No such resource in the caller's tenant"; decisions.md: "A resource id that belongs
  // to another tenant gets 404, the same as an id that does not exist".
  it('another tenant does not see it, and cannot read or change it by id (404); it stays unchanged', async () => {
    const theirs = await list('/api/v1/runbooks', rwB);
    expect(theirs.runbooks.map((r) => r.id)).not.toContain(mine.id);
    expect(theirs.runbooks.filter((r) => r.source === 'tenant')).toEqual([]);
    expect((await list('/api/v1/runbooks?source=tenant', rwB)).runbooks).toEqual([]);
    const attempts = [
      call(base, 'GET', `/api/v1/runbooks/${mine.id}`, { token: rwB }),
      call(base, 'PATCH', `/api/v1/runbooks/${mine.id}`, { token: rwB, body: { title: 'taken over' } }),
      call(base, 'PUT', `/api/v1/runbooks/${mine.id}`, {
        token: rwB,
        body: { title: 'taken', steps: ['x'] },
      }),
      call(base, 'DELETE', `/api/v1/runbooks/${mine.id}`, { token: rwB }),
    ];
    for (const r of await Promise.all(attempts)) {
      expect(r.status, r.text).toBe(404);
      expect(typeof r.body?.detail, r.text).toBe('string');
    }
    const after = (await list()).runbooks.find((r) => r.id === mine.id);
    expect(after?.title).toBe('bb28: fail over the payments database');
    expect(after?.updated_at).toBe(mine.updated_at);
  });

  // decisions.md: "a request that names a tenant other than the token's (header X-Tenant-ID, or a
  // tenant_id query …, by the tenant's id or its slug) gets 403".
  it('naming the other tenant (X-Tenant-ID, ?tenant_id=) is 403, on GET and on POST', async () => {
    for (const name of [a.tenant.id, a.tenant.slug]) {
      const h = await call(base, 'GET', '/api/v1/runbooks', { token: rwB, headers: { 'x-tenant-id': name } });
      expect(h.status, h.text).toBe(403);
      const q = await get(`/api/v1/runbooks?tenant_id=${encodeURIComponent(name)}`, rwB);
      expect(q.status, q.text).toBe(403);
      const p = await call(base, 'POST', '/api/v1/runbooks', {
        token: rwB,
        headers: { 'x-tenant-id': name },
        body: { title: 'bb28: planted', steps: ['x'] },
      });
      expect(p.status, p.text).toBe(403);
    }
    const planted = (await list()).runbooks.filter((r) => r.title === 'bb28: planted');
    expect(planted).toEqual([]);
  });

  // docs/api.md Runbooks: "`finding_id` … (another tenant's finding: 404; not a UUID: 400)".
  it("another tenant's finding_id is 404 {detail}; a non-UUID is 400", async () => {
    const findings = (await get('/api/v1/pulse/findings')).body.findings as any[];
    const r = await get(`/api/v1/runbooks?finding_id=${findings[0].id}`, rwB);
    expect(r.status, r.text).toBe(404);
    expect(typeof r.body?.detail).toBe('string');
    const bad = await get('/api/v1/runbooks?finding_id=not-a-uuid');
    expect(bad.status, bad.text).toBe(400);
    expect(typeof bad.body?.detail).toBe('string');
  });
});
