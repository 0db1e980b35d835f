import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { advanceDemo, connectEnvironment, execDemoCommand, requestScan, runScan } from '@opsi/core';
import { call, type TestMember } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

interface Step {
  seq: number;
  title: string;
  status: string;
  final: boolean;
  fix_command: { command: string; executed_by_service: false } | null;
  verification: { command: string; done_when: string } | null;
  how_to_confirm: string | null;
  last_check: { outcome: string; output_preview: string } | null;
  citations: Array<{ kind: string; ref: string }>;
}
interface Plan {
  id: string;
  finding_id: string;
  group_id: string;
  status: string;
  stale: boolean;
  error: string | null;
  steps: Step[];
  final_check: { outcome: string; summary: string; at: string } | null;
  job_id?: string;
}

const it = apiTest
  // The pulse pool runs scans' follow-ups, the plans pool verifies steps (one retry, 50 ms apart).
  .override({
    workerConfig: {
      WORKER_QUEUES: ['pulse', 'plans'],
      PLAN_VERIFY_RETRIES: 1,
      PLAN_VERIFY_RETRY_DELAY_MS: 50,
    },
  })
  .extend('scan', { scope: 'file' }, async ({ t }) => async (member: TestMember) => {
    const s = await requestScan(t.db, null, member.tenant.id, 'test');
    return runScan(t.db, s.id);
  })
  .extend(
    'post',
    { scope: 'file' },
    async ({ url, aWrite }) =>
      (path: string, body?: unknown, token = aWrite) =>
        call(url, 'POST', path, { token, body }),
  )
  .extend(
    'getPlan',
    { scope: 'file' },
    async ({ url, aWrite }) =>
      async (id: string, token = aWrite) =>
        (await call(url, 'GET', `/api/pulse/plans/${id}`, { token })).body as Plan,
  )
  .extend(
    'until',
    { scope: 'file' },
    async ({ getPlan }) =>
      async (id: string, ok: (p: Plan) => boolean, what: string): Promise<Plan> => {
        for (let i = 0; i < 300; i++) {
          const p = await getPlan(id);
          if (ok(p)) return p;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`plan ${id} never became ${what}: ${JSON.stringify(await getPlan(id))}`);
      },
  )
  .extend(
    'findingsOf',
    { scope: 'file' },
    async ({ t }) =>
      async (member: TestMember, checks: string[]) =>
        t.db
          .selectFrom('findings')
          .select(['id', 'group_id', 'check_id', 'status', 'title', 'estimated_savings'])
          .where('tenant_id', '=', member.tenant.id)
          .where('check_id', 'in', checks)
          .where('status', '=', 'open')
          .orderBy('title')
          .execute(),
  )
  .extend('readyPlan', { scope: 'file' }, async ({ post, until }) => async (findingId: string) => {
    const res = await post(`/api/pulse/findings/${findingId}/resolution-plan`);
    expect([200, 202]).toContain(res.status);
    return until(res.body.id, (p) => p.status === 'ready', 'ready');
  });

// Tenants A and B have demo environments of different seeds (42 and 43), each scanned once.
it.beforeAll(async ({ t, a, b, scan }) => {
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await connectEnvironment(t.db, b.tenant.id, { kind: 'demo', seed: 43, size: 'small', epoch: '2026-11-01' });
  await scan(a);
  await scan(b);
}, 120_000);

describe('resolution plans end to end on the demo environment', () => {
  const domains: Array<[string, string[]]> = [
    ['finops: an unattached volume', ['finops.ebs_unattached']],
    ['security: a security group open to the world', ['security.sg_ssh_open', 'security.sg_all_ports_open']],
    ['sre: a database without backups', ['sre.rds_no_backups']],
  ];
  for (const [name, checks] of domains) {
    it(`${name}: create → ready → demo exec the fix → verify → finalize → resolved, savings realized`, async ({
      url,
      a,
      aRead,
      aWrite,
      t,
      post,
      until,
      findingsOf,
    }) => {
      const [finding] = await findingsOf(a, checks);
      expect(finding, name).toBeDefined();
      const before = (await call(url, 'GET', '/api/v1/pulse/overview', { token: aRead })).body;
      const created = await post(`/api/pulse/findings/${finding!.id}/resolution-plan`);
      expect(created.status).toBe(202);
      expect(created.body).toMatchObject({ status: 'generating', job_id: expect.any(String), stale: false });
      const plan = await until(created.body.id, (p) => p.status === 'ready', 'ready');
      expect(plan.steps.length).toBeLessThanOrEqual(8);
      expect(plan.steps.at(-1)!.final).toBe(true);
      expect(plan.steps.some((s) => s.fix_command)).toBe(true);
      // The same plan to the next caller: 200, no job.
      const again = await post(`/api/pulse/findings/${finding!.id}/resolution-plan`);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(plan.id);
      expect(again.body.job_id).toBeUndefined();

      for (const step of plan.steps.filter((s) => !s.final)) {
        if (step.fix_command) {
          expect(step.fix_command.executed_by_service).toBe(false);
          await execDemoCommand(t.db, a.tenant.id, step.fix_command.command);
        }
        if (step.verification) {
          const v = await post(`/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`);
          expect(v.status).toBe(202);
          expect(v.body).toEqual({ job_id: expect.any(String), status: 'verifying' });
          const done = await until(
            plan.id,
            (p) => p.steps[step.seq - 1]!.status !== 'verifying',
            `step ${step.seq} checked`,
          );
          expect(done.steps[step.seq - 1]!.status, JSON.stringify(done.steps[step.seq - 1])).toBe('verified');
          expect(done.steps[step.seq - 1]!.last_check).toMatchObject({ outcome: 'passed' });
        } else {
          const c = await post(`/api/pulse/plans/${plan.id}/steps/${step.seq}/confirm`);
          expect(c.status).toBe(200);
          expect(c.body.steps[step.seq - 1].status).toBe('confirmed');
        }
      }
      const fin = await post(`/api/pulse/plans/${plan.id}/finalize`);
      expect(fin.status).toBe(202);
      expect(fin.body).toEqual({ job_id: expect.any(String), status: 'finalizing' });
      const resolved = await until(plan.id, (p) => p.status !== 'finalizing', 'finalized');
      expect(resolved.status, JSON.stringify(resolved.final_check)).toBe('resolved');
      expect(resolved.final_check).toMatchObject({ outcome: 'resolved', summary: expect.any(String) });
      expect(resolved.steps.at(-1)!.status).toBe('verified');

      // The whole cluster is resolved, with the resolver; it is listed under resolved.
      const members = await t.db
        .selectFrom('findings')
        .select(['status', 'resolved_by'])
        .where('group_id', '=', finding!.group_id)
        .execute();
      expect(members.every((m) => m.status === 'resolved')).toBe(true);
      expect(members[0]!.resolved_by).toBe(`user:${a.user.email}`);
      const listed = await call(url, 'GET', '/api/v1/pulse/resolved', { token: aRead });
      expect(listed.body.resolved.map((r: { finding_id: string }) => r.finding_id)).toContain(finding!.id);
      const after = (await call(url, 'GET', '/api/v1/pulse/overview', { token: aRead })).body;
      const gained = after.realized_savings.total - before.realized_savings.total;
      expect(after.realized_savings.resolved_plans).toBe(before.realized_savings.resolved_plans + 1);
      if (checks[0] === 'finops.ebs_unattached') expect(gained).toBeGreaterThan(0);
      else expect(gained).toBe(0);
      expect(after.realized_savings.this_month).toBeCloseTo(after.realized_savings.total, 2);
      // A learning with source plan.
      const learning = await t.db
        .selectFrom('learnings')
        .select(['fact', 'source', 'created_by'])
        .where('tenant_id', '=', a.tenant.id)
        .where('created_by', '=', `plan:${plan.id}`)
        .executeTakeFirstOrThrow();
      expect(learning.source).toBe('plan');
      // Verifications and confirmations are in the finding's trail and the hash-chained audit log.
      const trail = await call(url, 'GET', `/api/pulse/findings/${plan.finding_id}/audit`, { token: aWrite });
      const tools = trail.body.steps.map((s: { tool_name: string }) => s.tool_name);
      expect(tools).toContain('plan.finalize');
      if (plan.steps.some((s) => !s.final && s.verification)) expect(tools).toContain('plan.verified');
      const log = await call(url, 'GET', '/api/v1/audit?limit=100', { token: aRead });
      const actions = log.body.entries.map((e: { action: string }) => e.action);
      expect(actions).toContain('plan.finalized');
      expect((await call(url, 'GET', '/api/v1/audit/verify', { token: aRead })).body.valid).toBe(true);
    }, 60_000);
  }

  it('finalize without applying the fix: still_present with a summary, the finding unchanged', async ({
    a,
    t,
    post,
    until,
    findingsOf,
    readyPlan,
  }) => {
    const [finding] = await findingsOf(a, ['sre.rds_no_deletion_protection']);
    const plan = await readyPlan(finding!.id);
    for (const s of plan.steps.filter((x) => !x.final))
      expect((await post(`/api/pulse/plans/${plan.id}/steps/${s.seq}/confirm`)).status).toBe(200);
    expect((await post(`/api/pulse/plans/${plan.id}/finalize`)).status).toBe(202);
    const done = await until(plan.id, (p) => p.status !== 'finalizing', 'finalized');
    expect(done.status).toBe('ready');
    expect(done.final_check).toMatchObject({ outcome: 'still_present' });
    expect(done.final_check!.summary).toMatch(/still returns 1 row/);
    expect(done.steps.at(-1)!.status).toBe('failed_check');
    const row = await t.db
      .selectFrom('findings')
      .select(['status', 'resolved_at'])
      .where('id', '=', finding!.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'open', resolved_at: null });
  }, 60_000);

  it('verify before the fix is applied: re-checked shortly, then failed_check; nothing marked verified', async ({
    a,
    t,
    post,
    until,
    findingsOf,
    readyPlan,
  }) => {
    const [finding] = await findingsOf(a, ['sre.dynamodb_no_pitr']);
    const plan = await readyPlan(finding!.id);
    const step = plan.steps.find((s) => s.verification && !s.final)!;
    expect((await post(`/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`)).status).toBe(202);
    const done = await until(plan.id, (p) => p.steps[step.seq - 1]!.status !== 'verifying', 'checked');
    expect(done.steps[step.seq - 1]).toMatchObject({
      status: 'failed_check',
      last_check: { outcome: 'not_done', output_preview: expect.stringContaining('DISABLED') },
    });
    // Judging that fails (the connection cannot describe): nothing is marked, verify may be repeated.
    await t.db
      .updateTable('cloud_connections')
      .set({ kind: 'terraform_state' })
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    try {
      expect((await post(`/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`)).status).toBe(202);
      const judged = await until(plan.id, (p) => p.steps[step.seq - 1]!.status !== 'verifying', 'judged');
      expect(judged.steps[step.seq - 1]).toMatchObject({
        status: 'pending',
        last_check: { outcome: 'error' },
      });
    } finally {
      await t.db
        .updateTable('cloud_connections')
        .set({ kind: 'demo' })
        .where('tenant_id', '=', a.tenant.id)
        .execute();
    }
    // Fixed now: verify again passes.
    await execDemoCommand(t.db, a.tenant.id, step.fix_command!.command);
    expect((await post(`/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`)).status).toBe(202);
    const ok = await until(plan.id, (p) => p.steps[step.seq - 1]!.status !== 'verifying', 'verified');
    expect(ok.steps[step.seq - 1]!.status).toBe('verified');
  }, 60_000);
});

describe('the wizard’s refusals', () => {
  let plan: Plan;
  let findingId: string;
  it.beforeAll(async ({ a, findingsOf, readyPlan }) => {
    const [finding] = await findingsOf(a, ['finops.logs_no_retention', 'security.ec2_imdsv1']);
    findingId = finding!.id;
    plan = await readyPlan(findingId);
  }, 60_000);

  it('400: skip without a reason, or one shorter than 3 or longer than 500 characters; nothing changes', async ({
    url,
    aWrite,
    post,
    getPlan,
  }) => {
    const seq = plan.steps[0]!.seq;
    for (const body of [
      {},
      { reason: '' },
      { reason: '  a ' },
      { reason: 'x'.repeat(501) },
      { reason: 42 },
    ]) {
      const res = await post(`/api/pulse/plans/${plan.id}/steps/${seq}/skip`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.detail).toBe('string');
    }
    // No body at all is the same missing reason.
    const bare = await call(url, 'POST', `/api/pulse/plans/${plan.id}/steps/${seq}/skip`, { token: aWrite });
    expect(bare.status).toBe(400);
    expect((await getPlan(plan.id)).steps[0]!.status).toBe('pending');
  });

  it('409: skip, confirm or verify the final step; verify a step without a check; finalize too early', async ({
    post,
  }) => {
    const last = plan.steps.at(-1)!.seq;
    for (const [path, body] of [
      [`steps/${last}/skip`, { reason: 'not needed' }],
      [`steps/${last}/confirm`, undefined],
      [`steps/${last}/verify`, undefined],
      ['finalize', undefined],
    ] as const) {
      const res = await post(`/api/pulse/plans/${plan.id}/${path}`, body);
      expect(res.status, path).toBe(409);
      expect(typeof res.body.detail).toBe('string');
    }
  });

  it('a skip with a reason is recorded in the trail and the audit log, and then finalize is allowed', async ({
    url,
    aRead,
    aWrite,
    post,
  }) => {
    const seqs = plan.steps.filter((s) => !s.final).map((s) => s.seq);
    for (const seq of seqs) {
      const res = await post(`/api/pulse/plans/${plan.id}/steps/${seq}/skip`, {
        reason: '  handled by terraform  ',
      });
      expect(res.status).toBe(200);
      expect(res.body.steps[seq - 1]).toMatchObject({
        status: 'skipped',
        skip_reason: 'handled by terraform',
      });
    }
    // Done steps cannot be confirmed twice, and a skipped step can still be confirmed.
    expect((await post(`/api/pulse/plans/${plan.id}/steps/${seqs[0]}/confirm`)).status).toBe(200);
    expect((await post(`/api/pulse/plans/${plan.id}/steps/${seqs[0]}/confirm`)).status).toBe(409);
    const log = await call(url, 'GET', '/api/v1/audit?limit=20', { token: aRead });
    const skip = log.body.entries.find((e: { action: string }) => e.action === 'plan.step_skipped');
    expect(skip).toMatchObject({ target_id: plan.id, details: { reason: 'handled by terraform' } });
    const trail = await call(url, 'GET', `/api/pulse/findings/${plan.finding_id}/audit`, { token: aWrite });
    expect(trail.body.steps.some((s: { tool_name: string }) => s.tool_name === 'plan.skipped')).toBe(true);
  });

  it('404: unknown or malformed ids, a step that does not exist; 409: a resolved finding without a plan', async ({
    url,
    a,
    aWrite,
    t,
    post,
    findingsOf,
  }) => {
    expect((await call(url, 'GET', `/api/pulse/plans/${randomUUID()}`, { token: aWrite })).status).toBe(404);
    expect((await call(url, 'GET', `/api/pulse/plans/nope`, { token: aWrite })).status).toBe(404);
    expect((await post(`/api/pulse/findings/${randomUUID()}/resolution-plan`)).status).toBe(404);
    expect((await post(`/api/pulse/plans/${randomUUID()}/finalize`)).status).toBe(404);
    expect((await post(`/api/pulse/plans/${plan.id}/steps/8/confirm`)).status).toBe(
      plan.steps.length === 8 ? 409 : 404,
    );
    expect((await post(`/api/pulse/plans/${plan.id}/steps/9/confirm`)).status).toBe(404);
    const [other] = await findingsOf(a, ['finops.ebs_snapshot_old']);
    await call(url, 'PATCH', `/api/v1/pulse/findings/${other!.id}/status`, {
      token: aWrite,
      body: { status: 'dismissed' },
    });
    const res = await post(`/api/pulse/findings/${other!.id}/resolution-plan`);
    expect(res.status).toBe(409);
    expect(
      await t.db.selectFrom('resolution_plans').select('id').where('finding_id', '=', other!.id).execute(),
    ).toEqual([]);
  });

  it('access: a read token is 403 (GET too); a browser session needs its CSRF token on POST; another tenant gets 404', async ({
    url,
    b,
    aRead,
    bWrite,
    aLogin,
    t,
    post,
  }) => {
    expect((await call(url, 'GET', `/api/pulse/plans/${plan.id}`, { token: aRead })).status).toBe(403);
    expect((await post(`/api/pulse/findings/${findingId}/resolution-plan`, undefined, aRead)).status).toBe(
      403,
    );
    expect((await call(url, 'GET', `/api/pulse/plans/${plan.id}`)).status).toBe(401);
    const cookie = { cookie: aLogin.cookie };
    expect((await call(url, 'GET', `/api/pulse/plans/${plan.id}`, { headers: cookie })).status).toBe(200);
    expect(
      (await call(url, 'POST', `/api/pulse/findings/${findingId}/resolution-plan`, { headers: cookie }))
        .status,
    ).toBe(403);
    const withCsrf = await call(url, 'POST', `/api/pulse/findings/${findingId}/resolution-plan`, {
      headers: { ...cookie, 'x-csrf-token': aLogin.csrf },
    });
    expect(withCsrf.status).toBe(200);
    expect(withCsrf.body.id).toBe(plan.id);
    // Tenant b: a's plan and finding do not exist for it, and nothing of a's changes.
    for (const [method, path] of [
      ['GET', `/api/pulse/plans/${plan.id}`],
      ['POST', `/api/pulse/findings/${findingId}/resolution-plan`],
      ['POST', `/api/pulse/plans/${plan.id}/steps/1/confirm`],
      ['POST', `/api/pulse/plans/${plan.id}/steps/1/verify`],
      ['POST', `/api/pulse/plans/${plan.id}/finalize`],
      ['POST', `/api/pulse/plans/${plan.id}/regenerate`],
    ] as const) {
      const res = await call(url, method, path, {
        token: bWrite,
        ...(path.endsWith('skip') ? { body: { reason: 'xyz' } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(
      (await post(`/api/pulse/plans/${plan.id}/steps/1/skip`, { reason: 'not mine' }, bWrite)).status,
    ).toBe(404);
    expect(
      await t.db.selectFrom('resolution_plans').select('id').where('tenant_id', '=', b.tenant.id).execute(),
    ).toEqual([]);
  });
});

describe('sharing, failure and staleness', () => {
  it('concurrent get-or-create calls for the findings of one cluster share one plan; exactly one starts it', async ({
    url,
    a,
    aWrite,
    aLogin,
    t,
    findingsOf,
  }) => {
    const [finding] = await findingsOf(a, ['security.iam_access_key_old']);
    // A confirmed duplicate of the cluster gets the same plan.
    const dup = await t.db
      .insertInto('findings')
      .values({
        tenant_id: a.tenant.id,
        group_id: finding!.group_id,
        check_id: finding!.check_id,
        fingerprint: `dup-${randomUUID()}`,
        domain: 'security',
        title: `${finding!.title} (again)`,
        severity: 'high',
        severity_rank: 4,
        status: 'confirmed',
        narrative: (
          await t.db
            .selectFrom('findings')
            .select('narrative')
            .where('id', '=', finding!.id)
            .executeTakeFirstOrThrow()
        ).narrative,
        producing_agent: 'test',
        confidence: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ids = [finding!.id, dup.id];
    // Half through a read_write token, half through the browser session (with its CSRF token).
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(url, 'POST', `/api/pulse/findings/${ids[i % 2]}/resolution-plan`, {
          ...(i % 4 < 2
            ? { token: aWrite }
            : { headers: { cookie: aLogin.cookie, 'x-csrf-token': aLogin.csrf } }),
        }),
      ),
    );
    expect(answers.map((r) => r.status).filter((s) => s === 202)).toHaveLength(1);
    expect(answers.every((r) => r.status === 200 || r.status === 202)).toBe(true);
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect(answers[0]!.body.finding_id).toBe(finding!.id);
    const rows = await t.db
      .selectFrom('resolution_plans')
      .select('id')
      .where('group_id', '=', finding!.group_id)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('a failed generation says why, and get-or-create retries it from the same evidence', async ({
    a,
    t,
    post,
    until,
    findingsOf,
  }) => {
    const [finding] = await findingsOf(a, ['sre.rds_single_az']);
    await t.db
      .updateTable('findings')
      .set({ check_id: 'sre.no_such_check' })
      .where('id', '=', finding!.id)
      .execute();
    const first = await post(`/api/pulse/findings/${finding!.id}/resolution-plan`);
    expect(first.status).toBe(202);
    const failed = await until(first.body.id, (p) => p.status !== 'generating', 'failed');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/sre\.no_such_check/);
    expect(failed.steps).toEqual([]);
    // A failed plan cannot be finalized, and its steps cannot change.
    expect((await post(`/api/pulse/plans/${failed.id}/finalize`)).status).toBe(409);
    await t.db
      .updateTable('findings')
      .set({ check_id: 'sre.rds_single_az' })
      .where('id', '=', finding!.id)
      .execute();
    const retry = await post(`/api/pulse/findings/${finding!.id}/resolution-plan`);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({
      id: failed.id,
      status: 'generating',
      job_id: expect.any(String),
      error: null,
    });
    const ready = await until(failed.id, (p) => p.status !== 'generating', 'ready');
    expect(ready.status).toBe('ready');
    // Regenerate is refused while generating, answers 202 when ready.
    const regen = await post(`/api/pulse/plans/${ready.id}/regenerate`);
    expect(regen.status).toBe(202);
    expect((await post(`/api/pulse/plans/${ready.id}/regenerate`)).status).toBe(409);
    await until(ready.id, (p) => p.status === 'ready', 'ready again');
  }, 60_000);

  it('a resolved cluster that regresses gets its plan generated again (next attempt), resolved ones answer 200', async ({
    url,
    a,
    aWrite,
    t,
    post,
    until,
  }) => {
    const plan = await t.db
      .selectFrom('resolution_plans')
      .select(['id', 'finding_id', 'attempt'])
      .where('tenant_id', '=', a.tenant.id)
      .where('status', '=', 'resolved')
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    const same = await post(`/api/pulse/findings/${plan.finding_id}/resolution-plan`);
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ id: plan.id, status: 'resolved' });
    expect((await post(`/api/pulse/plans/${plan.id}/regenerate`)).status).toBe(409);
    // The issue is back (a regression reopens the finding): the plan is generated again.
    await call(url, 'PATCH', `/api/v1/pulse/findings/${plan.finding_id}/status`, {
      token: aWrite,
      body: { status: 'open' },
    });
    const again = await post(`/api/pulse/findings/${plan.finding_id}/resolution-plan`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({
      id: plan.id,
      status: 'generating',
      attempt: plan.attempt + 1,
      final_check: null,
    });
    await until(plan.id, (p) => p.status === 'ready', 'ready');
  }, 60_000);

  it('a plan goes stale when the finding’s evidence changes under it (demo advance + scan), not on a plain re-scan', async ({
    a,
    t,
    scan,
    post,
    getPlan,
    until,
    findingsOf,
  }) => {
    const findings = await findingsOf(a, [
      'finops.ebs_snapshot_old',
      'security.iam_access_key_old',
      'finops.ec2_stopped_long',
    ]);
    const plans: Plan[] = [];
    for (const f of findings) {
      const res = await post(`/api/pulse/findings/${f.id}/resolution-plan`);
      plans.push(await until(res.body.id, (p) => p.status === 'ready', 'ready'));
    }
    expect(plans.every((p) => !p.stale)).toBe(true);
    await scan(a);
    for (const p of plans) expect((await getPlan(p.id)).stale).toBe(false);
    await advanceDemo(t.db, a.tenant.id, 10);
    await scan(a);
    const after = await Promise.all(plans.map((p) => getPlan(p.id)));
    // Ages in the evidence moved on by 10 days: every one of these plans rests on changed evidence.
    expect(after.map((p) => p.stale)).toEqual(plans.map(() => true));
  }, 90_000);
});
