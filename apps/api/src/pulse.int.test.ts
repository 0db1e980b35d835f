import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { connectEnvironment, execDemoCommand, requestScan, runScan } from '@opsi/core';
import { call, type TestMember } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

const it = apiTest
  // Only the pulse pool: it runs the scans' follow-up jobs.
  .override({ workerConfig: { WORKER_QUEUES: ['pulse'] } })
  .extend('scan', { scope: 'file' }, async ({ t }) => async (member: TestMember) => {
    const s = await requestScan(t.db, null, member.tenant.id, 'test');
    return runScan(t.db, s.id);
  })
  .extend(
    'list',
    async ({ url, aRead }) =>
      (query = '', token = aRead) =>
        call(url, 'GET', `/api/v1/pulse/findings${query}`, { token }),
  )
  .extend('unattached', async ({ list }) => async (kind: string) => {
    const res = await list('?domain=finops');
    return res.body.findings.find(
      (f: { check_id: string; title: string }) =>
        f.check_id === 'finops.ebs_unattached' && f.title.includes(kind),
    );
  });

// Tenants A and B have demo environments of different seeds (42 and 43), each scanned once.
it.beforeAll(async ({ t, a, b, scan }) => {
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await connectEnvironment(t.db, b.tenant.id, { kind: 'demo', seed: 43, size: 'small', epoch: '2026-11-01' });
  await scan(a);
  await scan(b);
}, 120_000);

describe('GET /api/v1/pulse/findings', () => {
  it('lists findings with their shape, newest detectors included, clustered duplicates hidden', async ({
    list,
  }) => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.findings.length).toBeGreaterThan(0);
    expect(res.body.findings[0]).toEqual({
      id: expect.any(String),
      title: expect.any(String),
      severity: expect.stringMatching(/^(critical|high|medium|low|info)$/),
      domain: expect.stringMatching(/^(finops|security|sre)$/),
      status: 'open',
      check_id: expect.any(String),
      group_id: expect.any(String),
      regressed: false,
      savings: expect.any(Number),
      effort: expect.stringMatching(/^(low|medium|high)$/),
      resource_count: expect.any(Number),
      detected_at: expect.any(String),
      last_seen_at: expect.any(String),
    });
    expect(res.body.findings.every((f: { status: string }) => f.status !== 'confirmed')).toBe(true);
    const ranks = res.body.findings.map((f: { severity: string }) =>
      ['info', 'low', 'medium', 'high', 'critical'].indexOf(f.severity),
    );
    expect(ranks).toEqual([...ranks].sort((x: number, y: number) => y - x));
  });

  it('filters by domain, severity and status, and sorts by savings, date, effort and status', async ({
    list,
  }) => {
    const finops = await list('?domain=finops');
    expect(finops.body.findings.every((f: { domain: string }) => f.domain === 'finops')).toBe(true);
    const severities = (await list('?severity=high')).body.findings.map(
      (f: { severity: string }) => f.severity,
    );
    expect(new Set(severities)).toEqual(new Set(severities.length ? ['high'] : []));
    const bySavings = (await list('?sort_by=savings&sort_dir=desc')).body.findings.map(
      (f: { savings: number }) => f.savings,
    );
    expect(bySavings).toEqual([...bySavings].sort((x: number, y: number) => y - x));
    const asc = (await list('?sort_by=savings&sort_dir=asc')).body.findings.map(
      (f: { savings: number }) => f.savings,
    );
    expect(asc).toEqual([...asc].sort((x: number, y: number) => x - y));
    for (const sort of ['date', 'effort', 'status'])
      expect((await list(`?sort_by=${sort}`)).status).toBe(200);
    const efforts = (await list('?sort_by=effort&sort_dir=asc')).body.findings.map((f: { effort: string }) =>
      ['low', 'medium', 'high'].indexOf(f.effort),
    );
    expect(efforts).toEqual([...efforts].sort((x: number, y: number) => x - y));
  });

  it('any other value is a 400, and a read token or cookie alone does not change that', async ({
    url,
    aLogin,
    list,
  }) => {
    for (const q of ['?sort_by=size', '?sort_dir=up', '?status=closed', '?severity=urgent', '?domain=cost']) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    expect(
      (await call(url, 'GET', '/api/v1/pulse/findings', { headers: { cookie: aLogin.cookie } })).status,
    ).toBe(401);
  });

  it('another tenant never sees these findings', async ({ bWrite, list }) => {
    const mine = new Set((await list()).body.findings.map((f: { id: string }) => f.id));
    const theirs = (await list('', bWrite)).body.findings.map((f: { id: string }) => f.id);
    expect(theirs.some((id: string) => mine.has(id))).toBe(false);
  });
});

describe('a finding in detail, with its evidence', () => {
  it('has resources with size, cost and console link, a recommendation, group history and an audit trail', async ({
    url,
    aRead,
    aWrite,
    aLogin,
    unattached,
  }) => {
    const f = await unattached('io1');
    for (const [path, opts] of [
      [`/api/v1/pulse/findings/${f.id}`, { token: aRead }],
      [`/api/pulse/findings/${f.id}`, { token: aWrite }],
      [`/api/pulse/findings/${f.id}`, { headers: { cookie: aLogin.cookie } }],
    ] as const) {
      const res = await call(url, 'GET', path, opts);
      expect(res.status, path).toBe(200);
      expect(res.body).toMatchObject({
        id: f.id,
        domain: 'finops',
        check_id: 'finops.ebs_unattached',
        status: 'open',
      });
      expect(res.body.resources).toEqual([
        expect.objectContaining({
          type: 'aws_ebs_volume',
          measured_size: 500,
          size_unit: 'GiB',
          monthly_cost: 322.5,
          action_type: 'delete',
          savings: 322.5,
          console_url: expect.stringMatching(/^https:\/\/us-east-1\.console\.aws\.amazon\.com\/ec2\//),
        }),
      ]);
      expect(res.body.recommendation).toMatchObject({
        action_type: 'delete',
        savings: 322.5,
        effort: 'low',
        priority: expect.any(Number),
      });
      expect(res.body.group.history[0]).toMatchObject({
        kind: 'detected',
        agent: 'pulse.detector:finops.ebs_unattached',
        status: 'open',
      });
      expect(res.body.audit.summary).toEqual({
        total_steps: 3,
        total_queries: 2,
        failures: 0,
        self_corrections: 0,
      });
    }
  });

  it('the unversioned group refuses a read token, GET included (403), and takes a session', async ({
    url,
    aRead,
    aLogin,
    unattached,
  }) => {
    const f = await unattached('gp3');
    expect((await call(url, 'GET', `/api/pulse/findings/${f.id}`, { token: aRead })).status).toBe(403);
    expect((await call(url, 'GET', `/api/pulse/findings/${f.id}/audit`, { token: aRead })).status).toBe(403);
    expect(
      (await call(url, 'GET', `/api/pulse/findings/${f.id}/audit`, { headers: { cookie: aLogin.cookie } }))
        .status,
    ).toBe(200);
    expect(
      (
        await call(url, 'POST', `/api/pulse/findings/${f.id}/audit/1/run`, {
          headers: { cookie: aLogin.cookie },
        })
      ).status,
    ).toBe(403); // no CSRF header
    expect(
      (
        await call(url, 'POST', `/api/pulse/findings/${f.id}/audit/1/run`, {
          headers: { cookie: aLogin.cookie, 'x-csrf-token': aLogin.csrf },
        })
      ).status,
    ).toBe(200);
  });

  it('re-runs a query step live and says whether it differs; refuses a reasoning step (409)', async ({
    url,
    aWrite,
    unattached,
  }) => {
    const f = await unattached('io1');
    const trail = await call(url, 'GET', `/api/pulse/findings/${f.id}/audit`, { token: aWrite });
    expect(trail.body.steps.map((s: { step_kind: string }) => s.step_kind)).toEqual([
      'query',
      'query',
      'reasoning',
    ]);
    const evidence = await call(url, 'POST', `/api/pulse/findings/${f.id}/audit/2/run`, { token: aWrite });
    expect(evidence.status).toBe(200);
    expect(evidence.body).toMatchObject({
      seq: 2,
      row_count: 1,
      truncated: false,
      differs: false,
      recorded_row_count: 1,
    });
    expect(evidence.body.rows[0]).toMatchObject({ volume_type: 'io1', size_gb: 500 });
    const reasoning = await call(url, 'POST', `/api/pulse/findings/${f.id}/audit/3/run`, { token: aWrite });
    expect(reasoning.status).toBe(409);
    expect(typeof reasoning.body.detail).toBe('string');
    expect(
      (await call(url, 'POST', `/api/pulse/findings/${f.id}/audit/99/run`, { token: aWrite })).status,
    ).toBe(404);
  });

  it("another tenant's finding is a 404 on every endpoint", async ({ url, bWrite, unattached }) => {
    const f = await unattached('gp3');
    for (const [method, path] of [
      ['GET', `/api/v1/pulse/findings/${f.id}`],
      ['PATCH', `/api/v1/pulse/findings/${f.id}/status`],
      ['POST', `/api/v1/pulse/findings/${f.id}/reinvestigate`],
      ['GET', `/api/pulse/findings/${f.id}`],
      ['GET', `/api/pulse/findings/${f.id}/audit`],
      ['POST', `/api/pulse/findings/${f.id}/audit/1/run`],
      ['POST', `/api/pulse/findings/${f.id}/reinvestigate`],
      ['GET', `/api/v1/pulse/findings/${randomUUID()}`],
      ['GET', `/api/v1/pulse/findings/not-a-uuid`],
    ] as const) {
      const res = await call(url, method, path, {
        token: bWrite,
        body: method === 'PATCH' ? { status: 'dismissed' } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe('PATCH /api/v1/pulse/findings/{id}/status', () => {
  it('accepts every lifecycle value from every status, audit-logged; refuses confirmed and unknown values', async ({
    url,
    aRead,
    aWrite,
    unattached,
  }) => {
    const f = await unattached('gp3');
    for (const status of ['acknowledged', 'in_progress', 'dismissed', 'resolved', 'open']) {
      const res = await call(url, 'PATCH', `/api/v1/pulse/findings/${f.id}/status`, {
        token: aWrite,
        body: { status },
      });
      expect(res.status, status).toBe(200);
      expect(res.body).toEqual({ success: true });
    }
    for (const status of ['confirmed', 'closed', '']) {
      expect(
        (
          await call(url, 'PATCH', `/api/v1/pulse/findings/${f.id}/status`, {
            token: aWrite,
            body: { status },
          })
        ).status,
      ).toBe(400);
    }
    expect(
      (await call(url, 'PATCH', `/api/v1/pulse/findings/${f.id}/status`, { token: aWrite, body: {} })).status,
    ).toBe(400);
    expect(
      (
        await call(url, 'PATCH', `/api/v1/pulse/findings/${f.id}/status`, {
          token: aRead,
          body: { status: 'dismissed' },
        })
      ).status,
    ).toBe(403);
    const audit = await call(url, 'GET', '/api/v1/audit?limit=10', { token: aRead });
    const changes = audit.body.entries.filter(
      (e: { action: string; target_id: string }) =>
        e.action === 'finding.status_changed' && e.target_id === f.id,
    );
    expect(changes.map((e: { details: { to: string } }) => e.details.to)).toEqual([
      'open',
      'resolved',
      'dismissed',
      'in_progress',
      'acknowledged',
    ]);
    expect((await call(url, 'GET', '/api/v1/audit/verify', { token: aRead })).body.valid).toBe(true);
  });
});

describe('rescans and clustering', () => {
  it('a second scan adds no duplicate to the default list; the rediscovery is confirmed and in the group history', async ({
    url,
    a,
    aRead,
    scan,
    list,
  }) => {
    const before = (await list()).body.findings.map((f: { id: string }) => f.id).sort();
    const second = await scan(a);
    expect((second.counts as Record<string, number>).new_findings).toBe(0);
    const after = (await list()).body.findings.map((f: { id: string }) => f.id).sort();
    expect(after).toEqual(before);
    const confirmed = await list('?status=confirmed');
    expect(confirmed.body.findings.length).toBe(before.length);
    const detail = await call(url, 'GET', `/api/v1/pulse/findings/${confirmed.body.findings[0].id}`, {
      token: aRead,
    });
    expect(detail.body.status).toBe('confirmed');
    expect(detail.body.group.history.map((h: { kind: string }) => h.kind)).toContain('rediscovered');
    expect(detail.body.group.members.length).toBe(2);
  });
});

describe('overview, recommendations, resolved', () => {
  it('overview counts open findings and savings once per resource', async ({ url, aRead, list }) => {
    const res = await call(url, 'GET', '/api/v1/pulse/overview', { token: aRead });
    expect(res.status).toBe(200);
    const open = (await list()).body.findings.filter((f: { status: string }) =>
      ['open', 'acknowledged', 'in_progress'].includes(f.status),
    );
    expect(res.body.open_findings).toBe(open.length);
    expect(res.body.coverage).toMatchObject({
      resources: expect.any(Number),
      accounts: 3,
      regions: 2,
      detectors: expect.any(Number),
    });
    expect(res.body.estimated_savings.monthly).toBeGreaterThan(0);
  });

  it('recommendations are for active findings, most urgent first', async ({ url, aRead }) => {
    const res = await call(url, 'GET', '/api/v1/pulse/recommendations', { token: aRead });
    expect(res.status).toBe(200);
    const priorities = res.body.recommendations.map((r: { priority: number }) => r.priority);
    expect(priorities).toEqual([...priorities].sort((x: number, y: number) => x - y));
  });

  it('resolved takes a domain filter; another domain value is 400', async ({ url, aRead }) => {
    expect((await call(url, 'GET', '/api/v1/pulse/resolved?domain=finops', { token: aRead })).status).toBe(
      200,
    );
    expect((await call(url, 'GET', '/api/v1/pulse/resolved?domain=cost', { token: aRead })).status).toBe(400);
  });
});

describe('reinvestigation', () => {
  it('after a fix applied with demo exec, a reinvestigation resolves the finding and notifies', async ({
    url,
    a,
    aRead,
    aWrite,
    bWrite,
    t,
    unattached,
  }) => {
    const f = await unattached('gp2');
    const detail = await call(url, 'GET', `/api/v1/pulse/findings/${f.id}`, { token: aRead });
    const volumeId = detail.body.resources[0].native_id;
    await execDemoCommand(t.db, a.tenant.id, `aws ec2 delete-volume --volume-id ${volumeId}`);
    const res = await call(url, 'POST', `/api/v1/pulse/findings/${f.id}/reinvestigate`, { token: aWrite });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), status: 'queued' });
    expect(
      (await call(url, 'POST', `/api/v1/pulse/findings/${f.id}/reinvestigate`, { token: aRead })).status,
    ).toBe(403);
    let after;
    for (let i = 0; i < 300; i++) {
      after = await call(url, 'GET', `/api/v1/pulse/findings/${f.id}`, { token: aRead });
      if (after.body.last_reinvestigated_at) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(after!.body).toMatchObject({ status: 'resolved', resolved_by: 'pulse.reinvestigator' });
    const kinds = after!.body.audit.steps.map(
      (s: { step_kind: string; tool_name: string }) => `${s.step_kind}:${s.tool_name}`,
    );
    expect(kinds.slice(3)).toEqual([
      'tool:inventory.sync',
      'query:inventory.sql',
      'reasoning:pulse.reasoning',
    ]);
    const notes = await call(url, 'GET', '/api/v1/notifications?unread=true', { token: aRead });
    expect(notes.body.notifications[0]).toMatchObject({
      kind: 'reinvestigation.completed',
      finding_id: f.id,
      read: false,
    });
    const resolved = await call(url, 'GET', '/api/v1/pulse/resolved?domain=finops', { token: aRead });
    expect(resolved.body.resolved.map((r: { finding_id: string }) => r.finding_id)).toContain(f.id);
    const marked = await call(url, 'POST', '/api/v1/notifications/read-all', { token: aWrite });
    expect(marked.body).toEqual({ success: true, marked: notes.body.notifications.length });
    expect(
      (await call(url, 'GET', '/api/v1/notifications?unread=true', { token: aRead })).body.notifications,
    ).toEqual([]);
    expect(
      (await call(url, 'GET', '/api/v1/notifications?unread=false', { token: aRead })).body.notifications[0]
        .read,
    ).toBe(true);
    expect((await call(url, 'GET', '/api/v1/notifications?unread=maybe', { token: aRead })).status).toBe(400);
    expect((await call(url, 'GET', '/api/v1/notifications', { token: bWrite })).body.notifications).toEqual(
      [],
    );
  });

  it('reinvestigating a finding that is still there keeps it, via its recommendation too', async ({
    url,
    aRead,
    aWrite,
    unattached,
  }) => {
    const f = await unattached('io1');
    const recs = await call(url, 'GET', '/api/v1/pulse/recommendations', { token: aRead });
    const rec = recs.body.recommendations.find((r: { finding_id: string }) => r.finding_id === f.id);
    const res = await call(url, 'POST', `/api/pulse/recommendations/${rec.id}/reinvestigate`, {
      token: aWrite,
    });
    expect(res.status).toBe(202);
    let after;
    for (let i = 0; i < 300; i++) {
      after = await call(url, 'GET', `/api/v1/pulse/findings/${f.id}`, { token: aRead });
      if (after.body.last_reinvestigated_at) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(after!.body.status).toBe('open');
    expect(after!.body.audit.steps.at(-1).title).toBe('Still present');
    expect(
      (await call(url, 'POST', `/api/pulse/recommendations/${randomUUID()}/reinvestigate`, { token: aWrite }))
        .status,
    ).toBe(404);
  });
});
