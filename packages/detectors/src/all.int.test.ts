import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { DETECTORS } from './index';
import { runDetectors } from './runner';
import { savingsTotal } from './savings';
import { syncDemo } from './testing';

let t: TestContext;
let a: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  await syncDemo(t.db, a.tenant.id);
  await runDetectors(t.db, a.tenant.id, DETECTORS);
}, 120_000);
afterAll(() => t?.close());

/** Findings per check on the seeded demo: every seeded defect, by the right detector, and nothing else. */
const EXPECTED: Record<string, number> = {
  'finops.ebs_unattached': 3,
  'finops.ebs_on_stopped_instances': 1,
  'finops.ebs_gp2_to_gp3': 4,
  'finops.ebs_io_to_gp3': 1,
  'finops.ebs_snapshot_old': 4,
  'finops.eip_unassociated': 2,
  'finops.ec2_low_cpu': 1,
  'finops.ec2_stopped_long': 1,
  'finops.elb_idle': 1,
  'finops.nat_unused': 1,
  'finops.ec2_previous_generation': 1,
  'finops.rds_idle': 1,
  'finops.logs_no_retention': 3,
  'security.sg_ssh_open': 1,
  'security.sg_rdp_open': 1,
  'security.sg_all_ports_open': 1,
  'security.s3_public': 2,
  'security.ebs_unencrypted': 1,
  'security.iam_access_key_old': 1,
  'security.root_mfa_disabled': 1,
  'security.iam_console_user_no_mfa': 1,
  'security.rds_public': 1,
  'security.rds_unencrypted': 1,
  'security.cloudtrail_no_multi_region': 1,
  'security.ec2_imdsv1': 2,
  'security.iam_admin_star': 1,
  'security.toxic_exposed_instance_sensitive_data': 1,
  'sre.rds_single_az': 1,
  'sre.rds_no_backups': 1,
  'sre.rds_no_deletion_protection': 1,
  'sre.alarm_no_actions': 1,
  'sre.resource_no_alarm': 2,
  'sre.asg_single_az': 1,
  'sre.asg_capacity_one': 1,
  'sre.elasticache_no_failover': 1,
  'sre.dynamodb_no_pitr': 1,
  'sre.nat_single_for_many_azs': 1,
  'sre.toxic_unprotected_public_database': 1,
};

describe('all detectors on the seeded demo', () => {
  it('has at least ten detectors per domain', () => {
    for (const domain of ['finops', 'security', 'sre']) {
      expect(DETECTORS.filter((d) => d.domain === domain).length, domain).toBeGreaterThanOrEqual(10);
    }
  });

  it('finds every seeded defect with the right detector, and nothing else, none clustered away', async () => {
    const rows = await t.db
      .selectFrom('findings')
      .select(['check_id', 'status'])
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    const counts: Record<string, number> = {};
    for (const r of rows) counts[r.check_id] = (counts[r.check_id] ?? 0) + 1;
    expect(counts).toEqual(EXPECTED);
    expect(rows.every((r) => r.status === 'open')).toBe(true);
  });

  it('the savings total equals an independent computation from the inventory and the price table', async () => {
    const resources = await t.db
      .selectFrom('resources')
      .select(['arn', 'type', 'name', 'region', 'attributes', 'monthly_cost'])
      .where('tenant_id', '=', a.tenant.id)
      .where('deleted_at', 'is', null)
      .execute();
    const prices = new Map(
      (await t.db.selectFrom('prices').select(['region', 'sku', 'usd']).execute()).map((p) => [
        `${p.region}|${p.sku}`,
        Number(p.usd),
      ]),
    );
    const price = (region: string, sku: string) => prices.get(`${region}|${sku}`)!;
    const observed = (
      await t.db
        .selectFrom('inventory_snapshots')
        .select(({ fn }) => fn.max('observed_at').as('at'))
        .where('tenant_id', '=', a.tenant.id)
        .executeTakeFirstOrThrow()
    ).at as Date;
    const cpu = await t.db
      .selectFrom('metrics_daily')
      .select(['arn', 'avg'])
      .where('tenant_id', '=', a.tenant.id)
      .where('metric', '=', 'CPUUtilization')
      .execute();
    const conns = await t.db
      .selectFrom('metrics_daily')
      .select(['arn', 'max'])
      .where('tenant_id', '=', a.tenant.id)
      .where('metric', '=', 'DatabaseConnections')
      .execute();
    const bytes = await t.db
      .selectFrom('metrics_daily')
      .select(['arn', 'sum'])
      .where('tenant_id', '=', a.tenant.id)
      .where('metric', '=', 'BytesOutToDestination')
      .execute();
    const byInstance = new Map(
      resources
        .filter((r) => r.type === 'aws_ec2_instance')
        .map((r) => [String(r.attributes.instance_id), r]),
    );

    // The best saving available on each resource (mutually exclusive actions: the larger counts).
    const best = new Map<string, number>();
    const offer = (arn: string, usd: number) =>
      best.set(arn, Math.max(best.get(arn) ?? 0, Math.round(usd * 100) / 100));
    const days = (iso: unknown) => (observed.getTime() - Date.parse(String(iso))) / 86_400_000;
    for (const r of resources) {
      const at = r.attributes as Record<string, any>;
      if (r.type === 'aws_ebs_volume') {
        const size = Number(at.size);
        const attached = (at.attachments as Array<{ instance_id: string }>).map((x) =>
          byInstance.get(x.instance_id),
        );
        if (attached.length === 0 || attached.every((i) => i?.attributes.instance_state === 'stopped'))
          offer(r.arn, Number(r.monthly_cost)); // delete
        if (at.volume_type === 'gp2') {
          const extraIops = Math.max(0, Math.min(3 * size, 16000) - 3000);
          offer(
            r.arn,
            size * (price(r.region, 'ebs:gp2:gb_month') - price(r.region, 'ebs:gp3:gb_month')) -
              extraIops * price(r.region, 'ebs:gp3:iops_month'),
          );
        }
        if ((at.volume_type === 'io1' || at.volume_type === 'io2') && Number(at.iops) <= 16000) {
          const now =
            size * price(r.region, `ebs:${at.volume_type}:gb_month`) +
            Number(at.iops) * price(r.region, `ebs:${at.volume_type}:iops_month`);
          const gp3 =
            size * price(r.region, 'ebs:gp3:gb_month') +
            Math.max(0, Number(at.iops) - 3000) * price(r.region, 'ebs:gp3:iops_month');
          offer(r.arn, now - gp3);
        }
      } else if (r.type === 'aws_ebs_snapshot' && days(at.start_time) > 90) {
        offer(r.arn, Number(at.volume_size) * price(r.region, 'ebs:snapshot:gb_month'));
      } else if (r.type === 'aws_vpc_eip' && !at.association_id) {
        offer(r.arn, price(r.region, 'ec2:public_ipv4:hour') * 730);
      } else if (r.type === 'aws_ec2_instance' && at.instance_state === 'running') {
        const points = cpu.filter((m) => m.arn === r.arn);
        if (
          points.length >= 30 &&
          Math.max(...points.map((p) => Number(p.avg))) < 20 &&
          at.instance_type === 'm5.xlarge'
        ) {
          offer(r.arn, (price(r.region, 'ec2:m5.xlarge:hour') - price(r.region, 'ec2:m5.large:hour')) * 730);
        }
        if (String(at.instance_type).startsWith('t2.')) {
          offer(
            r.arn,
            (price(r.region, `ec2:${at.instance_type}:hour`) -
              price(r.region, `ec2:${String(at.instance_type).replace('t2.', 't3.')}:hour`)) *
              730,
          );
        }
      } else if (
        r.type === 'aws_ec2_application_load_balancer' &&
        (at.target_group_arns as string[]).length === 0
      ) {
        offer(r.arn, price(r.region, 'elb:application:hour') * 730);
      } else if (r.type === 'aws_vpc_nat_gateway') {
        const sent = bytes.filter((m) => m.arn === r.arn).reduce((s, m) => s + Number(m.sum), 0);
        if (sent === 0) offer(r.arn, price(r.region, 'vpc:nat_gateway:hour') * 730);
      } else if (r.type === 'aws_rds_db_instance') {
        const points = conns.filter((m) => m.arn === r.arn);
        if (points.length >= 30 && Math.max(...points.map((p) => Number(p.max))) === 0)
          offer(r.arn, Number(r.monthly_cost));
      }
    }
    const independent = Math.round([...best.values()].reduce((s, v) => s + v, 0) * 100) / 100;
    const total = await savingsTotal(t.db, a.tenant.id);
    expect(total.monthly).toBeCloseTo(independent, 2);
    expect(total.resources).toBe([...best.values()].filter((v) => v > 0).length);
    expect(total.monthly).toBeGreaterThan(500);
  });
});
