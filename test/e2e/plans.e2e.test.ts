import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// A resolution plan the way an operator and a user run it: the API and a worker with the default
// WORKER_QUEUES (so the plans pool is served without naming it) as real processes on Postgres and
// Redis, the fix applied with `npm run admin -- demo exec` while they run, and plain HTTP from outside.

let svc: SplitServices;
let member: TestMember;
let token: string;

beforeAll(async () => {
  // The worker with the default WORKER_QUEUES; the API keeps its default database pool.
  svc = await startSplitServices({ apiEnv: { DATABASE_POOL_MAX: undefined } });
  member = await createTenantWithUser(svc.t);
  token = (await mintTestToken(svc.t, member, 'read_write')).token;
  await connectEnvironment(svc.t.db, member.tenant.id, {
    kind: 'demo',
    seed: 42,
    size: 'small',
    epoch: '2026-11-01',
  });
  await runScan(svc.t.db, (await requestScan(svc.t.db, null, member.tenant.id, 'test')).id);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

async function until(id: string, ok: (p: Record<string, any>) => boolean) {
  for (let i = 0; i < 600; i++) {
    const res = await call(svc.base, 'GET', `/api/pulse/plans/${id}`, { token });
    if (ok(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`plan ${id} never got there`);
}

describe('a resolution plan across real processes', () => {
  it('an open security group: plan, demo exec the fix, verify, finalize: resolved', async () => {
    const list = await call(svc.base, 'GET', '/api/v1/pulse/findings?domain=security', { token });
    const finding = list.body.findings.find((f: { check_id: string }) =>
      f.check_id.startsWith('security.sg_'),
    );
    expect(finding).toBeDefined();
    const created = await call(svc.base, 'POST', `/api/pulse/findings/${finding.id}/resolution-plan`, {
      token,
    });
    expect(created.status).toBe(202);
    const plan = await until(created.body.id, (p) => p.status === 'ready');
    for (const step of plan.steps.filter((s: { final: boolean }) => !s.final)) {
      if (step.fix_command) {
        // Exits 0 (admin checks it) and answers JSON.
        const applied = await svc.admin([
          'demo',
          'exec',
          '--tenant',
          member.tenant.slug,
          step.fix_command.command,
        ]);
        expect(applied?.applied ?? applied).toBeDefined();
      }
      if (step.verification) {
        expect(
          (await call(svc.base, 'POST', `/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`, { token }))
            .status,
        ).toBe(202);
        const checked = await until(plan.id, (p) => p.steps[step.seq - 1].status !== 'verifying');
        expect(checked.steps[step.seq - 1].status).toBe('verified');
      } else {
        expect(
          (await call(svc.base, 'POST', `/api/pulse/plans/${plan.id}/steps/${step.seq}/confirm`, { token }))
            .status,
        ).toBe(200);
      }
    }
    expect((await call(svc.base, 'POST', `/api/pulse/plans/${plan.id}/finalize`, { token })).status).toBe(
      202,
    );
    const done = await until(plan.id, (p) => p.status !== 'finalizing');
    expect(done.status).toBe('resolved');
    expect(done.final_check.outcome).toBe('resolved');
    const resolved = await call(svc.base, 'GET', '/api/v1/pulse/resolved?domain=security', { token });
    expect(resolved.body.resolved.map((r: { finding_id: string }) => r.finding_id)).toContain(finding.id);
  }, 120_000);
});
