import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import type { Detector, DetectorRow, Severity } from '../detector';
import { runDetectors, DETECTOR_LIMITS, type DetectionSummary } from '../runner';
import { runSandboxed } from '../sandbox';
import { savingsTotal } from '../savings';
import { DEMO_SPEC, syncDemo } from '../testing';
import { FINOPS_DETECTORS } from './index';

/** One expected finding: its check, its resources (by name, sorted), savings and severity, and its title. */
interface Expected {
  check: string;
  resources: string[];
  savings: number;
  severity: Severity;
  title: RegExp;
  /** Per-resource [name, action, savings], when they differ from the finding's one resource. */
  perResource?: Array<[string, string, number]>;
}

const batchRoots = Array.from(
  { length: 12 },
  (_, i) => `batch-worker-${String(i + 1).padStart(2, '0')}-root`,
);

/** The seeded demo's FinOps defects (domain notes §6.3) and nothing else: the filler is clean. */
const EXPECTED: Expected[] = [
  // F1 (the reference detector)
  {
    check: 'ebs_unattached',
    resources: ['db-migration-io1'],
    savings: 322.5,
    severity: 'high',
    title: /io1.*500 GiB/,
  },
  {
    check: 'ebs_unattached',
    resources: ['old-etl-scratch'],
    savings: 20,
    severity: 'medium',
    title: /gp2.*200 GiB/,
  },
  { check: 'ebs_unattached', resources: ['test-restore'], savings: 4, severity: 'low', title: /gp3.*50 GiB/ },
  // F2
  {
    check: 'ebs_on_stopped_instances',
    resources: ['old-jenkins-root'],
    savings: 10,
    severity: 'medium',
    title: /old-jenkins-root.*old-jenkins stays stopped/,
    perResource: [['old-jenkins-root', 'snapshot-and-delete', 10]],
  },
  // F3: one finding for the launch template's 12 volumes, one per other gp2 volume
  {
    check: 'ebs_gp2_to_gp3',
    resources: batchRoots,
    savings: 24,
    severity: 'medium',
    title: /^Launch template lt-batch .*12 volumes/,
    perResource: batchRoots.map((n) => [n, 'migrate', 2]),
  },
  {
    check: 'ebs_gp2_to_gp3',
    resources: ['analytics-data'],
    savings: 22.68,
    severity: 'medium',
    title: /analytics-data \(1536 GiB\)/,
  },
  {
    check: 'ebs_gp2_to_gp3',
    resources: ['old-etl-scratch'],
    savings: 4,
    severity: 'low',
    title: /old-etl-scratch/,
  },
  {
    check: 'ebs_gp2_to_gp3',
    resources: ['old-jenkins-root'],
    savings: 2,
    severity: 'low',
    title: /old-jenkins-root/,
  },
  // F4
  {
    check: 'ebs_io_to_gp3',
    resources: ['db-migration-io1'],
    savings: 277.5,
    severity: 'high',
    title: /io1 at 4000 IOPS to gp3/,
  },
  // F5: 120, 130 (orphaned), 400, 400 (orphaned) days
  {
    check: 'ebs_snapshot_old',
    resources: ['analytics-data-q2'],
    savings: 76.8,
    severity: 'medium',
    title: /^EBS snapshot .* is 120 days old$/,
  },
  {
    check: 'ebs_snapshot_old',
    resources: ['pre-upgrade-backup'],
    savings: 12.5,
    severity: 'medium',
    title: /^Orphaned EBS snapshot .*130 days old/,
  },
  {
    check: 'ebs_snapshot_old',
    resources: ['reporting-root-2025'],
    savings: 2.5,
    severity: 'low',
    title: /^EBS snapshot .* is 400 days old$/,
  },
  {
    check: 'ebs_snapshot_old',
    resources: ['old-ci-cache'],
    savings: 5,
    severity: 'low',
    title: /^Orphaned EBS snapshot .*400 days old/,
  },
  // F6
  {
    check: 'eip_unassociated',
    resources: ['old-vpn-endpoint'],
    savings: 3.65,
    severity: 'low',
    title: /old-vpn/,
  },
  {
    check: 'eip_unassociated',
    resources: ['partner-allowlist-ip'],
    savings: 3.65,
    severity: 'low',
    title: /partner-allowlist-ip/,
  },
  // F7
  {
    check: 'ec2_low_cpu',
    resources: ['reporting-worker-01'],
    savings: 70.08,
    severity: 'medium',
    title: /reporting-worker-01.*m5\.xlarge/,
    perResource: [['reporting-worker-01', 'rightsize', 70.08]],
  },
  // F8: the instance (nothing to save while stopped) and its volume
  {
    check: 'ec2_stopped_long',
    resources: ['old-jenkins', 'old-jenkins-root'],
    savings: 10,
    severity: 'medium',
    title: /old-jenkins.*stopped for 45 days/,
    perResource: [
      ['old-jenkins', 'terminate', 0],
      ['old-jenkins-root', 'terminate', 10],
    ],
  },
  // F9
  {
    check: 'elb_idle',
    resources: ['old-marketing-alb'],
    savings: 16.43,
    severity: 'medium',
    title: /old-marketing-alb has no target groups/,
  },
  // F10
  {
    check: 'nat_unused',
    resources: ['staging-nat'],
    savings: 32.85,
    severity: 'medium',
    title: /staging-nat/,
  },
  // F11
  {
    check: 'ec2_previous_generation',
    resources: ['legacy-cron-01'],
    savings: 3.5,
    severity: 'low',
    title: /legacy-cron-01.*t2\.medium/,
    perResource: [['legacy-cron-01', 'modernize', 3.5]],
  },
  // F12
  {
    check: 'rds_idle',
    resources: ['legacy-reporting-db'],
    savings: 272.66,
    severity: 'high',
    title: /legacy-reporting-db/,
  },
  // F13: none (the one RDS snapshot's source still exists). F14:
  ...['/aws/lambda/legacy-export', '/ecs/batch-workers', '/var/log/legacy-cron'].map((name): Expected => ({
    check: 'logs_no_retention',
    resources: [name],
    savings: 0,
    severity: 'info',
    title: new RegExp(`${name.replace(/\//g, '\\/')} keeps logs forever`),
    perResource: [[name, 'configure', 0]],
  })),
];

/** Resource types the inventory prices (monthly_cost). */
const PRICED = new Set([
  'aws_ebs_volume',
  'aws_ebs_snapshot',
  'aws_ec2_instance',
  'aws_vpc_eip',
  'aws_vpc_nat_gateway',
  'aws_ec2_application_load_balancer',
  'aws_rds_db_instance',
]);
/** The unit each resource type's monthly cost is billed on, as its finding resources measure it. */
const BILLED_UNIT: Record<string, RegExp> = {
  aws_ebs_volume: /^GiB$/,
  aws_ebs_snapshot: /^GiB$/,
  aws_rds_db_instance: /^GiB$/,
  aws_ec2_instance: /^instance-hours$/,
  aws_vpc_eip: /^address$/,
  aws_vpc_nat_gateway: /^GB processed in 30 d$/,
  aws_ec2_application_load_balancer: /^hours$/,
  aws_cloudwatch_log_group: /^GiB stored$/,
};

let t: TestContext;
let small: TestMember;
let medium: TestMember;
let smallRun: DetectionSummary;
let mediumRun: DetectionSummary;

beforeAll(async () => {
  t = await createTestContext();
  small = await createTenantWithUser(t);
  medium = await createTenantWithUser(t);
  await syncDemo(t.db, small.tenant.id);
  await syncDemo(t.db, medium.tenant.id, { ...DEMO_SPEC, size: 'medium' });
  smallRun = await runDetectors(t.db, small.tenant.id, FINOPS_DETECTORS);
  mediumRun = await runDetectors(t.db, medium.tenant.id, FINOPS_DETECTORS);
}, 300_000);
afterAll(() => t?.close());

async function findingsOf(tenantId: string) {
  const findings = await t.db
    .selectFrom('findings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('check_id')
    .orderBy('title')
    .execute();
  return Promise.all(
    findings.map(async (f) => {
      const resources = await t.db
        .selectFrom('finding_resources')
        .selectAll()
        .where('finding_id', '=', f.id)
        .orderBy('name')
        .execute();
      const recommendation = await t.db
        .selectFrom('recommendations')
        .selectAll()
        .where('finding_id', '=', f.id)
        .executeTakeFirstOrThrow();
      const steps = await t.db
        .selectFrom('finding_audit_steps')
        .selectAll()
        .where('finding_id', '=', f.id)
        .orderBy('seq')
        .execute();
      return { ...f, resources, recommendation, steps };
    }),
  );
}

type Recorded = Awaited<ReturnType<typeof findingsOf>>[number];

const check = (f: Recorded) => f.check_id.replace(/^finops\./, '');
const names = (f: Recorded) => f.resources.map((r) => r.name ?? r.native_id).sort();
const keyOf = (c: string, resources: string[]) => `${c} | ${resources.join(', ')}`;

/** Matches recorded findings to the expected list, one to one. */
function expectExactly(findings: Recorded[]) {
  expect(findings.map((f) => keyOf(check(f), names(f))).sort()).toEqual(
    EXPECTED.map((e) => keyOf(e.check, [...e.resources].sort())).sort(),
  );
  for (const e of EXPECTED) {
    const f = findings.find(
      (x) => check(x) === e.check && keyOf(e.check, names(x)) === keyOf(e.check, [...e.resources].sort()),
    )!;
    const where = keyOf(e.check, e.resources);
    expect(f.title, where).toMatch(e.title);
    expect(f.recommendation.savings, where).toBeCloseTo(e.savings, 2);
    expect(f.estimated_savings, where).toBeCloseTo(e.savings, 2);
    expect(f.severity, where).toBe(e.severity);
    if (e.perResource) {
      expect(
        f.resources.map((r) => [r.name ?? r.native_id, r.action_type, r.savings]),
        where,
      ).toEqual([...e.perResource].sort((a, b) => a[0].localeCompare(b[0])));
    } else {
      expect(
        f.resources.map((r) => r.savings),
        where,
      ).toEqual([e.savings]);
    }
  }
}

describe('the finops detectors on the seeded demo (seed 42, small)', () => {
  it('find exactly the seeded defects, with their savings', async () => {
    expect(smallRun).toMatchObject({ detectors: 14, failedQueries: 0, findings: EXPECTED.length });
    const findings = await findingsOf(small.tenant.id);
    expectExactly(findings);
    // No finding of one check is taken for a duplicate of another's: each stands open on its own.
    expect(findings.every((f) => f.status === 'open')).toBe(true);
    expect(findings.filter((f) => f.check_id === 'finops.rds_snapshot_orphaned')).toEqual([]);
  });

  it('measure every resource in the unit its monthly cost is billed on', async () => {
    const findings = [...(await findingsOf(small.tenant.id)), ...(await findingsOf(medium.tenant.id))];
    const measured = findings.flatMap((f) => f.resources.map((r) => ({ f, r })));
    expect(measured.length).toBeGreaterThan(EXPECTED.length);
    for (const { f, r } of measured) {
      const where = `${f.title}: ${r.arn}`;
      expect(typeof r.measured_size, where).toBe('number');
      expect(Number.isFinite(r.measured_size) && r.measured_size! >= 0, where).toBe(true);
      expect(BILLED_UNIT[r.type], `${where}: no billed unit known for ${r.type}`).toBeDefined();
      expect(r.size_unit, where).toMatch(BILLED_UNIT[r.type]!);
    }
    const of = (check: string, type: string) =>
      measured.filter(({ f, r }) => f.check_id === check && r.type === type).map(({ r }) => r.measured_size);
    // The idle NAT gateway processed nothing; an address is one address; a running instance bills a
    // month of hours, a stopped one none; a volume is its size.
    expect(of('finops.nat_unused', 'aws_vpc_nat_gateway')).toContain(0);
    expect(new Set(of('finops.eip_unassociated', 'aws_vpc_eip'))).toEqual(new Set([1]));
    expect(new Set(of('finops.ec2_low_cpu', 'aws_ec2_instance'))).toEqual(new Set([730]));
    expect(new Set(of('finops.ec2_stopped_long', 'aws_ec2_instance'))).toEqual(new Set([0]));
    const testRestore = measured.find(({ r }) => r.name === 'test-restore')!.r;
    expect([testRestore.measured_size, testRestore.size_unit]).toEqual([50, 'GiB']);
  });

  it('record each resource as the inventory has it, and savings that add up', async () => {
    for (const f of await findingsOf(small.tenant.id)) {
      expect(f.resources.length, f.title).toBeGreaterThan(0);
      for (const r of f.resources) {
        expect(r.console_url, `${f.title}: ${r.arn}`).toMatch(/^https:\/\/.*console\.aws\.amazon\.com\//);
        if (PRICED.has(r.type)) expect(r.monthly_cost, `${f.title}: ${r.arn}`).not.toBeNull();
        // One action per finding, but an Elastic IP is released, not terminated.
        if (r.type !== 'aws_vpc_eip') expect(r.action_type, f.title).toBe(f.recommendation.action_type);
      }
      const sum = f.resources.reduce((s, r) => s + r.savings, 0);
      expect(f.recommendation.savings, f.title).toBeCloseTo(sum, 2);
      expect(f.confidence, f.title).toBeGreaterThanOrEqual(0.8);
      expect(f.narrative.length, f.title).toBeGreaterThan(80);
      expect(f.recommendation.rationale.length, f.title).toBeGreaterThan(40);
    }
    // Metric-based findings say so in their confidence.
    const findings = await findingsOf(small.tenant.id);
    for (const id of ['finops.ec2_low_cpu', 'finops.rds_idle'])
      expect(findings.find((f) => f.check_id === id)!.confidence).toBe(0.8);
    expect(findings.find((f) => f.check_id === 'finops.ec2_low_cpu')!.run_reasoning).toMatch(
      /30 daily CPUUtilization datapoints .*needs all 30.*max\(daily avg\) = [\d.]+% < 20%.*\(\$0\.192 − \$0\.096\)\/h × 730 h = \$70\.08/,
    );
    expect(findings.find((f) => f.title.includes('analytics-data'))!.run_reasoning).toContain(
      '1536 GiB × ($0.1 − $0.08) = $30.72, minus 1608 IOPS',
    );
    // Each resource counted once at its largest savings: delete beats migrate on the same volume.
    expect(await savingsTotal(t.db, small.tenant.id, 'finops')).toMatchObject({
      monthly: 902.8,
      grounded: 902.8,
      resources: 28,
    });
    // A chosen set of findings counts the same way: the io1 volume's delete and migrate findings are
    // alternatives, so the set saves the larger of the two, not their sum.
    const io1 = findings.filter((f) => f.title.includes('db-migration-io1'));
    expect(io1.map((f) => f.recommendation.savings).sort()).toEqual([277.5, 322.5]);
    const idle = findings.find((f) => f.check_id === 'finops.rds_idle')!;
    expect(
      await savingsTotal(
        t.db,
        small.tenant.id,
        undefined,
        [...io1, idle].map((f) => f.id),
      ),
    ).toMatchObject({ monthly: 595.16, resources: 2 });
    expect(await savingsTotal(t.db, small.tenant.id, undefined, [])).toMatchObject({ monthly: 0 });
  });

  it('leave a 3-step trail whose evidence query re-runs in the sandbox to the finding’s rows', async () => {
    const detectorRows = new Map<string, DetectorRow[]>();
    for (const d of FINOPS_DETECTORS) {
      const run = await runSandboxed(t.db, small.tenant.id, d.sql, DETECTOR_LIMITS);
      detectorRows.set(d.id, run.rows as DetectorRow[]);
    }
    const byId = new Map<string, Detector>(FINOPS_DETECTORS.map((d) => [d.id, d]));
    for (const f of await findingsOf(small.tenant.id)) {
      expect(
        f.steps.map((s) => [s.seq, s.step_kind, s.status, s.rerunnable]),
        f.title,
      ).toEqual([
        [1, 'query', 'success', true],
        [2, 'query', 'success', true],
        [3, 'reasoning', 'success', false],
      ]);
      const [query, evidence, reasoning] = f.steps;
      expect(query!.query_sql).toBe(byId.get(f.check_id)!.sql);
      expect(evidence!.query_sql).toContain('detector_rows');
      expect(reasoning!.result_preview).toEqual({ text: f.run_reasoning });

      const rerun = await runSandboxed(t.db, small.tenant.id, evidence!.query_sql!);
      const arns = f.resources.map((r) => r.arn).sort();
      const expected = detectorRows
        .get(f.check_id)!
        .filter((r) => arns.includes(r.arn))
        .sort((a, b) => (a.arn < b.arn ? -1 : a.arn > b.arn ? 1 : 0));
      expect(rerun.rows, f.title).toEqual(expected);
      expect(rerun.rows.map((r) => r.arn).sort(), f.title).toEqual(arns);
      expect(rerun.resultHash, f.title).toBe(evidence!.result_hash);
    }
  });
});

describe('the finops detectors on ~5,000 clean filler resources (size medium)', () => {
  it('find the same seeded defects and nothing else', async () => {
    const resources = await t.db
      .selectFrom('resources')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('tenant_id', '=', medium.tenant.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(resources.n)).toBeGreaterThan(4000);
    expect(mediumRun).toMatchObject({ failedQueries: 0, findings: EXPECTED.length });
    const findings = await findingsOf(medium.tenant.id);
    expectExactly(findings);
    const summary = (list: Recorded[]) =>
      list
        .map((f) => [f.check_id, f.title, names(f), f.recommendation.savings, f.severity])
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(summary(findings)).toEqual(summary(await findingsOf(small.tenant.id)));
  });
});

describe('a later scan', () => {
  it('a second run rediscovers the same findings instead of opening new ones', async () => {
    const again = await runDetectors(t.db, small.tenant.id, FINOPS_DETECTORS);
    expect(again).toMatchObject({ newFindings: 0, rediscovered: EXPECTED.length, failedQueries: 0 });
  });
});

describe('the branches the seeded demo does not reach', () => {
  it('an orphaned RDS snapshot, an ALB with no healthy target, a failed NAT, unpriced alternatives', async () => {
    const other = await createTenantWithUser(t);
    await syncDemo(t.db, other.tenant.id);
    const tenant = other.tenant.id;
    const byName = async (type: string, name: string) =>
      t.db
        .selectFrom('resources')
        .select(['arn', 'attributes'])
        .where('tenant_id', '=', tenant)
        .where('type', '=', type)
        .where('name', '=', name)
        .executeTakeFirstOrThrow();
    const setAttributes = (arn: string, attributes: Record<string, unknown>) =>
      t.db
        .updateTable('resources')
        .set({ attributes: JSON.stringify(attributes) })
        .where('tenant_id', '=', tenant)
        .where('arn', '=', arn)
        .execute();
    // The idle database is gone; its final snapshot (taken 199.8 days ago) stays.
    const db = await byName('aws_rds_db_instance', 'legacy-reporting-db');
    await t.db
      .updateTable('resources')
      .set({ deleted_at: new Date() })
      .where('tenant_id', '=', tenant)
      .where('arn', '=', db.arn)
      .execute();
    // Every checkout target fails its health check.
    const tg = await byName('aws_ec2_target_group', 'checkout-tg');
    const tga = tg.attributes as { target_health_descriptions: Array<{ target_health: { state: string } }> };
    for (const d of tga.target_health_descriptions) d.target_health.state = 'unhealthy';
    await setAttributes(tg.arn, tga);
    // The prod NAT gateway failed (it carries traffic in the metrics, but is not available).
    const nat = await byName('aws_vpc_nat_gateway', 'prod-nat-1a');
    await setAttributes(nat.arn, { ...(nat.attributes as object), state: 'failed' });
    // The t2.medium is stopped (no compute billed), the idle worker is back to m5.large (no m5.medium price).
    const cron = await byName('aws_ec2_instance', 'legacy-cron-01');
    await setAttributes(cron.arn, { ...(cron.attributes as object), instance_state: 'stopped' });
    const worker = await byName('aws_ec2_instance', 'reporting-worker-01');
    await setAttributes(worker.arn, { ...(worker.attributes as object), instance_type: 'm5.large' });
    // The batch template as Terraform state describes it: its configuration at the top level, no
    // default_version.
    const template = await byName('aws_ec2_launch_template', 'lt-batch');
    const { default_version: version, ...flat } = template.attributes as {
      default_version: { block_device_mappings: unknown[] };
    };
    await setAttributes(template.arn, { ...flat, block_device_mappings: version.block_device_mappings });

    const run = await runDetectors(t.db, tenant, FINOPS_DETECTORS);
    expect(run.failedQueries).toBe(0);
    const findings = await findingsOf(tenant);
    const batch = findings.filter(
      (f) => f.check_id === 'finops.ebs_gp2_to_gp3' && f.title.includes('lt-batch'),
    );
    expect(batch).toHaveLength(1);
    expect(batch[0]!.narrative).toContain('whose block device mapping asks for gp2');
    const one = (id: string, name: string) => {
      const found = findings.filter((f) => f.check_id === `finops.${id}` && names(f).includes(name));
      expect(found, `${id} ${name}`).toHaveLength(1);
      return found[0]!;
    };
    expect(findings.filter((f) => f.check_id === 'finops.rds_idle')).toEqual([]);
    const snapshot = one('rds_snapshot_orphaned', 'legacy-reporting-db-final-2025');
    expect(snapshot).toMatchObject({ severity: 'low', estimated_savings: 0 });
    expect(snapshot.title).toContain('outlived its database legacy-reporting-db');
    expect(snapshot.run_reasoning).toMatch(/199 days before the inventory's clock \(> 30\)/);
    const alb = one('elb_idle', 'checkout-alb');
    expect(alb.title).toBe('ALB checkout-alb has no healthy targets');
    expect(alb.recommendation.savings).toBeCloseTo(16.43, 2);
    const failed = one('nat_unused', 'prod-nat-1a');
    expect(failed).toMatchObject({ severity: 'info', confidence: 0.95 });
    expect(failed.recommendation.savings).toBe(0);
    expect(failed.title).toContain('is failed');
    const stopped = one('ec2_previous_generation', 'legacy-cron-01');
    expect(stopped.recommendation.savings).toBe(0);
    expect(stopped.narrative).toContain('no compute is billed');
    const lowCpu = one('ec2_low_cpu', 'reporting-worker-01');
    expect(lowCpu.recommendation.savings).toBe(0);
    expect(lowCpu.narrative).toContain('no price for m5.medium');
    // Still one finding per seeded NAT / ALB: the clean ones stay quiet.
    expect(findings.filter((f) => f.check_id === 'finops.nat_unused')).toHaveLength(2);
    expect(findings.filter((f) => f.check_id === 'finops.elb_idle')).toHaveLength(2);
  });

  it('call no load balancer idle whose target health could not be read (denied)', async () => {
    const other = await createTenantWithUser(t);
    await syncDemo(t.db, other.tenant.id);
    const tenant = other.tenant.id;
    const tg = await t.db
      .selectFrom('resources')
      .select(['arn', 'attributes'])
      .where('tenant_id', '=', tenant)
      .where('type', '=', 'aws_ec2_target_group')
      .where('name', '=', 'checkout-tg')
      .executeTakeFirstOrThrow();
    // What the AWS connector records when DescribeTargetHealth is denied: the targets unknown.
    const attributes = {
      ...(tg.attributes as object),
      target_health_descriptions: null,
      unreadable: ['DescribeTargetHealth'],
    };
    await t.db
      .updateTable('resources')
      .set({ attributes: JSON.stringify(attributes) })
      .where('tenant_id', '=', tenant)
      .where('arn', '=', tg.arn)
      .execute();
    const run = await runDetectors(t.db, tenant, FINOPS_DETECTORS);
    expect(run.failedQueries).toBe(0);
    const idle = (await findingsOf(tenant)).filter((f) => f.check_id === 'finops.elb_idle');
    expect(idle.flatMap((f) => names(f))).not.toContain('checkout-alb');
    // The seeded idle one (no target group at all) is still found.
    expect(idle.flatMap((f) => names(f))).toContain('old-marketing-alb');
  });
});
