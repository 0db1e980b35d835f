import { describe, expect } from 'vitest';
import { createTriageIntake, normalizeAlerts, processAlertBatch } from '@opsi/core';
import { call, createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

const it = apiTest
  // Only the triage pool: it applies the rules to the alerts posted here.
  .override({ workerConfig: { WORKER_QUEUES: ['triage'] } })
  .extend(
    'rules',
    async ({ url, aWrite }) =>
      (token = aWrite) =>
        call(url, 'GET', '/api/v1/triage/rules', { token }),
  )
  .extend(
    'create',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/triage/rules', { token, body }),
  )
  .extend(
    'patch',
    async ({ url, aWrite }) =>
      (id: string, body: unknown, token = aWrite) =>
        call(url, 'PATCH', `/api/v1/triage/rules/${encodeURIComponent(id)}`, { token, body }),
  )
  .extend(
    'remove',
    async ({ url, aWrite }) =>
      (id: string, token = aWrite) =>
        call(url, 'DELETE', `/api/v1/triage/rules/${encodeURIComponent(id)}`, { token }),
  )
  .extend(
    'post',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/triage/alerts', { token, body }),
  )
  .extend(
    'stored',
    async ({ t }) =>
      async (tenantId: string) =>
        t.db
          .selectFrom('triage_rules')
          .select(['id', 'name', 'kind', 'match', 'action', 'enabled'])
          .where('tenant_id', '=', tenantId)
          .orderBy('created_at')
          .execute(),
  )
  .extend(
    'audit',
    async ({ t }) =>
      async (tenantId: string, target: string) =>
        (
          await t.db
            .selectFrom('audit_log')
            .select('action')
            .where('tenant_id', '=', tenantId)
            .where('target_id', '=', target)
            .orderBy('seq')
            .execute()
        ).map((r) => r.action),
  );

const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

describe('tenant triage rules: write, change, delete', () => {
  it('POST answers 201 with the rule, fills defaults, lists it before the built-in ones, audit-logged', async ({
    a,
    bWrite,
    rules,
    create,
    remove,
    audit,
  }) => {
    const res = await create({
      name: 'Silence canaries',
      kind: 'suppress',
      match: { title_contains: 'canary' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: UUID,
      name: 'Silence canaries',
      kind: 'suppress',
      match: { title_contains: 'canary' },
      action: { suppress: true },
      enabled: true,
      built_in: false,
    });
    const route = await create({
      name: 'Batch jobs never page',
      kind: 'route',
      match: { source: ['batch', 'cron'], severity: 'critical' },
      action: { open_incident: false },
      enabled: false,
    });
    expect(route.status).toBe(201);
    expect(route.body).toMatchObject({ kind: 'route', enabled: false, action: { open_incident: false } });
    const correlate = await create({ name: 'Everything, wide', kind: 'correlate' });
    expect(correlate.body).toMatchObject({ kind: 'correlate', match: {}, action: {} });
    const listed = await rules();
    expect(listed.status).toBe(200);
    expect(listed.body.rules.map((r: any) => [r.id, r.built_in])).toEqual([
      [res.body.id, false],
      [route.body.id, false],
      [correlate.body.id, false],
      ['builtin:dedupe-fingerprint', true],
      ['builtin:suppress-info', true],
      ['builtin:suppress-resolved', true],
      ['builtin:correlate-graph', true],
      ['builtin:route-critical-high', true],
    ]);
    expect(await audit(a.tenant.id, res.body.id)).toEqual(['triage_rule.created']);
    // Another tenant sees none of them.
    expect((await rules(bWrite)).body.rules.every((r: any) => r.built_in)).toBe(true);
    await remove(route.body.id);
    await remove(correlate.body.id);
    await remove(res.body.id);
  });

  it('bad input is 400 naming the field, and changes nothing', async ({ a, create, stored }) => {
    const before = await stored(a.tenant.id);
    for (const [body, field] of [
      [{ name: 'x', kind: 'silence', match: {} }, 'kind'],
      [{ name: 'x', kind: 'suppress', match: { colour: 'red' } }, 'colour'],
      [{ name: 'x', kind: 'suppress', match: { severity: 'loud' } }, 'match.severity'],
      [{ name: 'x', kind: 'dedupe', action: { window_minutes: 0 } }, 'action.window_minutes'],
      [{ name: 'x', kind: 'dedupe', action: { open_incident: true } }, 'action'],
      [{ name: 'x', kind: 'route', action: { open_incident: true, severity: 'SEV9' } }, 'action.severity'],
      [{ kind: 'suppress' }, 'name'],
      [{ name: 'x', kind: 'suppress', priority: 1 }, 'priority'],
    ] as const) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ detail: expect.stringContaining(field) });
    }
    expect(await stored(a.tenant.id)).toEqual(before);
  });

  it('PATCH changes name, enabled, match and action (checked against the kind); 400, 404, 409 as documented', async ({
    a,
    bWrite,
    create,
    patch,
    remove,
    stored,
    audit,
  }) => {
    const rule = (await create({ name: 'Short dedupe', kind: 'dedupe', action: { window_minutes: 5 } })).body;
    const res = await patch(rule.id, {
      name: 'Shorter dedupe',
      enabled: false,
      match: { fingerprint: ['fp-1', 'fp-2'] },
      action: { window_minutes: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: rule.id,
      name: 'Shorter dedupe',
      kind: 'dedupe',
      match: { fingerprint: ['fp-1', 'fp-2'] },
      action: { window_minutes: 2 },
      enabled: false,
      built_in: false,
    });
    const unchanged = await stored(a.tenant.id);
    for (const [body, field] of [
      [{ action: { suppress: true } }, 'action'],
      [{ action: { window_minutes: 99_999 } }, 'action.window_minutes'],
      [{ match: { nope: 1 } }, 'nope'],
      [{ kind: 'route' }, 'kind'],
      [{}, 'at least one'],
    ] as const) {
      const bad = await patch(rule.id, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toEqual({ detail: expect.stringContaining(field) });
    }
    expect(await stored(a.tenant.id)).toEqual(unchanged);
    // Built-in: 409 with what to do instead; unknown ids and another tenant's rule: 404.
    const builtIn = await patch('builtin:suppress-info', { enabled: false });
    expect(builtIn.status).toBe(409);
    expect(builtIn.body.detail).toContain('built-in');
    expect((await patch('00000000-0000-4000-8000-000000000000', { enabled: true })).status).toBe(404);
    expect((await patch('builtin:nothing', { enabled: true })).status).toBe(404);
    const theirs = await patch(rule.id, { enabled: true }, bWrite);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ detail: expect.any(String) });
    expect(await stored(a.tenant.id)).toEqual(unchanged);
    expect(await audit(a.tenant.id, rule.id)).toEqual(['triage_rule.created', 'triage_rule.updated']);
    await remove(rule.id);
  });

  it('DELETE answers 204 and audits; built-in 409; another tenant’s or an unknown rule 404', async ({
    a,
    bWrite,
    create,
    remove,
    stored,
    audit,
  }) => {
    const rule = (await create({ name: 'Temporary', kind: 'suppress' })).body;
    expect((await remove(rule.id, bWrite)).status).toBe(404);
    expect((await stored(a.tenant.id)).map((r) => r.id)).toContain(rule.id);
    const builtIn = await remove('builtin:route-critical-high');
    expect(builtIn.status).toBe(409);
    expect(builtIn.body).toEqual({ detail: expect.stringContaining('built-in') });
    const res = await remove(rule.id);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await remove(rule.id)).status).toBe(404);
    expect((await stored(a.tenant.id)).map((r) => r.id)).not.toContain(rule.id);
    expect(await audit(a.tenant.id, rule.id)).toEqual(['triage_rule.created', 'triage_rule.deleted']);
  });

  it('a read token is refused on every write (403) and changes nothing', async ({
    url,
    a,
    aRead,
    rules,
    create,
    remove,
    stored,
  }) => {
    const rule = (await create({ name: 'Kept', kind: 'suppress' })).body;
    const before = await stored(a.tenant.id);
    for (const [method, path, body] of [
      ['POST', '/api/v1/triage/rules', { name: 'x', kind: 'suppress' }],
      ['PATCH', `/api/v1/triage/rules/${rule.id}`, { enabled: false }],
      ['DELETE', `/api/v1/triage/rules/${rule.id}`, undefined],
    ] as const) {
      const res = await call(url, method, path, { token: aRead, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await rules(aRead)).status).toBe(200);
    expect(await stored(a.tenant.id)).toEqual(before);
    await remove(rule.id);
  });
});

describe('the pipeline applies the tenant’s enabled rules', () => {
  it('suppress: matching alerts are suppressed and counted; disabled, it no longer applies', async ({
    url,
    bWrite,
    create,
    patch,
    remove,
    post,
  }) => {
    const rule = (
      await create({ name: 'Canaries', kind: 'suppress', match: { title_contains: 'CANARY' } }, bWrite)
    ).body;
    const first = await post({ title: 'canary failed', severity: 'critical', source: 'ci' }, bWrite);
    expect(first.body.events).toEqual([{ id: expect.any(Number), action: 'suppressed', incident_id: null }]);
    const overview = await call(url, 'GET', '/api/v1/triage/overview', { token: bWrite });
    expect(overview.body.pipeline.suppressed).toBe(1);
    expect(overview.body.rules).toBe(6);
    await patch(rule.id, { enabled: false }, bWrite);
    const second = await post(
      { title: 'canary failed again', severity: 'critical', source: 'ci', fingerprint: 'canary-2' },
      bWrite,
    );
    expect(second.body.events[0].action).toBe('incident_opened');
    await remove(rule.id, bWrite);
  });

  it('route: a tenant rule overrides the built-in one (no incident, or another severity); suppress false un-suppresses', async ({
    url,
    bWrite,
    create,
    remove,
    post,
  }) => {
    const quiet = (
      await create(
        {
          name: 'cron never pages',
          kind: 'route',
          match: { source: 'cron' },
          action: { open_incident: false },
        },
        bWrite,
      )
    ).body;
    const sev4 = (
      await create(
        {
          name: 'staging is SEV4',
          kind: 'route',
          match: { labels: { env: 'staging' } },
          action: { open_incident: true, severity: 'SEV4' },
        },
        bWrite,
      )
    ).body;
    const keepInfo = (
      await create(
        {
          name: 'heartbeats count',
          kind: 'suppress',
          match: { fingerprint: 'hb' },
          action: { suppress: false },
        },
        bWrite,
      )
    ).body;
    const cron = await post({ title: 'nightly failed', severity: 'critical', source: 'cron' }, bWrite);
    expect(cron.body.events[0]).toEqual({ id: expect.any(Number), action: 'new', incident_id: null });
    const staging = await post(
      { title: 'staging down', severity: 'critical', source: 'grafana', labels: { env: 'staging' } },
      bWrite,
    );
    expect(staging.body.events[0].action).toBe('incident_opened');
    const incident = await call(url, 'GET', `/api/v1/incidents/${staging.body.events[0].incident_id}`, {
      token: bWrite,
    });
    expect(incident.body.severity).toBe('SEV4');
    const hb = await post({ title: 'heartbeat', severity: 'info', source: 'x', fingerprint: 'hb' }, bWrite);
    expect(hb.body.events[0].action).toBe('new');
    for (const r of [quiet, sev4, keepInfo]) expect((await remove(r.id, bWrite)).status).toBe(204);
  });

  it('dedupe and correlate windows: a tenant rule narrows them for the alerts it matches', async ({
    bWrite,
    create,
    remove,
    post,
  }) => {
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString();
    const alert = (fingerprint: string, minute: number) => ({
      title: `disk ${fingerprint}`,
      severity: 'critical',
      source: 'grafana',
      fingerprint,
      starts_at: at(minute),
    });
    // Without a rule, 10 minutes apart is a repeat (the default window is 30 minutes).
    const c1 = await post(alert('fp-default', 0), bWrite);
    const c2 = await post(alert('fp-default', 10), bWrite);
    expect(c2.body.events[0]).toEqual({ ...c1.body.events[0], action: 'deduplicated' });
    const dedupe = (
      await create(
        { name: 'short', kind: 'dedupe', match: { fingerprint: 'fp-short' }, action: { window_minutes: 1 } },
        bWrite,
      )
    ).body;
    const s1 = await post(alert('fp-short', 0), bWrite);
    expect(s1.body.events[0].action).toBe('incident_opened');
    // 10 minutes later: not a repeat any more; it correlates with the open incident of its fingerprint.
    const s2 = await post(alert('fp-short', 10), bWrite);
    expect(s2.body.events[0]).toMatchObject({
      action: 'correlated',
      incident_id: s1.body.events[0].incident_id,
    });
    expect(s2.body.events[0].id).not.toBe(s1.body.events[0].id);
    // A correlate rule with a 5-minute window: 20 minutes later it opens its own incident.
    const correlate = (
      await create(
        {
          name: 'tight',
          kind: 'correlate',
          match: { fingerprint: 'fp-short' },
          action: { window_minutes: 5 },
        },
        bWrite,
      )
    ).body;
    const s3 = await post(alert('fp-short', 20), bWrite);
    expect(s3.body.events[0].action).toBe('incident_opened');
    expect(s3.body.events[0].incident_id).not.toBe(s1.body.events[0].incident_id);
    await remove(dedupe.id, bWrite);
    await remove(correlate.id, bWrite);
  });
});

describe('group commit', () => {
  it('concurrent requests each get their own decisions, in order, whatever batch they shared', async ({
    url,
    t,
    post,
  }) => {
    const member = await createTenantWithUser(t);
    const token = (await mintTestToken(t, member, 'read_write')).token;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          [
            { title: `a${i}`, severity: 'low', source: 'gc', fingerprint: `gc-${i}-x` },
            { title: `b${i}`, severity: 'info', source: 'gc', fingerprint: `gc-${i}-y` },
          ],
          token,
        ),
      ),
    );
    const events = new Map(
      (await call(url, 'GET', '/api/v1/triage/events?limit=500', { token })).body.events.map((e: any) => [
        e.id,
        e,
      ]),
    );
    expect(events.size).toBe(60);
    answers.forEach((res, i) => {
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ accepted: 2, pending: false });
      expect(res.body.events.map((e: any) => e.action)).toEqual(['new', 'suppressed']);
      expect(res.body.events.map((e: any) => (events.get(e.id) as any).fingerprint)).toEqual([
        `gc-${i}-x`,
        `gc-${i}-y`,
      ]);
    });
  });

  it('requests of one tenant in one turn are one inbox insert under one batch and one job; tenants never share', async ({
    t,
  }) => {
    const one = await createTenantWithUser(t);
    const two = await createTenantWithUser(t);
    const jobs: Array<{ tenantId: string; batchId: string; inboxIds: number[] }> = [];
    const deps = { db: t.db, dedupeWindowMinutes: 30, correlationWindowMinutes: 120 };
    const intake = createTriageIntake({
      db: t.db,
      maxItems: 1000,
      maxInFlight: 1,
      // The job, run in process: what the worker does with its payload.
      enqueueAndWait: async (tenantId, batchId, inboxIds) => {
        jobs.push({ tenantId, batchId, inboxIds });
        return processAlertBatch(deps, tenantId, batchId, inboxIds);
      },
    });
    const alert = (fp: string) =>
      normalizeAlerts({ title: fp, severity: 'medium', source: 's', fingerprint: fp });
    const answers = await Promise.all([
      intake.submit(one.tenant.id, alert('p')),
      intake.submit(two.tenant.id, alert('q')),
      intake.submit(one.tenant.id, [...alert('p'), ...alert('r')]),
      intake.submit(one.tenant.id, alert('r')),
    ]);
    // One job per tenant (their batches run side by side: which one is queued first is not fixed).
    jobs.sort((x, y) => (x.tenantId === one.tenant.id ? -1 : y.tenantId === one.tenant.id ? 1 : 0));
    expect(jobs.map((j) => [j.tenantId, j.inboxIds.length])).toEqual([
      [one.tenant.id, 4],
      [two.tenant.id, 1],
    ]);
    const inbox = await t.db
      .selectFrom('triage_inbox')
      .select(['id', 'batch_id', 'tenant_id', 'action'])
      .where('tenant_id', 'in', [one.tenant.id, two.tenant.id])
      .orderBy('id')
      .execute();
    expect(new Set(inbox.filter((r) => r.tenant_id === one.tenant.id).map((r) => r.batch_id))).toEqual(
      new Set([jobs[0]!.batchId]),
    );
    expect(inbox.map((r) => Number(r.id)).filter((id) => jobs[0]!.inboxIds.includes(id))).toEqual(
      jobs[0]!.inboxIds,
    );
    expect(answers.map((x) => [x.batch_id, x.accepted, x.events.map((e) => e.action)])).toEqual([
      [jobs[0]!.batchId, 1, ['new']],
      [jobs[1]!.batchId, 1, ['new']],
      [jobs[0]!.batchId, 2, ['deduplicated', 'new']],
      [jobs[0]!.batchId, 1, ['deduplicated']],
    ]);
    expect(answers[2]!.events[0]!.id).toBe(answers[0]!.events[0]!.id);
    expect(answers[3]!.events[0]!.id).toBe(answers[2]!.events[1]!.id);
    const counts = await t.db
      .selectFrom('triage_events')
      .select(['fingerprint', 'count'])
      .where('tenant_id', '=', one.tenant.id)
      .orderBy('fingerprint')
      .execute();
    expect(counts).toEqual([
      { fingerprint: 'p', count: 2 },
      { fingerprint: 'r', count: 2 },
    ]);
    // The job run again (a retry after it had finished) decides nothing twice.
    expect((await processAlertBatch(deps, one.tenant.id, jobs[0]!.batchId, jobs[0]!.inboxIds)).decided).toBe(
      0,
    );
  });
});
