import { describe, expect } from 'vitest';
import {
  advanceDemo,
  connectEnvironment,
  execDemoCommand,
  executeReinvestigation,
  generateMorningReport,
  requestScan,
  runMorningReportJob,
  runScan,
} from '@opsi/core';
import { sql } from '@opsi/db';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { call, testRedisUrl, type TestMember } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

const policy = { attempts: 1, backoffMs: 10, timeoutMs: 1000 };

type Report = {
  id: string;
  period: { from: string; to: string };
  headline: string;
  sections: {
    new_findings: Array<{ finding_id: string }>;
    resolved_findings: Array<{ finding_id: string }>;
    regressed_findings: Array<{ finding_id: string }>;
    savings: { open_monthly: number; realized_monthly: number };
    drift: {
      added: Array<{ arn: string; actor: string | null; resource_id: string | null }>;
      removed: Array<{ arn: string; actor: string | null }>;
      changed: Array<{ arn: string; actor: string | null; fields: string[] }>;
      totals: { added: number; removed: number; changed: number };
    };
    incidents: { opened: unknown[]; resolved: unknown[]; open: unknown[] };
    top_clusters: Array<{ finding_id: string; group_id: string; why: string }>;
  };
};

const sorted = (ids: string[]) => [...ids].sort();

const it = apiTest
  // Only the reports pool: it writes the reports these tests ask for.
  .override({ workerConfig: { WORKER_QUEUES: ['reports'] } })
  .extend('producer', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
    onCleanup(() => producer.close());
    return producer;
  })
  .extend('scan', { scope: 'file' }, async ({ t }) => async (member: TestMember) => {
    const s = await requestScan(t.db, null, member.tenant.id, 'test');
    return runScan(t.db, s.id);
  })
  /** The ids each section must list, computed from the tables without the report's code. */
  .extend('expected', async ({ t }) => async (tenantId: string, from: string, to: string) => {
    const q = async (query: ReturnType<typeof sql<{ id: string }>>) =>
      sorted((await query.execute(t.db)).rows.map((r) => r.id));
    const newIds = await q(sql<{ id: string }>`
      select id from findings where tenant_id = ${tenantId} and status <> 'confirmed'
        and detected_at > ${from}::timestamptz and detected_at <= ${to}::timestamptz`);
    const resolvedIds = await q(sql<{ id: string }>`
      select id from findings where tenant_id = ${tenantId} and status = 'resolved'
        and resolved_at > ${from}::timestamptz and resolved_at <= ${to}::timestamptz`);
    const regressedIds = await q(sql<{ id: string }>`
      select distinct finding_id as id from finding_group_events where tenant_id = ${tenantId} and kind = 'regressed'
        and at > ${from}::timestamptz and at <= ${to}::timestamptz`);
    // Drift: every history row of the snapshots taken in the period, except a connection's first one.
    const drift = async (change: string) =>
      sorted(
        (
          await sql<{ arn: string }>`
            select h.arn from resource_history h join inventory_snapshots s on s.id = h.snapshot_id
            where s.tenant_id = ${tenantId} and h.change = ${change}
              and s.taken_at > ${from}::timestamptz and s.taken_at <= ${to}::timestamptz
              and s.id <> (select id from inventory_snapshots f where f.tenant_id = ${tenantId}
                           order by f.observed_at, f.taken_at limit 1)`.execute(t.db)
        ).rows.map((r) => r.arn),
      );
    const top = (
      await sql<{ id: string }>`
        select f.id from findings f left join recommendations r on r.finding_id = f.id
        where f.tenant_id = ${tenantId} and f.status in ('open', 'acknowledged', 'in_progress')
        order by f.severity_rank desc, f.regressed desc, coalesce(r.savings, 0) desc,
                 (select count(*) from finding_resources fr where fr.finding_id = f.id) desc, f.detected_at, f.group_id
        limit 3`.execute(t.db)
    ).rows.map((r) => r.id);
    return {
      newIds,
      resolvedIds,
      regressedIds,
      added: await drift('created'),
      removed: await drift('deleted'),
      changed: await drift('updated'),
      top,
    };
  })
  .extend('checkSections', async ({ url, aRead, expected }) => async (r: Report, tenantId: string) => {
    const want = await expected(tenantId, r.period.from, r.period.to);
    const s = r.sections;
    expect(sorted(s.new_findings.map((f) => f.finding_id))).toEqual(want.newIds);
    expect(sorted(s.resolved_findings.map((f) => f.finding_id))).toEqual(want.resolvedIds);
    expect(sorted(s.regressed_findings.map((f) => f.finding_id))).toEqual(want.regressedIds);
    expect(sorted(s.drift.added.map((d) => d.arn))).toEqual(want.added);
    expect(sorted(s.drift.removed.map((d) => d.arn))).toEqual(want.removed);
    expect(sorted(s.drift.changed.map((d) => d.arn))).toEqual(want.changed);
    expect(s.drift.totals).toEqual({
      added: want.added.length,
      removed: want.removed.length,
      changed: want.changed.length,
    });
    expect(s.top_clusters.map((c) => c.finding_id)).toEqual(want.top);
    const overview = await call(url, 'GET', '/api/v1/pulse/overview', { token: aRead });
    expect(s.savings.open_monthly).toBe(overview.body.estimated_savings.monthly);
    return want;
  })
  .extend('waitForReports', async ({ url }) => async (token: string, n: number) => {
    for (let i = 0; i < 200; i++) {
      const res = await call(url, 'GET', '/api/v1/reports/morning', { token });
      if (res.body.reports.length >= n) return res.body.reports as Report[];
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('no report');
  });

// Tenant A has the demo environment (seed 42), scanned once; tenant B has nothing.
it.beforeAll(async ({ t, a, scan }) => {
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await scan(a);
}, 180_000);

let first: Report;

describe('morning report over a scripted day on the demo', () => {
  it('404 {detail} before the first report; an empty list', async ({ url, aRead }) => {
    const res = await call(url, 'GET', '/api/v1/reports/morning/latest', { token: aRead });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect((await call(url, 'GET', '/api/v1/reports/morning', { token: aRead })).body).toEqual({
      reports: [],
    });
  });

  it('POST needs read_write (403 for a read token), answers 202 {job_id, status}, and the worker writes the report', async ({
    url,
    a,
    aRead,
    aWrite,
    checkSections,
    waitForReports,
  }) => {
    expect((await call(url, 'POST', '/api/v1/reports/morning', { token: aRead })).status).toBe(403);
    const res = await call(url, 'POST', '/api/v1/reports/morning', { token: aWrite });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), status: 'queued' });
    const [report] = await waitForReports(aRead, 1);
    const latest = await call(url, 'GET', '/api/v1/reports/morning/latest', { token: aRead });
    expect(latest.status).toBe(200);
    expect(latest.body).toEqual(report);
    first = latest.body as Report;
    expect(latest.body).toMatchObject({
      id: expect.any(String),
      generated_at: expect.any(String),
      requested_by: `user:${a.user.email}`,
      headline: expect.stringMatching(/new findings?.*resolved.*regressed/),
    });
    expect(Date.parse(first.period.to) - Date.parse(first.period.from)).toBe(86_400_000);
    // The first scan's findings are all new; its backfilled history (days -7, -1, 0) is drift past the baseline.
    const want = await checkSections(first, a.tenant.id);
    expect(want.newIds.length).toBeGreaterThan(10);
    expect(first.sections.drift.changed.length).toBeGreaterThan(0);
    // The seeded drift keeps its CloudTrail actors: alice opened RDP on sg-web, bob turned off RDS backups.
    const actors = first.sections.drift.changed.map((d) => d.actor);
    expect(actors).toEqual(
      expect.arrayContaining([expect.stringMatching(/user\/alice$/), expect.stringMatching(/user\/bob$/)]),
    );
    expect(first.sections.incidents).toEqual({ opened: [], resolved: [], open: [] });
    expect(first.sections.savings.realized_monthly).toBe(0);
    expect(first.sections.top_clusters).toHaveLength(3);
    expect(first.sections.top_clusters[0]!.why).toMatch(/critical|high/);
  });

  it('creates a notification pointing at the report', async ({ url, aRead }) => {
    const res = await call(url, 'GET', '/api/v1/notifications', { token: aRead });
    const n = res.body.notifications.find((x: { kind: string }) => x.kind === 'report.morning');
    expect(n).toMatchObject({ report_id: first.id, body: first.headline, finding_id: null, read: false });
  });

  it('after a day (advance, a fix with demo exec, a new issue, a regression): each section lists exactly what happened', async ({
    url,
    a,
    aRead,
    aWrite,
    t,
    scan,
    checkSections,
    waitForReports,
  }) => {
    await advanceDemo(t.db, a.tenant.id, 1);
    await scan(a);
    const findings = (await call(url, 'GET', '/api/v1/pulse/findings', { token: aRead })).body
      .findings as Array<{
      id: string;
      check_id: string;
    }>;
    // The fix: release an unassociated Elastic IP, then reinvestigate its finding (it resolves).
    const eipFinding = findings.find((f) => f.check_id === 'finops.eip_unassociated')!;
    const eip = (await call(url, 'GET', `/api/v1/pulse/findings/${eipFinding.id}`, { token: aRead })).body
      .resources[0] as { arn: string; native_id: string };
    await execDemoCommand(t.db, a.tenant.id, `aws ec2 release-address --allocation-id ${eip.native_id}`);
    // A new issue: an instance without an open finding gets IMDSv1 back.
    const instance = (
      await sql<{ native_id: string; arn: string }>`
        select native_id, arn from resources r where tenant_id = ${a.tenant.id} and type = 'aws_ec2_instance'
          and deleted_at is null and attributes->'metadata_options'->>'http_tokens' = 'required'
          and attributes->>'instance_state' = 'running'
          and not exists (select 1 from finding_resources fr where fr.tenant_id = r.tenant_id and fr.arn = r.arn)
        order by arn limit 1`.execute(t.db)
    ).rows[0]!;
    await execDemoCommand(
      t.db,
      a.tenant.id,
      `aws ec2 modify-instance-metadata-options --instance-id ${instance.native_id} --http-tokens optional`,
    );
    // A regression: a finding marked resolved whose issue is still there.
    const rdp = findings.find((f) => f.check_id === 'security.sg_rdp_open')!;
    expect(
      (
        await call(url, 'PATCH', `/api/v1/pulse/findings/${rdp.id}/status`, {
          token: aWrite,
          body: { status: 'resolved' },
        })
      ).status,
    ).toBe(200);
    await scan(a);
    expect((await executeReinvestigation(t.db, a.tenant.id, eipFinding.id)).outcome).toBe('resolved');

    const res = await call(url, 'POST', '/api/v1/reports/morning', { token: aWrite });
    expect(res.status).toBe(202);
    const [second] = await waitForReports(aRead, 2);
    expect(second!.period.from).toBe(first.period.to);
    const want = await checkSections(second!, a.tenant.id);
    const s = second!.sections;
    // What the script did, by construction.
    expect(want.resolvedIds).toEqual([eipFinding.id]);
    expect(want.regressedIds).toEqual([rdp.id]);
    const imds = (
      await call(url, 'GET', '/api/v1/pulse/findings?domain=security', { token: aRead })
    ).body.findings.find(
      (f: { check_id: string; id: string }) =>
        f.check_id === 'security.ec2_imdsv1' && want.newIds.includes(f.id),
    );
    expect(imds).toBeDefined();
    expect(s.new_findings.map((f) => f.finding_id)).toContain(imds.id);
    expect(s.resolved_findings[0]).toMatchObject({
      finding_id: eipFinding.id,
      resolved_by: expect.any(String),
    });
    // The fix and the new issue are drift by the demo operator; the churn by autoscaling.
    const operator = expect.stringMatching(/user\/opsi-demo-operator$/);
    expect(s.drift.removed).toEqual(
      expect.arrayContaining([expect.objectContaining({ arn: eip.arn, actor: operator })]),
    );
    expect(s.drift.changed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ arn: instance.arn, actor: operator, fields: expect.any(Array) }),
      ]),
    );
    expect(s.drift.added.some((d) => /AutoScaling$/.test(d.actor ?? ''))).toBe(true);
    expect(second!.headline).toContain('1 resolved, 1 regressed');
  });

  it('a retried job writes one report per period, and racing generations write one', async ({
    a,
    t,
    producer,
  }) => {
    const periodTo = new Date();
    const input = { tenantId: a.tenant.id, periodTo, requestedBy: 'schedule' };
    const one = await runMorningReportJob(t.db, producer, input, policy);
    const again = await runMorningReportJob(t.db, producer, input, policy);
    expect(one.created).toBe(true);
    expect(again).toEqual({ ...one, created: false });
    const rows = await t.db
      .selectFrom('morning_reports')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .where('period_to', '=', periodTo)
      .execute();
    expect(rows).toHaveLength(1);
    const notes = await t.db
      .selectFrom('notifications')
      .select('id')
      .where('report_id', '=', one.report_id)
      .execute();
    expect(notes).toHaveLength(1);
    // A stalled job taken over while its first attempt still runs: both write the same period, one row.
    const raceTo = new Date(periodTo.getTime() + 1);
    const raced = await Promise.all(
      [1, 2].map(() => generateMorningReport(t.db, a.tenant.id, { periodTo: raceTo, requestedBy: 'test' })),
    );
    expect(raced.filter((r) => r.created)).toHaveLength(1);
    expect(raced[0]!.report.id).toBe(raced[1]!.report.id);
  });

  it('the scheduled job (no period in its payload) records its period end, so a retry writes the same report', async ({
    a,
    aRead,
    t,
    producer,
    waitForReports,
  }) => {
    const before = (await waitForReports(aRead, 1)).length;
    const job = await producer.enqueue('reports', 'morning', { tenant_id: a.tenant.id });
    for (let i = 0; i < 200 && !(await job.isCompleted()); i++) await new Promise((r) => setTimeout(r, 100));
    const done = await producer.queue('reports').getJob(job.id!);
    expect(done!.data.period_to).toEqual(expect.any(String));
    expect(done!.returnvalue).toMatchObject({ created: true });
    const reports = await waitForReports(aRead, before + 1);
    expect(reports[0]!.period.to).toBe(new Date(done!.data.period_to).toISOString());
    expect(reports[0]!.period.from).toBe(reports[1]!.period.to);
    const retry = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: a.tenant.id, periodTo: new Date(done!.data.period_to), requestedBy: 'schedule' },
      policy,
    );
    expect(retry).toMatchObject({ report_id: reports[0]!.id, created: false });
  });

  it('isolation: another tenant sees none of it', async ({ url, b, aRead, bRead, t }) => {
    expect((await call(url, 'GET', '/api/v1/reports/morning/latest', { token: bRead })).status).toBe(404);
    expect((await call(url, 'GET', '/api/v1/reports/morning', { token: bRead })).body).toEqual({
      reports: [],
    });
    const notes = await call(url, 'GET', '/api/v1/notifications', { token: bRead });
    expect(notes.body.notifications).toEqual([]);
    // B's own report covers B only: no findings, no drift.
    const mine = await generateMorningReport(t.db, b.tenant.id, {
      periodTo: new Date(),
      requestedBy: 'test',
    });
    expect(mine.report.sections.new_findings).toEqual([]);
    expect(mine.report.sections.drift.totals).toEqual({ added: 0, removed: 0, changed: 0 });
    expect(mine.report.sections.top_clusters).toEqual([]);
    const latestA = await call(url, 'GET', '/api/v1/reports/morning/latest', { token: aRead });
    expect(latestA.body.id).not.toBe(mine.report.id);
  });

  it('list: newest first, limit 1..500 (else 400)', async ({ url, aRead }) => {
    const all = (await call(url, 'GET', '/api/v1/reports/morning', { token: aRead })).body
      .reports as Report[];
    expect(all.length).toBeGreaterThanOrEqual(4);
    const tos = all.map((r) => r.period.to);
    expect(tos).toEqual([...tos].sort().reverse());
    const one = await call(url, 'GET', '/api/v1/reports/morning?limit=1', { token: aRead });
    expect(one.body.reports).toHaveLength(1);
    expect(one.body.reports[0].id).toBe(all[0]!.id);
    for (const bad of ['0', '501', 'x', '1.5']) {
      const res = await call(url, 'GET', `/api/v1/reports/morning?limit=${bad}`, { token: aRead });
      expect(res.status, bad).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await call(url, 'GET', '/api/v1/reports/morning')).status).toBe(401);
  });
});
