import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DETECTORS, judge, REMEDIATED_CHECKS, type StepCheck } from '@opsi/detectors';
import { describeDemo, tryCommand, type DemoSpec } from '@opsi/inventory';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { connectEnvironment, demoSpec, requestScan, runScan } from '../inventory';
import { executeGeneratePlan } from './execute';
import { getPlan } from './plans';

let t: TestContext;
let a: TestMember;
let spec: DemoSpec;
let learning: { id: string };
let learningFinding: string;
let volumeId: string;
let runbook: { id: string };
const plans: Array<Awaited<ReturnType<typeof getPlan>> & { check_id: string }> = [];

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
  spec = await demoSpec(t.db, a.tenant.id);
  const findings = await t.db
    .selectFrom('findings')
    .select(['id', 'group_id', 'check_id'])
    .where('tenant_id', '=', a.tenant.id)
    .where('status', '=', 'open')
    .execute();
  // A taught fact about one volume: its plan cites it.
  const volume = await t.db
    .selectFrom('finding_resources as fr')
    .innerJoin('findings as f', 'f.id', 'fr.finding_id')
    .select(['fr.native_id', 'f.id'])
    .where('f.tenant_id', '=', a.tenant.id)
    .where('f.check_id', '=', 'finops.ebs_unattached')
    .orderBy('fr.native_id')
    .executeTakeFirstOrThrow();
  learning = await t.db
    .insertInto('learnings')
    .values({
      tenant_id: a.tenant.id,
      fact: `${volume.native_id} holds the 2024 ETL replay; the data team keeps a copy in S3.`,
      created_by: 'user:test',
    })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  learningFinding = volume.id;
  // The team's own runbook for databases without backups: it becomes the first step of their plans.
  runbook = await t.db
    .insertInto('runbooks')
    .values({
      tenant_id: a.tenant.id,
      title: 'Backups for our databases',
      service: null,
      applies_to: JSON.stringify({
        detectors: ['sre.rds_no_backups'],
        resource_types: [],
        alert_fingerprints: [],
      }),
      steps: JSON.stringify(['Tell #dba before changing retention.', 'Use 14 days for prod.']),
      created_by: 'user:test',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  volumeId = volume.native_id;
  for (const f of findings) {
    const plan = await t.db
      .insertInto('resolution_plans')
      .values({ tenant_id: a.tenant.id, group_id: f.group_id, finding_id: f.id, created_by: 'test' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await executeGeneratePlan({ db: t.db, generationTimeoutMs: 60_000 }, a.tenant.id, plan.id);
    plans.push({ ...(await getPlan(t.db, a.tenant.id, plan.id)), check_id: f.check_id });
  }
}, 180_000);
afterAll(async () => {
  await t?.close();
});

describe('remediation knowledge', () => {
  it('exists for every one of the detectors', () => {
    expect(DETECTORS.length).toBe(40);
    expect(DETECTORS.map((d) => d.id).filter((id) => !REMEDIATED_CHECKS.includes(id))).toEqual([]);
  });

  it('gives every open finding of the demo a ready plan: at most 8 steps, the last the final check', () => {
    expect(plans.length).toBeGreaterThan(40);
    for (const p of plans) {
      expect(p.status, `${p.check_id}: ${p.error}`).toBe('ready');
      expect(p.steps.length).toBeGreaterThanOrEqual(1);
      expect(p.steps.length).toBeLessThanOrEqual(8);
      expect(p.steps.at(-1)!.final).toBe(true);
      expect(p.steps.filter((s) => s.final)).toHaveLength(1);
      for (const s of p.steps) {
        expect(s.citations.some((c) => c.kind === 'finding' && c.ref === p.finding_id)).toBe(true);
        expect(s.verification !== null || s.how_to_confirm !== null).toBe(true);
        if (s.fix_command) expect(s.fix_command.executed_by_service).toBe(false);
      }
    }
    // Most detectors' findings carry at least one exact fix the demo applies.
    const withFix = new Set(plans.filter((p) => p.steps.some((s) => s.fix_command)).map((p) => p.check_id));
    expect(withFix.size).toBeGreaterThanOrEqual(28);
  });

  it('cites the tenant’s learnings about the cluster’s resources, and only in that plan', () => {
    const citing = plans.filter((p) =>
      p.steps.some((s) => s.citations.some((c) => c.kind === 'learning' && c.ref === learning.id)),
    );
    expect(citing.map((p) => p.finding_id)).toContain(learningFinding);
    // Every plan citing it is about that volume (another check on the same volume cites it too).
    for (const p of citing) {
      expect(p.steps.some((s) => s.instructions.includes('2024 ETL replay'))).toBe(true);
      expect(
        p.steps.some((s) => s.citations.some((c) => c.kind === 'resource' && c.ref.endsWith(volumeId))),
      ).toBe(true);
    }
    expect(citing.length).toBeLessThan(plans.length / 10);
  });

  it('puts the tenant’s runbook first, and quotes the built-in runbooks of the other detectors', () => {
    const backups = plans.filter((p) => p.check_id === 'sre.rds_no_backups');
    expect(backups.length).toBeGreaterThan(0);
    for (const p of backups) {
      expect(p.steps[0]!.title).toBe('Follow your runbook: Backups for our databases');
      expect(p.steps[0]!.instructions).toBe(
        '1. Tell #dba before changing retention. 2. Use 14 days for prod.',
      );
      expect(p.steps[0]!.citations).toContainEqual({ kind: 'runbook', ref: runbook.id });
      expect(p.steps[0]!.how_to_confirm).toBeTruthy();
    }
    const builtIn = plans.filter((p) =>
      p.steps[0]!.citations.some((c) => c.kind === 'runbook' && c.ref.startsWith('builtin:')),
    );
    expect(builtIn.length).toBeGreaterThan(10);
    for (const p of builtIn) expect(p.steps[0]!.instructions).toMatch(/Runbook “/);
  });

  it('fix commands apply to the demo in order, and then every step check passes', async () => {
    for (const p of plans) {
      const steps = await t.db
        .selectFrom('resolution_plan_steps')
        .select(['seq', 'fix_command', 'check_spec'])
        .where('plan_id', '=', p.id)
        .orderBy('seq')
        .execute();
      let current: DemoSpec = spec;
      for (const s of steps) {
        const check = s.check_spec as unknown as StepCheck | null;
        const verdict = () => {
          const described = describeDemo(current, [check!.arn]).resources.get(check!.arn) ?? null;
          return judge(check!.expect, described ? { attributes: described.attributes } : null);
        };
        if (!s.fix_command) continue;
        // Before its fix, the step's check does not pass (it really looks at the change)…
        if (check) expect(verdict().passed, `${p.check_id} step ${s.seq} before`).toBe(false);
        expect(
          () => tryCommand(current, s.fix_command!),
          `${p.check_id} step ${s.seq}: ${s.fix_command}`,
        ).not.toThrow();
        current = {
          ...current,
          commands: [...current.commands, { day: current.day, command: s.fix_command }],
        };
        // …and after it, it does.
        if (check) expect(verdict().passed, `${p.check_id} step ${s.seq}: ${verdict().observed}`).toBe(true);
      }
    }
  });
});
