import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { PriceBook } from '../pricing';
import { syncInventory } from '../sync';
import { collectWorld, createDemoConnector, tryCommand, type DemoCommandError } from './index';

let t: TestContext;
let a: TestMember;
let book: PriceBook;
const spec = { seed: 42, size: 'small' as const, epoch: '2026-11-01', day: 0, commands: [] };

/** Rows of a query over the tenant's synced inventory. */
async function q<T = Record<string, unknown>>(query: ReturnType<typeof sql>): Promise<T[]> {
  return (await query.execute(t.db)).rows as T[];
}

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  book = await PriceBook.load(t.db);
  const conn = await t.db
    .insertInto('cloud_connections')
    .values({ tenant_id: a.tenant.id, kind: 'demo', config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const connector = createDemoConnector(spec, book);
  for (const inv of [...connector.backfill(), await connector.collect({})]) {
    await syncInventory(t.db, { tenantId: a.tenant.id, connectionId: conn.id, scanId: null }, inv, book);
  }
}, 60_000);
afterAll(() => t?.close());

describe('the demo generator', () => {
  it('is deterministic: the same spec gives the same inventory, byte for byte', () => {
    const digest = (s: typeof spec) =>
      createHash('sha256')
        .update(JSON.stringify(collectWorld(s, book)))
        .digest('hex');
    expect(digest(spec)).toBe(digest(spec));
    expect(digest({ ...spec, day: 5 })).toBe(digest({ ...spec, day: 5 }));
    expect(digest({ ...spec, seed: 43 })).not.toBe(digest(spec));
  });

  it('gives the sizes their scale, with the seeded defects on the same ids in every size', () => {
    const small = collectWorld(spec, book);
    const medium = collectWorld({ ...spec, size: 'medium' }, book);
    expect(small.resources.length).toBeGreaterThan(200);
    expect(small.resources.length).toBeLessThan(1000);
    expect(medium.resources.length).toBeGreaterThan(4000);
    const ids = (inv: typeof small) => new Set(inv.resources.map((r) => r.arn));
    const mediumIds = ids(medium);
    const seededInSmall = small.resources.filter(
      (r) =>
        !r.arn.includes('filler') &&
        ['sg-bastion', 'bastion', 'analytics-01', 'old-jenkins'].includes(String(r.name)),
    );
    expect(seededInSmall.length).toBe(4);
    for (const r of seededInSmall) expect(mediumIds.has(r.arn)).toBe(true);
  });
});

describe('every seeded defect is there, found by a query', () => {
  const T = () => a.tenant.id;

  it('finops: unattached volumes (200 GB gp2, 500 GB io1 at 4000 IOPS, 50 GB gp3)', async () => {
    const rows = await q<{ vt: string; size: number; iops: number }>(sql`
      select attributes->>'volume_type' as vt, (attributes->>'size')::int as size, (attributes->>'iops')::int as iops
      from resources where tenant_id = ${T()} and deleted_at is null and type = 'aws_ebs_volume'
        and jsonb_array_length(attributes->'attachments') = 0 order by size`);
    expect(rows).toEqual([
      { vt: 'gp3', size: 50, iops: 3000 },
      { vt: 'gp2', size: 200, iops: 600 },
      { vt: 'io1', size: 500, iops: 4000 },
    ]);
  });

  it('finops: 12 gp2 volumes from one launch template, and a 1.5 TB gp2', async () => {
    const fromTemplate = await q<{ lt: string; n: number }>(sql`
      select i.attributes->'launch_template'->>'launch_template_name' as lt, count(*)::int as n
      from resources v join resources i on i.tenant_id = v.tenant_id and i.type = 'aws_ec2_instance'
        and i.native_id = v.attributes->'attachments'->0->>'instance_id'
      where v.tenant_id = ${T()} and v.deleted_at is null and v.type = 'aws_ebs_volume' and v.attributes->>'volume_type' = 'gp2'
        and i.attributes->'launch_template' is not null and jsonb_typeof(i.attributes->'launch_template') = 'object'
      group by 1`);
    expect(fromTemplate).toEqual([{ lt: 'lt-batch', n: 12 }]);
    const big =
      await q(sql`select native_id from resources where tenant_id = ${T()} and type = 'aws_ebs_volume'
      and attributes->>'volume_type' = 'gp2' and (attributes->>'size')::int * 3 > 3000 and deleted_at is null`);
    expect(big).toHaveLength(1);
  });

  it('finops: snapshots 120 and 400 days old, two orphaned', async () => {
    const old = await q<{ age: number; orphan: boolean }>(sql`
      select floor(extract(epoch from (s.observed_at - (r.attributes->>'start_time')::timestamptz)) / 86400)::int as age,
        not exists (select 1 from resources v where v.tenant_id = r.tenant_id and v.type = 'aws_ebs_volume' and v.deleted_at is null
          and v.native_id = r.attributes->>'volume_id') as orphan
      from resources r join inventory_snapshots s on s.id = r.snapshot_id
      where r.tenant_id = ${T()} and r.type = 'aws_ebs_snapshot' and r.deleted_at is null
        and (r.attributes->>'start_time')::timestamptz < s.observed_at - interval '90 days'
      order by age, orphan`);
    expect(old.map((o) => o.age)).toEqual(expect.arrayContaining([120, 400]));
    expect(old.filter((o) => o.orphan)).toHaveLength(2);
  });

  it('finops: two unassociated EIPs, an idle m5.xlarge, a t2.medium, an ALB without targets, an idle NAT, an idle RDS, log groups without retention, an instance stopped 45 days with a 100 GB gp2 root', async () => {
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and deleted_at is null and type = 'aws_vpc_eip' and attributes->>'association_id' is null`,
      ),
    ).toHaveLength(2);
    const idle = await q<{ type: string }>(sql`
      select r.attributes->>'instance_type' as type from resources r
      where r.tenant_id = ${T()} and r.type = 'aws_ec2_instance' and r.deleted_at is null
        and (select count(*) from metrics_daily m where m.tenant_id = r.tenant_id and m.arn = r.arn and m.metric = 'CPUUtilization') >= 30
        and (select max(max) from metrics_daily m where m.tenant_id = r.tenant_id and m.arn = r.arn and m.metric = 'CPUUtilization') < 5`);
    expect(idle).toEqual([{ type: 'm5.xlarge' }]);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_ec2_instance' and attributes->>'instance_type' like 't2.%'`,
      ),
    ).toHaveLength(1);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_ec2_application_load_balancer' and jsonb_array_length(attributes->'target_group_arns') = 0`,
      ),
    ).toHaveLength(1);
    const nat =
      await q(sql`select r.native_id from resources r where r.tenant_id = ${T()} and r.type = 'aws_vpc_nat_gateway'
      and (select sum(sum) from metrics_daily m where m.tenant_id = r.tenant_id and m.arn = r.arn and m.metric = 'BytesOutToDestination') = 0`);
    expect(nat).toHaveLength(1);
    const rds = await q<{
      class: string;
    }>(sql`select r.attributes->>'class' as class from resources r where r.tenant_id = ${T()} and r.type = 'aws_rds_db_instance'
      and (select max(max) from metrics_daily m where m.tenant_id = r.tenant_id and m.arn = r.arn and m.metric = 'DatabaseConnections') = 0`);
    expect(rds).toEqual([{ class: 'db.m5.large' }]);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_cloudwatch_log_group' and attributes->>'retention_in_days' is null`,
      ),
    ).toHaveLength(3);
    const stopped = await q<{ days: number; root: string }>(sql`
      select floor(extract(epoch from (s.observed_at - (i.attributes->>'state_transition_time')::timestamptz)) / 86400)::int as days,
        v.attributes->>'volume_type' || ':' || (v.attributes->>'size') as root
      from resources i join inventory_snapshots s on s.id = i.snapshot_id
      join resources v on v.tenant_id = i.tenant_id and v.type = 'aws_ebs_volume' and v.attributes->'attachments'->0->>'instance_id' = i.native_id
      where i.tenant_id = ${T()} and i.type = 'aws_ec2_instance' and i.attributes->>'instance_state' = 'stopped'`);
    expect(stopped).toEqual([{ days: 45, root: 'gp2:100' }]);
  });

  it('security: SSH, all ports and RDP (IPv6, 14 instances) open to the Internet, by range containment', async () => {
    const open = await q<{ name: string; port: number; attached: number }>(sql`
      select sg.attributes->>'group_name' as name, p.port,
        (select count(*)::int from resources i where i.tenant_id = sg.tenant_id and i.type = 'aws_ec2_instance' and i.deleted_at is null
           and i.attributes->'security_groups' @> jsonb_build_array(jsonb_build_object('group_id', sg.native_id))) as attached
      from resources sg cross join jsonb_array_elements(sg.attributes->'rules') rule
      cross join (values (22), (3389)) as p(port)
      where sg.tenant_id = ${T()} and sg.type = 'aws_vpc_security_group' and sg.deleted_at is null and rule->>'type' = 'ingress'
        and (rule->>'cidr_ipv4' = '0.0.0.0/0' or rule->>'cidr_ipv6' = '::/0')
        and (rule->>'ip_protocol' = '-1' or (rule->>'ip_protocol' = 'tcp' and (rule->>'from_port')::int <= p.port and (rule->>'to_port')::int >= p.port))
      order by name, port`);
    expect(open).toEqual([
      { name: 'sg-bastion', port: 22, attached: 1 },
      { name: 'sg-legacy-all', port: 22, attached: 1 },
      { name: 'sg-legacy-all', port: 3389, attached: 1 },
      { name: 'sg-web', port: 3389, attached: 14 },
    ]);
  });

  it('security: a public-by-ACL bucket and a Sensitive bucket with a public policy', async () => {
    const acl =
      await q(sql`select native_id from resources where tenant_id = ${T()} and type = 'aws_s3_bucket'
      and not (attributes->>'block_public_acls')::boolean
      and attributes->'acl'->'grants' @> '[{"grantee": {"uri": "http://acs.amazonaws.com/groups/global/AllUsers"}}]'`);
    expect(acl).toHaveLength(1);
    const policy = await q<{
      tags: Record<string, string>;
    }>(sql`select tags from resources where tenant_id = ${T()} and type = 'aws_s3_bucket'
      and (attributes->>'bucket_policy_is_public')::boolean and attributes->'policy_std'->'Statement' @> '[{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}]'`);
    expect(policy).toHaveLength(1);
    expect(policy[0]!.tags.DataClassification).toBe('Sensitive');
  });

  it('security: unencrypted EBS and RDS, a 200-day key on a console user without MFA, root MFA off in staging, a single-region trail, IMDSv1', async () => {
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_ebs_volume' and not (attributes->>'encrypted')::boolean and deleted_at is null`,
      ),
    ).toHaveLength(1);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_rds_db_instance' and not (attributes->>'storage_encrypted')::boolean`,
      ),
    ).toHaveLength(1);
    const key = await q<{ age: number; user: string }>(sql`
      select floor(extract(epoch from (s.observed_at - (k.attributes->>'create_date')::timestamptz)) / 86400)::int as age, u.native_id as user
      from resources k join inventory_snapshots s on s.id = k.snapshot_id
      join resources u on u.tenant_id = k.tenant_id and u.type = 'aws_iam_user' and u.native_id = k.attributes->>'user_name'
      where k.tenant_id = ${T()} and k.type = 'aws_iam_access_key' and k.attributes->>'status' = 'Active'
        and (u.attributes->>'password_enabled')::boolean and not (u.attributes->>'mfa_enabled')::boolean`);
    expect(key).toEqual([{ age: 200, user: 'bob' }]);
    expect(
      await q<{ name: string }>(
        sql`select name from resources where tenant_id = ${T()} and type = 'aws_account' and not (attributes->>'account_mfa_enabled')::boolean`,
      ),
    ).toEqual([{ name: 'acme-staging' }]);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_cloudtrail_trail' and not (attributes->>'is_multi_region_trail')::boolean`,
      ),
    ).toHaveLength(1);
    const imds = await q<{ name: string }>(
      sql`select name from resources where tenant_id = ${T()} and type = 'aws_ec2_instance' and attributes->'metadata_options'->>'http_tokens' <> 'required' order by name`,
    );
    expect(imds.map((r) => r.name)).toEqual(['bastion', 'legacy-cron-01']);
  });

  it('sre: the prod database (single-AZ, no backups, no deletion protection, public), capacity-1 ASG in one AZ, one NAT for three AZs, cache without failover, DynamoDB without PITR', async () => {
    const db =
      await q(sql`select native_id from resources where tenant_id = ${T()} and type = 'aws_rds_db_instance'
      and not (attributes->>'multi_az')::boolean and (attributes->>'backup_retention_period')::int = 0
      and not (attributes->>'deletion_protection')::boolean and (attributes->>'publicly_accessible')::boolean`);
    expect(db).toEqual([{ native_id: 'prod-payments-db' }]);
    expect(
      await q(sql`select native_id from resources where tenant_id = ${T()} and type = 'aws_ec2_autoscaling_group'
      and (attributes->>'max_size')::int = 1 and (attributes->>'desired_capacity')::int = 1 and jsonb_array_length(attributes->'availability_zones') = 1`),
    ).toEqual([{ native_id: 'job-scheduler-asg' }]);
    const spof = await q<{ nat_az: string; azs: string[] }>(sql`
      select nat.availability_zone as nat_az, array_agg(distinct sn.availability_zone order by sn.availability_zone) as azs
      from resources rt cross join jsonb_array_elements(rt.attributes->'routes') route
      join resources nat on nat.tenant_id = rt.tenant_id and nat.native_id = route->>'nat_gateway_id'
      cross join jsonb_array_elements(rt.attributes->'associations') assoc
      join resources sn on sn.tenant_id = rt.tenant_id and sn.native_id = assoc->>'subnet_id'
      where rt.tenant_id = ${T()} and rt.type = 'aws_vpc_route_table' and route->>'destination_cidr_block' = '0.0.0.0/0'
      group by nat.native_id, nat.availability_zone having count(distinct sn.availability_zone) > 1`);
    expect(spof).toEqual([{ nat_az: 'us-east-1a', azs: ['us-east-1a', 'us-east-1b', 'us-east-1c'] }]);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_elasticache_replication_group' and attributes->>'automatic_failover' <> 'enabled'`,
      ),
    ).toHaveLength(1);
    expect(
      await q(
        sql`select 1 from resources where tenant_id = ${T()} and type = 'aws_dynamodb_table' and attributes->'point_in_time_recovery_description'->>'point_in_time_recovery_status' = 'DISABLED'`,
      ),
    ).toHaveLength(1);
  });

  it('sre: the prod database and checkout ALB have no alarm; one alarm notifies no one', async () => {
    const unmonitored = await q<{ name: string }>(sql`
      select r.name from resources r where r.tenant_id = ${T()} and r.deleted_at is null
        and r.type in ('aws_rds_db_instance', 'aws_ec2_application_load_balancer', 'aws_ec2_autoscaling_group', 'aws_vpc_nat_gateway')
        and not exists (select 1 from resources al cross join jsonb_array_elements(al.attributes->'dimensions') d
          where al.tenant_id = r.tenant_id and al.type = 'aws_cloudwatch_alarm' and al.deleted_at is null
            and d->>'value' in (r.native_id, r.name, r.attributes->>'db_instance_identifier'))
        and (r.type <> 'aws_ec2_application_load_balancer' or jsonb_array_length(r.attributes->'target_group_arns') > 0)
      order by r.name`);
    expect(unmonitored).toEqual([{ name: 'checkout-alb' }, { name: 'prod-payments-db' }]);
    expect(
      await q<{
        name: string;
      }>(sql`select name from resources where tenant_id = ${T()} and type = 'aws_cloudwatch_alarm'
      and jsonb_array_length(attributes->'alarm_actions') = 0 and jsonb_array_length(attributes->'ok_actions') = 0
      and jsonb_array_length(attributes->'insufficient_data_actions') = 0`),
    ).toEqual([{ name: 'high-cpu-batch' }]);
  });

  it('the toxic path: an Internet-exposed instance whose role reads the Sensitive bucket', async () => {
    const path = await q<{ instance: string; bucket: string }>(sql`
      select i.name as instance, b.native_id as bucket
      from resources i
      join resource_edges sge on sge.tenant_id = i.tenant_id and sge.from_arn = i.arn and sge.kind = 'protected-by'
      join resources sg on sg.tenant_id = i.tenant_id and sg.arn = sge.to_arn
      join resource_edges re on re.tenant_id = i.tenant_id and re.from_arn = i.arn and re.kind = 'uses-role'
      join resources role on role.tenant_id = i.tenant_id and role.arn = re.to_arn
      cross join jsonb_array_elements(role.attributes->'inline_policies') pol
      cross join jsonb_array_elements(pol->'policy'->'Statement') st
      join resources b on b.tenant_id = i.tenant_id and b.type = 'aws_s3_bucket'
        and b.tags->>'DataClassification' = 'Sensitive' and st->'Resource' @> to_jsonb(b.arn || '/*')
      where i.tenant_id = ${T()} and i.type = 'aws_ec2_instance' and i.attributes->>'public_ip_address' is not null
        and st->'Action' @> '"s3:GetObject"'
        and exists (select 1 from jsonb_array_elements(sg.attributes->'rules') r where r->>'type' = 'ingress' and r->>'cidr_ipv4' = '0.0.0.0/0'
          and (r->>'from_port')::int <= 22 and (r->>'to_port')::int >= 22)`);
    expect(path).toHaveLength(1);
    expect(path[0]!.instance).toBe('bastion');
  });

  it('drift between snapshots, attributed by CloudTrail', async () => {
    const drift = await q<{ change: string; fields: string[]; name: string | null }>(sql`
      select h.change, h.changed_fields as fields, coalesce(h.after->>'name', h.before->>'name') as name
      from resource_history h where h.tenant_id = ${T()} and h.change <> 'created' order by h.observed_at, name`);
    expect(drift).toEqual(
      expect.arrayContaining([
        { change: 'deleted', fields: [], name: 'tmp-migration' },
        {
          change: 'updated',
          fields: ['attributes.instance_type', 'size_value'],
          name: 'reporting-worker-01',
        },
        { change: 'updated', fields: ['attributes.backup_retention_period'], name: 'prod-payments-db' },
        { change: 'updated', fields: ['attributes.rules'], name: 'sg-web' },
      ]),
    );
    const created =
      await q(sql`select 1 from resource_history h where h.tenant_id = ${T()} and h.change = 'created' and h.type = 'aws_vpc_eip'
      and h.observed_at > (select min(observed_at) from inventory_snapshots where tenant_id = ${T()})`);
    expect(created).toHaveLength(1);
    const who = await q<{ actor: string; ip: string }>(
      sql`select actor, source_ip as ip from inventory_events where tenant_id = ${T()} and name = 'AuthorizeSecurityGroupIngress'`,
    );
    expect(who).toEqual([{ actor: expect.stringMatching(/:user\/alice$/), ip: '203.0.113.24' }]);
    const rds = await q<{
      before: number;
      after: number;
    }>(sql`select (before->'attributes'->>'backup_retention_period')::int as before, (after->'attributes'->>'backup_retention_period')::int as after
      from resource_history where tenant_id = ${T()} and arn like '%:db:prod-payments-db' and change = 'updated'`);
    expect(rds).toEqual([{ before: 7, after: 0 }]);
  });

  it('the incident storyline: a spike on the last day, ALB 5xx, five duplicate alerts, a recurrence from day -7', async () => {
    const spike = await q<{ metric: string; max: number }>(
      sql`select metric, max from metrics_daily where tenant_id = ${T()} and arn like '%:db:prod-payments-db' and day = '2026-10-31' order by metric`,
    );
    expect(spike.find((s) => s.metric === 'CPUUtilization')!.max).toBeGreaterThan(95);
    expect(spike.find((s) => s.metric === 'DatabaseConnections')!.max).toBeGreaterThan(450);
    const fivexx = await q<{ sum: number }>(
      sql`select sum from metrics_daily where tenant_id = ${T()} and metric = 'HTTPCode_ELB_5XX_Count' and arn like '%/checkout-alb/%' and day = '2026-10-31'`,
    );
    expect(fivexx[0]!.sum).toBeGreaterThan(1000);
    const dupes = await q<{ fingerprint: string; n: number; first: string }>(sql`
      select fingerprint, count(*)::int as n, min(at)::text as first from inventory_events
      where tenant_id = ${T()} and kind = 'alert' and at >= '2026-10-31' group by fingerprint order by n desc`);
    expect(dupes[0]!.n).toBe(5);
    const recurrence = await q(
      sql`select 1 from inventory_events where tenant_id = ${T()} and kind = 'alert' and fingerprint = ${dupes[0]!.fingerprint} and at < '2026-10-30'`,
    );
    expect(recurrence).toHaveLength(1);
  });

  it('monthly cost and console links for the resources', async () => {
    const vol = await q<{
      monthly_cost: number;
      console_url: string;
    }>(sql`select monthly_cost, console_url from resources where tenant_id = ${T()}
      and type = 'aws_ebs_volume' and attributes->>'volume_type' = 'io1'`);
    // 500 GB × $0.125 + 4000 IOPS × $0.065 = $322.50
    expect(vol[0]!.monthly_cost).toBe(322.5);
    expect(vol[0]!.console_url).toMatch(
      /^https:\/\/us-east-1\.console\.aws\.amazon\.com\/ec2\/home\?region=us-east-1#VolumeDetails:volumeId=vol-[0-9a-f]{17}$/,
    );
    const nat = await q<{ monthly_cost: number }>(
      sql`select monthly_cost from resources where tenant_id = ${T()} and type = 'aws_vpc_nat_gateway' limit 1`,
    );
    expect(nat[0]!.monthly_cost).toBe(32.85);
  });
});

describe('demo exec', () => {
  it('refuses unsupported, malformed and invalid commands, changing nothing', () => {
    for (const [command, pattern] of [
      ['aws ec2 run-instances --image-id ami-1', /does not support "aws ec2 run-instances"/],
      ['rm -rf /', /Expected an AWS CLI command/],
      ['aws ec2 delete-volume --volume-id vol-1 | cat', /Only plain AWS CLI commands/],
      ['aws ec2 delete-volume', /--volume-id takes exactly one value/],
      ['aws ec2 delete-volume --volume-id vol-doesnotexist', /InvalidVolume.NotFound|does not exist/],
    ] as const) {
      expect(() => tryCommand(spec, command)).toThrow(pattern);
    }
    const analytics = collectWorld(spec, book).resources.find((r) => r.name === 'analytics-01')!;
    const data = collectWorld(spec, book).resources.find(
      (r) =>
        r.type === 'aws_ebs_volume' &&
        (r.attributes.attachments as Array<{ instance_id: string; device: string }>).some(
          (x) => x.instance_id === analytics.nativeId && x.device === '/dev/sdf',
        ),
    )!;
    expect(() => tryCommand(spec, `aws ec2 delete-volume --volume-id ${data.nativeId}`)).toThrow(
      /is currently attached/,
    );
  });

  it("answers a command naming a missing resource with AWS's error code for it", () => {
    const world = collectWorld(spec, book).resources;
    const routeTable = world.find((r) => r.type === 'aws_vpc_route_table')!.nativeId;
    const group = world.find((r) => r.type === 'aws_ec2_autoscaling_group')!.name!;
    const codeOf = (command: string) => {
      try {
        tryCommand(spec, command);
      } catch (e) {
        return (e as DemoCommandError).code;
      }
      return 'no error';
    };
    expect(
      [
        'aws ec2 stop-instances --instance-ids i-0000000000000dead',
        'aws ec2 delete-nat-gateway --nat-gateway-id nat-0000000000000dead',
        `aws ec2 create-route --route-table-id ${routeTable} --destination-cidr-block 10.99.0.0/16 --nat-gateway-id nat-0000000000000dead`,
        `aws autoscaling update-auto-scaling-group --auto-scaling-group-name ${group} --vpc-zone-identifier subnet-0000000000000dead`,
        'aws rds stop-db-instance --db-instance-identifier no-such-db',
        'aws s3api delete-bucket-policy --bucket no-such-bucket',
      ].map(codeOf),
    ).toEqual([
      'InvalidInstanceID.NotFound',
      'NatGatewayNotFound',
      'InvalidNatGatewayID.NotFound',
      'ValidationError',
      'DBInstanceNotFound',
      'NoSuchBucket',
    ]);
  });

  it('applies what the real command would change, and only that', () => {
    const before = collectWorld(spec, book);
    const orphan = before.resources.find(
      (r) => r.type === 'aws_ebs_volume' && r.attributes.volume_type === 'gp2' && r.attributes.size === 200,
    )!;
    const commands = [{ day: 0, command: `aws ec2 delete-volume --volume-id ${orphan.nativeId}` }];
    const after = collectWorld({ ...spec, commands }, book);
    const arns = (inv: typeof before) => inv.resources.map((r) => r.arn).sort();
    expect(arns(after)).toEqual(arns(before).filter((arn) => arn !== orphan.arn));
    const changed = after.resources.filter(
      (r) => JSON.stringify(r) !== JSON.stringify(before.resources.find((b) => b.arn === r.arn)),
    );
    expect(changed).toEqual([]);
    const event = after.events.find((e) => e.name === 'DeleteVolume' && e.arns.includes(orphan.arn));
    expect(event?.actor).toMatch(/opsi-demo-operator/);
  });

  it('modifies a security group, a database and a volume as AWS would', () => {
    const sg = collectWorld(spec, book).resources.find((r) => r.name === 'sg-bastion')!;
    const commands = [
      `aws ec2 revoke-security-group-ingress --group-id ${sg.nativeId} --protocol tcp --port 22 --cidr 0.0.0.0/0`,
      'aws rds modify-db-instance --db-instance-identifier prod-payments-db --multi-az --backup-retention-period 7 --deletion-protection --no-publicly-accessible --apply-immediately',
    ].map((command) => ({ day: 0, command }));
    const after = collectWorld({ ...spec, commands }, book);
    const sgAfter = after.resources.find((r) => r.arn === sg.arn)!;
    expect((sgAfter.attributes.rules as Array<{ type: string }>).filter((r) => r.type === 'ingress')).toEqual(
      [],
    );
    const db = after.resources.find((r) => r.nativeId === 'prod-payments-db')!;
    expect(db.attributes).toMatchObject({
      multi_az: true,
      backup_retention_period: 7,
      deletion_protection: true,
      publicly_accessible: false,
    });
    expect(() =>
      tryCommand(
        { ...spec, commands },
        `aws ec2 revoke-security-group-ingress --group-id ${sg.nativeId} --protocol tcp --port 22 --cidr 0.0.0.0/0`,
      ),
    ).toThrow(/InvalidPermission.NotFound|does not exist/);
  });
});
