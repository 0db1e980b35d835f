import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import {
  collectWorld,
  PriceBook,
  syncInventory,
  tryCommand,
  type DemoSpec,
  type InventoryEdge,
  type InventoryResource,
} from '@opsi/inventory';
import type { Db } from '@opsi/db';
import { fingerprintOf, runDetectors } from '../runner';
import { runSandboxed } from '../sandbox';
import { DEMO_SPEC, syncDemo } from '../testing';
import { SRE_DETECTORS } from './index';

/** What the seeded demo must produce, as (check, root resource name): nothing more, nothing less. */
const EXPECTED = [
  'sre.alarm_no_actions|high-cpu-batch',
  'sre.asg_capacity_one|job-scheduler-asg',
  'sre.asg_single_az|job-scheduler-asg',
  'sre.dynamodb_no_pitr|orders',
  'sre.elasticache_no_failover|sessions-cache',
  'sre.nat_single_for_many_azs|prod-nat-1a',
  'sre.rds_no_backups|prod-payments-db',
  'sre.rds_no_deletion_protection|prod-payments-db',
  'sre.rds_single_az|prod-payments-db',
  'sre.resource_no_alarm|checkout-alb',
  'sre.resource_no_alarm|prod-payments-db',
  'sre.toxic_unprotected_public_database|prod-payments-db',
];

interface Found {
  id: string;
  check: string;
  status: string;
  title: string;
  severity: string;
  narrative: string;
  savings: number;
  root: string;
  rootArn: string;
  resources: Array<{ arn: string; name: string | null; type: string; console_url: string | null }>;
  rationale: string;
}

/** The tenant's SRE findings, each with its root resource (the one its fingerprint was made from). */
async function sreFindings(db: Db, tenantId: string): Promise<Found[]> {
  const findings = await db
    .selectFrom('findings')
    .innerJoin('recommendations', 'recommendations.finding_id', 'findings.id')
    .select([
      'findings.id',
      'findings.check_id',
      'findings.fingerprint',
      'findings.status',
      'findings.title',
      'findings.severity',
      'findings.narrative',
      'findings.estimated_savings',
      'recommendations.rationale',
    ])
    .where('findings.tenant_id', '=', tenantId)
    .where('findings.check_id', 'like', 'sre.%')
    .execute();
  const resources = await db
    .selectFrom('finding_resources')
    .select(['finding_id', 'arn', 'name', 'native_id', 'type', 'console_url'])
    .where('tenant_id', '=', tenantId)
    .execute();
  return findings.map((f) => {
    const mine = resources.filter((r) => r.finding_id === f.id);
    const root = mine.find((r) => fingerprintOf(f.check_id, r.arn) === f.fingerprint);
    return {
      id: f.id,
      check: f.check_id,
      status: f.status,
      title: f.title,
      severity: f.severity,
      narrative: f.narrative,
      savings: Number(f.estimated_savings),
      root: root?.name ?? root?.native_id ?? '(no root)',
      rootArn: root?.arn ?? '',
      resources: mine.map((r) => ({ arn: r.arn, name: r.name, type: r.type, console_url: r.console_url })),
      rationale: f.rationale,
    };
  });
}

const keys = (found: Found[]) => found.map((f) => `${f.check}|${f.root}`).sort();
const byCheck = (found: Found[], check: string) => found.filter((f) => f.check === check);
const one = (found: Found[], check: string, root?: string) => {
  const hits = found.filter((f) => f.check === check && (root === undefined || f.root === root));
  expect(hits, `${check} ${root ?? ''}`).toHaveLength(1);
  return hits[0]!;
};

let t: TestContext;
let small: TestMember;
let medium: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  small = await createTenantWithUser(t);
  medium = await createTenantWithUser(t);
  await syncDemo(t.db, small.tenant.id);
  await syncDemo(t.db, medium.tenant.id, { ...DEMO_SPEC, size: 'medium' });
}, 300_000);
afterAll(() => t?.close());

describe('the SRE detectors on the seeded demo', () => {
  let found: Found[];

  beforeAll(async () => {
    const summary = await runDetectors(t.db, small.tenant.id, SRE_DETECTORS);
    expect(summary).toMatchObject({ detectors: 12, failedQueries: 0, newFindings: 12, clustered: 0 });
    found = await sreFindings(t.db, small.tenant.id);
  }, 120_000);

  it('finds exactly the seeded defects, one open finding each', () => {
    expect(keys(found)).toEqual(EXPECTED);
    expect(found.every((f) => f.status === 'open')).toBe(true);
    expect(byCheck(found, 'sre.lb_single_az')).toEqual([]);
    // Reliability fixes cost money or nothing: no SRE finding claims savings.
    expect(found.every((f) => f.savings === 0)).toBe(true);
  });

  it('says what matters in each narrative', () => {
    const nat = one(found, 'sre.nat_single_for_many_azs');
    expect(nat.title).toContain('us-east-1a, us-east-1b and us-east-1c');
    expect(nat.narrative).toMatch(/lives in us-east-1a/);
    expect(nat.narrative).toContain('us-east-1a, us-east-1b and us-east-1c');
    expect(nat.narrative).toMatch(/subnets in us-east-1b and us-east-1c lose outbound Internet access/);
    expect(nat.narrative).toMatch(/prod-private-b in us-east-1b/);
    expect(nat.rationale).toContain('$65.70/month'); // two more NAT gateways at $32.85
    expect(nat.severity).toBe('high');

    const toxic = one(found, 'sre.toxic_unprotected_public_database');
    expect(toxic.severity).toBe('critical');
    expect(toxic.narrative).toMatch(/publicly accessible/);
    expect(toxic.narrative).toMatch(
      /sg-payments-db .* admits port 3306 from the whole Internet \(0\.0\.0\.0\/0\)/,
    );
    expect(toxic.narrative).toMatch(/deletion protection off/);
    expect(toxic.narrative).toMatch(
      /no automated backups \(retention 0, turned off by bob on \d{4}-\d\d-\d\d\)/,
    );
    expect(toxic.rationale).toContain('--deletion-protection --backup-retention-period 7');

    const backups = one(found, 'sre.rds_no_backups');
    expect(backups.narrative).toMatch(/It had 7 days of retention before: bob set it to 0/);
    expect(backups.narrative).toMatch(/3 resources depend on it in the graph \(checkout-api-1/);

    expect(one(found, 'sre.rds_single_az').narrative).toMatch(/single Availability Zone, us-east-1a/);
    expect(one(found, 'sre.alarm_no_actions').narrative).toMatch(/watches batch-asg/);
    expect(one(found, 'sre.alarm_no_actions').rationale).toMatch(
      /--alarm-actions arn:aws:sns:us-east-1:\d+:ops-alerts/,
    );
    expect(one(found, 'sre.asg_single_az').narrative).toMatch(/launches only into us-east-1a/);
    expect(one(found, 'sre.asg_single_az').narrative).toMatch(/prod-private-b .* prod-private-c/);
    expect(one(found, 'sre.asg_capacity_one').narrative).toMatch(/min 1 \/ desired 1 \/ max 1/);
    expect(one(found, 'sre.asg_capacity_one').rationale).toContain('$30.37/month'); // a second t3.medium
    expect(one(found, 'sre.elasticache_no_failover').narrative).toMatch(/a single node and no replica/);
    expect(one(found, 'sre.dynamodb_no_pitr').narrative).toMatch(/point-in-time recovery DISABLED/);
    const alb = one(found, 'sre.resource_no_alarm', 'checkout-alb');
    expect(alb.rationale).toMatch(/--dimensions Name=LoadBalancer,Value=app\/checkout-alb\/[0-9a-f]+ /);
  });

  it('names the resources concerned, each with its console link', () => {
    for (const f of found) {
      expect(f.rootArn, f.check).not.toBe('');
      expect(
        f.resources.every((r) => r.console_url?.startsWith('https://')),
        f.check,
      ).toBe(true);
    }
    const nat = one(found, 'sre.nat_single_for_many_azs');
    expect(nat.resources.map((r) => r.type).sort()).toEqual([
      'aws_vpc_nat_gateway',
      'aws_vpc_route_table',
      'aws_vpc_subnet',
      'aws_vpc_subnet',
    ]);
    expect(
      nat.resources
        .filter((r) => r.type === 'aws_vpc_subnet')
        .map((r) => r.name)
        .sort(),
    ).toEqual(['prod-private-b', 'prod-private-c']);
    const toxic = one(found, 'sre.toxic_unprotected_public_database');
    expect(toxic.resources.map((r) => [r.type, r.name]).sort()).toEqual([
      ['aws_rds_db_instance', 'prod-payments-db'],
      ['aws_vpc_security_group', 'sg-payments-db'],
    ]);
  });

  it('keeps a three-step trail whose evidence query re-runs in the sandbox with the same result', async () => {
    for (const f of found) {
      const steps = await t.db
        .selectFrom('finding_audit_steps')
        .selectAll()
        .where('finding_id', '=', f.id)
        .orderBy('seq')
        .execute();
      expect(
        steps.map((s) => [s.seq, s.step_kind, s.status, s.rerunnable]),
        f.check,
      ).toEqual([
        [1, 'query', 'success', true],
        [2, 'query', 'success', true],
        [3, 'reasoning', 'success', false],
      ]);
      const evidence = steps[1]!;
      expect(evidence.query_sql).toContain('detector_rows');
      expect(evidence.query_sql).not.toContain(small.tenant.id);
      const rerun = await runSandboxed(t.db, small.tenant.id, evidence.query_sql!);
      expect(rerun.rows.length, f.check).toBeGreaterThan(0);
      expect(rerun.rows.map((r) => r.arn)).toContain(f.rootArn);
      expect(rerun.resultHash, `${f.check}: replay`).toBe(evidence.result_hash);
      expect((steps[2]!.result_preview as { text: string }).text.length).toBeGreaterThan(20);
    }
  });

  it('rediscovers the same findings on a second run instead of opening new ones', async () => {
    const again = await runDetectors(t.db, small.tenant.id, SRE_DETECTORS);
    expect(again).toMatchObject({ newFindings: 0, rediscovered: 12, failedQueries: 0 });
  }, 60_000);
});

describe('no false positives at size medium', () => {
  it('finds the same defects among ~5,000 clean resources', async () => {
    const count = await t.db
      .selectFrom('resources')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('tenant_id', '=', medium.tenant.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBeGreaterThan(4500);
    const summary = await runDetectors(t.db, medium.tenant.id, SRE_DETECTORS);
    expect(summary).toMatchObject({ failedQueries: 0, newFindings: 12 });
    const found = await sreFindings(t.db, medium.tenant.id);
    expect(keys(found)).toEqual(EXPECTED);
    expect(one(found, 'sre.nat_single_for_many_azs').narrative).toContain(
      'us-east-1a, us-east-1b and us-east-1c',
    );
  }, 120_000);
});

describe('fixes remove findings', () => {
  /** Runs each command against the environment so far (as `demo exec` would) and keeps it. */
  function withCommands(spec: DemoSpec, commands: string[]): DemoSpec {
    let current = spec;
    for (const command of commands) {
      tryCommand(current, command); // throws if AWS would refuse it
      current = { ...current, commands: [...current.commands, { day: current.day, command }] };
    }
    return current;
  }
  /** The id a command created, from its effects. */
  function created(spec: DemoSpec, command: string, type: string): string {
    const effect = tryCommand(spec, command).effects.find((e) => e.change === 'created' && e.type === type);
    expect(effect, command).toBeDefined();
    return effect!.arn.replace(/^.*\//, '');
  }

  it('Multi-AZ clears the single-AZ finding; the recommended alarms and NAT layout clear theirs', async () => {
    const found = await sreFindings(t.db, small.tenant.id);
    // The commands the findings recommend, as written in their rationale.
    const alarmCommands = byCheck(found, 'sre.resource_no_alarm').map(
      (f) => /aws cloudwatch put-metric-alarm [^\n]*/.exec(f.rationale)![0],
    );
    let spec = withCommands(DEMO_SPEC, [
      'aws rds modify-db-instance --db-instance-identifier prod-payments-db --multi-az --apply-immediately',
      ...alarmCommands,
    ]);

    // The NAT layout: a NAT gateway and a route table per AZ, as the recommendation lays out, built from
    // the ids the world gives (the demo has no allocate-address: its two idle Elastic IPs serve).
    const world = collectWorld(spec, await PriceBook.load(t.db));
    const byName = (type: string, name: string) =>
      world.resources.find((r) => r.type === type && (r.name === name || r.tags.Name === name))!;
    const vpc = byName('aws_vpc', 'prod').nativeId;
    const privateRt = byName('aws_vpc_route_table', 'prod-private');
    const associations = privateRt.attributes.associations as Array<{
      subnet_id: string;
      route_table_association_id: string;
    }>;
    const eips = world.resources
      .filter((r) => r.type === 'aws_vpc_eip' && !r.attributes.association_id)
      .map((r) => r.nativeId);
    expect(eips.length).toBeGreaterThanOrEqual(2);
    const moveAz = (az: 'b' | 'c', eip: string) => {
      const natCmd = `aws ec2 create-nat-gateway --subnet-id ${byName('aws_vpc_subnet', `prod-public-${az}`).nativeId} --allocation-id ${eip}`;
      const nat = created(spec, natCmd, 'aws_vpc_nat_gateway');
      spec = withCommands(spec, [natCmd]);
      const rtCmd = `aws ec2 create-route-table --vpc-id ${vpc}`;
      const rt = created(spec, rtCmd, 'aws_vpc_route_table');
      const subnet = byName('aws_vpc_subnet', `prod-private-${az}`).nativeId;
      const association = associations.find((a) => a.subnet_id === subnet)!.route_table_association_id;
      spec = withCommands(spec, [
        rtCmd,
        `aws ec2 create-route --route-table-id ${rt} --destination-cidr-block 0.0.0.0/0 --nat-gateway-id ${nat}`,
        `aws ec2 replace-route-table-association --association-id ${association} --route-table-id ${rt}`,
      ]);
    };

    // Half the fix: us-east-1b gets its own NAT; us-east-1c still leans on us-east-1a.
    moveAz('b', eips[0]!);
    const half = (await createTenantWithUser(t)).tenant.id;
    await syncDemo(t.db, half, spec);
    await runDetectors(t.db, half, SRE_DETECTORS);
    const halfFound = await sreFindings(t.db, half);
    const nat = one(halfFound, 'sre.nat_single_for_many_azs');
    expect(nat.narrative).toContain('us-east-1a and us-east-1c');
    expect(nat.narrative).not.toContain('us-east-1b');

    // The whole fix.
    moveAz('c', eips[1]!);
    const fixed = (await createTenantWithUser(t)).tenant.id;
    await syncDemo(t.db, fixed, spec);
    const summary = await runDetectors(t.db, fixed, SRE_DETECTORS);
    expect(summary.failedQueries).toBe(0);
    const after = await sreFindings(t.db, fixed);
    expect(byCheck(after, 'sre.rds_single_az')).toEqual([]);
    // Gone: single-AZ (Multi-AZ now), the two unwatched resources (the recommended alarms), the NAT SPOF.
    // New: the two NAT gateways just created have no alarm yet, and resource_no_alarm says so.
    expect(keys(after)).toEqual(
      [
        ...EXPECTED.filter(
          (k) =>
            !k.startsWith('sre.rds_single_az|') &&
            !k.startsWith('sre.resource_no_alarm|') &&
            !k.startsWith('sre.nat_single_for_many_azs|'),
        ),
        'sre.resource_no_alarm|nat-1b',
        'sre.resource_no_alarm|nat-1c',
      ].sort(),
    );
    // The recommended alarms notify: no new alarm_no_actions.
    expect(byCheck(after, 'sre.alarm_no_actions').map((f) => f.root)).toEqual(['high-cpu-batch']);
  }, 240_000);
});

describe('the exact conditions, on a hand-made inventory', () => {
  const A = '111111111111';
  const B = '222222222222';
  const R = 'us-east-1';
  const res = (
    type: InventoryResource['type'],
    arn: string,
    nativeId: string,
    attributes: Record<string, unknown>,
    o: { name?: string; account?: string; az?: string } = {},
  ): InventoryResource => ({
    type,
    arn,
    nativeId,
    accountId: o.account ?? A,
    region: R,
    availabilityZone: o.az ?? null,
    name: o.name ?? nativeId,
    tags: {},
    attributes,
    sizeValue: null,
    sizeUnit: null,
  });
  const rds = (id: string, a: Record<string, unknown>, account = A) =>
    res(
      'aws_rds_db_instance',
      `arn:aws:rds:${R}:${account}:db:${id}`,
      id,
      {
        db_instance_identifier: id,
        engine: 'postgres',
        multi_az: true,
        backup_retention_period: 7,
        deletion_protection: true,
        publicly_accessible: false,
        ...a,
      },
      { account },
    );
  const alarm = (name: string, attributes: Record<string, unknown>, account = A) =>
    res(
      'aws_cloudwatch_alarm',
      `arn:aws:cloudwatch:${R}:${account}:alarm:${name}`,
      name,
      {
        alarm_name: name,
        alarm_actions: ['arn:aws:sns:us-east-1:111111111111:ops'],
        ok_actions: [],
        insufficient_data_actions: [],
        ...attributes,
      },
      { account },
    );
  const watch = (name: string, value: string, account = A) =>
    alarm(`${name}-alarm`, { dimensions: [{ name: 'Any', value }] }, account);
  const ec2 = (kind: string, id: string) => `arn:aws:ec2:${R}:${A}:${kind}/${id}`;
  const subnet = (id: string, az: string, routeTableId: string | null) =>
    res(
      'aws_vpc_subnet',
      ec2('subnet', id),
      id,
      { subnet_id: id, vpc_id: 'vpc-1', availability_zone: az, route_table_id: routeTableId },
      { az },
    );
  const nat = (id: string, az: string) =>
    res(
      'aws_vpc_nat_gateway',
      ec2('natgateway', id),
      id,
      { nat_gateway_id: id, vpc_id: 'vpc-1', state: 'available' },
      { az },
    );
  const lb = (name: string, type: string, zones: string[]) =>
    res(
      'aws_ec2_application_load_balancer',
      `arn:aws:elasticloadbalancing:${R}:${A}:loadbalancer/${type === 'network' ? 'net' : 'app'}/${name}/0123456789abcdef`,
      name, // as the AWS connector names load balancers: by name, not by the dimension value
      { type, availability_zones: zones.map((z) => ({ zone_name: z, subnet_id: `subnet-${z}` })) },
    );
  const tg = (name: string, lbArn: string) =>
    res(
      'aws_ec2_target_group',
      `arn:aws:elasticloadbalancing:${R}:${A}:targetgroup/${name}/0123456789abcdef`,
      name,
      {
        load_balancer_arns: [lbArn],
      },
    );

  it('skips what the references skip, matches alarms by dimension in the right account, and follows main and explicit route tables', async () => {
    const web = lb('web', 'application', ['us-east-1a', 'us-east-1b']);
    const api = lb('api', 'application', ['us-east-1a', 'us-east-1b']);
    const edge = lb('edge', 'network', ['us-east-1a']);
    const resources: InventoryResource[] = [
      // Aurora is skipped for single-AZ and deletion protection; DocumentDB for deletion protection.
      rds('aurora-writer', { engine: 'aurora-postgresql', multi_az: false, deletion_protection: false }),
      watch('aurora-writer', 'aurora-writer'),
      rds('docdb-1', { engine: 'docdb', deletion_protection: false }),
      watch('docdb-1', 'docdb-1'),
      // Clean, and watched through a dimension only (no monitors edge).
      rds('pg-clean', {}),
      watch('pg-clean', 'pg-clean'),
      // An alarm in another account does not watch it.
      rds('shared-db', {}, B),
      watch('shared-db', 'shared-db', A),
      // Public but backed up: deletion protection off, yet not the toxic combination.
      rds('public-but-backed', {
        publicly_accessible: true,
        backup_retention_period: 1,
        deletion_protection: false,
      }),
      watch('public-but-backed', 'public-but-backed'),
      // Load balancers as the AWS connector shapes them: the target group names its load balancer.
      web,
      tg('web-tg', web.arn),
      alarm('web-5xx', { dimensions: [{ name: 'LoadBalancer', value: 'app/web/0123456789abcdef' }] }),
      api,
      tg('api-tg', api.arn),
      edge, // single-AZ, and serves no target group, so not critical for alarms
      // A NAT gateway in 1a behind the VPC's main route table, used by subnets in 1a and 1b.
      nat('nat-1', 'us-east-1a'),
      watch('nat-1', 'nat-1'),
      res('aws_vpc_route_table', ec2('route-table', 'rtb-main'), 'rtb-main', {
        vpc_id: 'vpc-1',
        routes: [
          { destination_cidr_block: '10.0.0.0/16', gateway_id: 'local' },
          { destination_cidr_block: '0.0.0.0/0', nat_gateway_id: 'nat-1' },
        ],
        associations: [{ main: true, route_table_association_id: 'rtbassoc-main' }],
      }),
      subnet('subnet-a', 'us-east-1a', 'rtb-main'),
      subnet('subnet-b', 'us-east-1b', 'rtb-main'),
      // A NAT gateway in 1c whose table lists its subnets explicitly; the subnets do not say which table.
      nat('nat-2', 'us-east-1c'),
      watch('nat-2', 'nat-2'),
      res('aws_vpc_route_table', ec2('route-table', 'rtb-2'), 'rtb-2', {
        vpc_id: 'vpc-1',
        routes: [{ destination_cidr_block: '0.0.0.0/0', nat_gateway_id: 'nat-2' }],
        associations: [{ subnet_id: 'subnet-c' }, { subnet_id: 'subnet-d' }],
      }),
      subnet('subnet-c', 'us-east-1c', null),
      subnet('subnet-d', 'us-east-1d', null),
      // A NAT gateway per AZ is fine.
      nat('nat-3', 'us-east-1a'),
      watch('nat-3', 'nat-3'),
      res('aws_vpc_route_table', ec2('route-table', 'rtb-3'), 'rtb-3', {
        routes: [{ destination_cidr_block: '0.0.0.0/0', nat_gateway_id: 'nat-3' }],
        associations: [{ subnet_id: 'subnet-e' }],
      }),
      subnet('subnet-e', 'us-east-1a', 'rtb-3'),
      // Actions given as JSON null or missing count as none.
      alarm('odd-alarm', {
        alarm_actions: [],
        ok_actions: null,
        insufficient_data_actions: undefined,
        dimensions: [],
      }),
      // Desired 1 is capacity one even when max is larger; two AZs is not single-AZ.
      res(
        'aws_ec2_autoscaling_group',
        `arn:aws:autoscaling:${R}:${A}:autoScalingGroup:u:autoScalingGroupName/workers`,
        'workers',
        {
          min_size: 1,
          max_size: 3,
          desired_capacity: 1,
          availability_zones: ['us-east-1a', 'us-east-1b'],
          instances: [],
        },
      ),
      alarm('workers-cpu', { dimensions: [{ name: 'AutoScalingGroupName', value: 'workers' }] }),
      // Automatic failover unset is not enabled.
      res(
        'aws_elasticache_replication_group',
        `arn:aws:elasticache:${R}:${A}:replicationgroup:cache-x`,
        'cache-x',
        {
          member_clusters: ['cache-x-001', 'cache-x-002'],
        },
      ),
      // PITR DISABLED fires; PITR unknown (the connector could not read it) does not.
      res('aws_dynamodb_table', `arn:aws:dynamodb:${R}:${A}:table/legacy`, 'legacy', {
        point_in_time_recovery_description: { point_in_time_recovery_status: 'DISABLED' },
      }),
      res('aws_dynamodb_table', `arn:aws:dynamodb:${R}:${A}:table/unknown`, 'unknown', {
        point_in_time_recovery_description: null,
      }),
    ];
    const member = await createTenantWithUser(t);
    const book = await PriceBook.load(t.db);
    const conn = await t.db
      .insertInto('cloud_connections')
      .values({ tenant_id: member.tenant.id, kind: 'demo', config: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const edges: InventoryEdge[] = [];
    await syncInventory(
      t.db,
      { tenantId: member.tenant.id, connectionId: conn.id, scanId: null },
      { observedAt: new Date('2026-11-01T00:00:00Z'), resources, edges, metrics: [], costs: [], events: [] },
      book,
    );
    const summary = await runDetectors(t.db, member.tenant.id, SRE_DETECTORS);
    expect(summary.failedQueries).toBe(0);
    const found = await sreFindings(t.db, member.tenant.id);
    expect(keys(found)).toEqual([
      'sre.alarm_no_actions|odd-alarm',
      'sre.asg_capacity_one|workers',
      'sre.dynamodb_no_pitr|legacy',
      'sre.elasticache_no_failover|cache-x',
      'sre.lb_single_az|edge',
      'sre.nat_single_for_many_azs|nat-1',
      'sre.nat_single_for_many_azs|nat-2',
      'sre.rds_no_deletion_protection|public-but-backed',
      'sre.resource_no_alarm|api',
      'sre.resource_no_alarm|shared-db',
    ]);
    expect(one(found, 'sre.nat_single_for_many_azs', 'nat-1').narrative).toContain(
      'us-east-1a and us-east-1b',
    );
    expect(one(found, 'sre.nat_single_for_many_azs', 'nat-2').narrative).toContain(
      'us-east-1c and us-east-1d',
    );
    expect(one(found, 'sre.elasticache_no_failover').narrative).toMatch(/2 nodes/);
    expect(one(found, 'sre.lb_single_az').narrative).toMatch(
      /Network load balancer edge .*1 Availability Zone \(us-east-1a\)/,
    );
  }, 60_000);
});
