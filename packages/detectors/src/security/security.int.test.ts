import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import type { InventoryResource } from '@opsi/inventory';
import type { Detector } from '../detector';
import { fingerprintOf, runDetectors } from '../runner';
import { runSandboxed } from '../sandbox';
import { DEMO_SPEC, syncDemo } from '../testing';
import { SECURITY_DETECTORS } from './index';
import { sgAllPortsOpen } from './sg-all-ports-open';
import { sgRdpOpen } from './sg-rdp-open';
import { sgSshOpen } from './sg-ssh-open';
import { toxicExposedInstanceSensitiveData } from './toxic-exposed-instance-sensitive-data';

let t: TestContext;
let small: TestMember;
let medium: TestMember;
let world: InventoryResource[];

beforeAll(async () => {
  t = await createTestContext();
  small = await createTenantWithUser(t);
  medium = await createTenantWithUser(t);
  world = (await syncDemo(t.db, small.tenant.id)).world.resources;
  await syncDemo(t.db, medium.tenant.id, { ...DEMO_SPEC, size: 'medium' });
}, 240_000);
afterAll(() => t?.close());

interface Found {
  id: string;
  check: string;
  severity: string;
  status: string;
  fingerprint: string;
  /** The root resource's name (native id when it has none). */
  root: string;
  rootArn: string;
  resources: Array<{ arn: string; type: string; name: string | null; native_id: string }>;
}

/** The tenant's findings, each with its root resource (the one its fingerprint was made from). */
async function findingsOf(tenantId: string): Promise<Found[]> {
  const findings = await t.db
    .selectFrom('findings')
    .select(['id', 'check_id', 'severity', 'status', 'fingerprint'])
    .where('tenant_id', '=', tenantId)
    .execute();
  const resources = await t.db
    .selectFrom('finding_resources')
    .select(['finding_id', 'arn', 'type', 'name', 'native_id'])
    .where('tenant_id', '=', tenantId)
    .execute();
  return findings.map((f) => {
    const mine = resources.filter((r) => r.finding_id === f.id);
    const root = mine.find((r) => fingerprintOf(f.check_id, r.arn) === f.fingerprint);
    return {
      id: f.id,
      check: f.check_id,
      severity: f.severity,
      status: f.status,
      fingerprint: f.fingerprint,
      root: root ? (root.name ?? root.native_id) : '(no root resource)',
      rootArn: root?.arn ?? '',
      resources: mine.map(({ arn, type, name, native_id }) => ({ arn, type, name, native_id })),
    };
  });
}

const byCheckAndRoot = (a: Found, b: Found) => a.check.localeCompare(b.check) || a.root.localeCompare(b.root);

/** Instances in the demo world that use the security group named `name`. */
function instancesUsing(name: string): string[] {
  const sg = world.find((r) => r.type === 'aws_vpc_security_group' && r.name === name)!;
  return world
    .filter(
      (r) =>
        r.type === 'aws_ec2_instance' &&
        (r.attributes.security_groups as Array<{ group_id: string }>).some((g) => g.group_id === sg.nativeId),
    )
    .map((r) => r.arn)
    .sort();
}

describe('the security detectors on the seeded demo (seed 42, small, day 0)', () => {
  let found: Found[];

  it('find exactly the seeded defects, once each, with no query failing', async () => {
    const summary = await runDetectors(t.db, small.tenant.id, SECURITY_DETECTORS);
    expect(summary).toMatchObject({ detectors: 14, failedQueries: 0, findings: 16, newFindings: 16 });
    found = (await findingsOf(small.tenant.id)).sort(byCheckAndRoot);
    expect(found.map((f) => [f.check, f.root])).toEqual([
      ['security.cloudtrail_no_multi_region', 'acme-staging'],
      ['security.ebs_unencrypted', 'analytics-data'],
      ['security.ec2_imdsv1', 'bastion'],
      ['security.ec2_imdsv1', 'legacy-cron-01'],
      ['security.iam_access_key_old', 'bob'],
      ['security.iam_admin_star', 'ci-deployer'],
      ['security.iam_console_user_no_mfa', 'bob'],
      ['security.rds_public', 'prod-payments-db'],
      ['security.rds_unencrypted', 'legacy-reporting-db'],
      ['security.root_mfa_disabled', 'acme-staging'],
      ['security.s3_public', expect.stringMatching(/^acme-customer-exports-[0-9a-f]{6}$/)],
      ['security.s3_public', expect.stringMatching(/^acme-public-assets-[0-9a-f]{6}$/)],
      ['security.sg_all_ports_open', 'sg-legacy-all'],
      ['security.sg_rdp_open', 'sg-web'],
      ['security.sg_ssh_open', 'sg-bastion'],
      ['security.toxic_exposed_instance_sensitive_data', 'bastion'],
    ]);
    // Each is its own open finding: none was clustered into another check's group.
    expect(new Set(found.map((f) => f.status))).toEqual(new Set(['open']));
    // The access key finding is about bob's key, the console finding about bob the user.
    expect(found.find((f) => f.check === 'security.iam_access_key_old')!.rootArn).toMatch(
      /:user\/bob\/accesskey\/AKIA/,
    );
    expect(found.find((f) => f.check === 'security.cloudtrail_no_multi_region')!.rootArn).toMatch(
      /^arn:aws:iam::\d{12}:root$/,
    );
  });

  it('grade severity by what is at stake', () => {
    const severity = (check: string, root: string | RegExp) =>
      found.find((f) => f.check === `security.${check}` && f.root.match(root))?.severity;
    expect(severity('toxic_exposed_instance_sensitive_data', 'bastion')).toBe('critical');
    expect(severity('s3_public', /^acme-customer-exports-/)).toBe('critical'); // DataClassification=Sensitive
    expect(severity('s3_public', /^acme-public-assets-/)).toBe('high');
    expect(severity('root_mfa_disabled', 'acme-staging')).toBe('critical');
    // An open group with an instance reachable on a public IP is critical; sg-web's 14 are private.
    expect(severity('sg_ssh_open', 'sg-bastion')).toBe('critical');
    expect(severity('sg_all_ports_open', 'sg-legacy-all')).toBe('critical');
    expect(severity('sg_rdp_open', 'sg-web')).toBe('high');
    // The payments DB is public AND its group admits 3306 from 0.0.0.0/0.
    expect(severity('rds_public', 'prod-payments-db')).toBe('critical');
    // IMDSv1 with a public IP and an instance profile (bastion) vs public IP without a role (legacy).
    expect(severity('ec2_imdsv1', 'bastion')).toBe('high');
    expect(severity('ec2_imdsv1', 'legacy-cron-01')).toBe('medium');
    expect(severity('rds_unencrypted', 'legacy-reporting-db')).toBe('medium');
  });

  it('make one finding per security group, about the group and exactly the instances using it', () => {
    for (const [check, sg, count] of [
      ['security.sg_ssh_open', 'sg-bastion', 1],
      ['security.sg_rdp_open', 'sg-web', 14],
      ['security.sg_all_ports_open', 'sg-legacy-all', 1],
    ] as const) {
      const f = found.find((x) => x.check === check)!;
      const sgArn = world.find((r) => r.type === 'aws_vpc_security_group' && r.name === sg)!.arn;
      expect(f.rootArn).toBe(sgArn);
      const instances = instancesUsing(sg);
      expect(instances).toHaveLength(count);
      expect(f.resources.map((r) => r.arn).sort()).toEqual([sgArn, ...instances].sort());
    }
    const web = found.find((x) => x.check === 'security.sg_rdp_open')!;
    expect(
      web.resources
        .filter((r) => r.type === 'aws_ec2_instance')
        .map((r) => r.name)
        .sort(),
    ).toEqual(Array.from({ length: 14 }, (_, i) => `web-${String(i + 1).padStart(2, '0')}`));
  });

  it('name the whole toxic path: instance, security group, role and Sensitive bucket', () => {
    const toxic = found.find((x) => x.check === 'security.toxic_exposed_instance_sensitive_data')!;
    expect(toxic.resources.map((r) => [r.type, r.name])).toEqual([
      ['aws_ec2_instance', 'bastion'],
      ['aws_vpc_security_group', 'sg-bastion'],
      ['aws_iam_role', 'bastion-role'],
      ['aws_s3_bucket', expect.stringMatching(/^acme-customer-exports-/)],
    ]);
    const bucket = world.find((r) => r.arn === toxic.resources[3]!.arn)!;
    expect(bucket.tags.DataClassification).toBe('Sensitive');
  });

  it('record a 3-step trail whose evidence query re-runs in the sandbox and still returns the rows', async () => {
    for (const f of found) {
      const steps = await t.db
        .selectFrom('finding_audit_steps')
        .select(['seq', 'step_kind', 'status', 'query_sql', 'row_count', 'rerunnable'])
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
      const detector = SECURITY_DETECTORS.find((d) => d.id === f.check)!;
      expect(steps[0]!.query_sql).toBe(detector.sql);
      expect(steps[1]!.query_sql).toContain('detector_rows');
      expect(steps[1]!.row_count, f.check).toBeGreaterThan(0);
      const rerun = await runSandboxed(t.db, small.tenant.id, steps[1]!.query_sql!);
      expect(rerun.rowCount, f.check).toBe(steps[1]!.row_count);
      expect(rerun.rows.map((r) => r.arn)).toContain(f.rootArn);
      // The detector queries name no tenant: row-level security scopes them.
      expect(steps[0]!.query_sql).not.toMatch(/tenant/i);
    }
  });

  it('report the same, and nothing more, on the medium environment (~5,000 clean resources besides)', async () => {
    const summary = await runDetectors(t.db, medium.tenant.id, SECURITY_DETECTORS);
    expect(summary).toMatchObject({ failedQueries: 0, findings: 16 });
    const count = await t.db
      .selectFrom('resources')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('tenant_id', '=', medium.tenant.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBeGreaterThan(4500);
    const shape = (fs: Found[]) =>
      fs
        .map((f) => ({
          fingerprint: f.fingerprint,
          check: f.check,
          severity: f.severity,
          resources: f.resources.map((r) => r.arn).sort(),
        }))
        .sort((a, b) => a.fingerprint.localeCompare(b.fingerprint));
    expect(shape(await findingsOf(medium.tenant.id))).toEqual(shape(found));
  });
});

describe('port containment and protocol semantics, on hand-made security groups', () => {
  let tenant: TestMember;
  const account = '111111111111';
  const region = 'us-east-1';

  type Rule = {
    type?: 'ingress' | 'egress';
    ip_protocol: string;
    from_port: number | null;
    to_port: number | null;
    cidr_ipv4?: string;
    cidr_ipv6?: string;
  };

  /** Hand-made groups, each attached to one instance of its own unless said otherwise. */
  const GROUPS: Array<{
    name: string;
    rules: Rule[];
    instance?: 'running' | 'terminated' | 'deleted' | null;
  }> = [
    {
      name: 'tcp-20-25',
      rules: [{ ip_protocol: 'tcp', from_port: 20, to_port: 25, cidr_ipv4: '0.0.0.0/0' }],
    },
    { name: 'tcp-0-21', rules: [{ ip_protocol: 'tcp', from_port: 0, to_port: 21, cidr_ipv4: '0.0.0.0/0' }] },
    {
      name: 'tcp-23-65535',
      rules: [{ ip_protocol: 'tcp', from_port: 23, to_port: 65535, cidr_ipv4: '0.0.0.0/0' }],
    },
    { name: 'proto-6-22', rules: [{ ip_protocol: '6', from_port: 22, to_port: 22, cidr_ipv6: '::/0' }] },
    { name: 'udp-22', rules: [{ ip_protocol: 'udp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' }] },
    { name: 'udp-3389', rules: [{ ip_protocol: 'udp', from_port: 3389, to_port: 3389, cidr_ipv6: '::/0' }] },
    {
      name: 'all-traffic-v6',
      rules: [{ ip_protocol: '-1', from_port: null, to_port: null, cidr_ipv6: '::/0' }],
    },
    {
      name: 'udp-0-65535',
      rules: [{ ip_protocol: 'udp', from_port: 0, to_port: 65535, cidr_ipv4: '0.0.0.0/0' }],
    },
    {
      name: 'ssh-and-all',
      rules: [
        { ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' },
        { ip_protocol: '-1', from_port: null, to_port: null, cidr_ipv4: '0.0.0.0/0' },
      ],
    },
    {
      name: 'private-22',
      rules: [{ ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '10.0.0.0/8' }],
    },
    {
      name: 'egress-22',
      rules: [{ type: 'egress', ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' }],
    },
    { name: 'icmp', rules: [{ ip_protocol: 'icmp', from_port: -1, to_port: -1, cidr_ipv4: '0.0.0.0/0' }] },
    {
      name: 'unused-22',
      rules: [{ ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' }],
      instance: null,
    },
    {
      name: 'terminated-22',
      rules: [{ ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' }],
      instance: 'terminated',
    },
    {
      name: 'deleted-22',
      rules: [{ ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' }],
      instance: 'deleted',
    },
  ];

  beforeAll(async () => {
    tenant = await createTenantWithUser(t);
    const conn = await t.db
      .insertInto('cloud_connections')
      .values({ tenant_id: tenant.tenant.id, kind: 'demo', config: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const now = new Date('2026-11-01T00:00:00Z');
    const snapshot = randomUUID();
    const put = async (
      type: string,
      arn: string,
      nativeId: string,
      attributes: Record<string, unknown>,
      o: { name?: string; tags?: Record<string, string>; deleted?: boolean; region?: string } = {},
    ) =>
      t.db
        .insertInto('resources')
        .values({
          tenant_id: tenant.tenant.id,
          connection_id: conn.id,
          arn,
          type,
          native_id: nativeId,
          account_id: account,
          region: o.region ?? region,
          name: o.name ?? nativeId,
          tags: JSON.stringify(o.tags ?? {}),
          attributes: JSON.stringify(attributes),
          content_hash: 'test',
          first_seen: now,
          last_seen: now,
          snapshot_id: snapshot,
          deleted_at: o.deleted ? now : null,
        })
        .execute();
    const edge = (from: string, to: string, kind: string) =>
      t.db
        .insertInto('resource_edges')
        .values({
          tenant_id: tenant.tenant.id,
          from_arn: from,
          to_arn: to,
          kind,
          source: 'config',
          confidence: 1,
          first_seen: now,
          last_seen: now,
          snapshot_id: snapshot,
        })
        .execute();
    const sgArn = (id: string) => `arn:aws:ec2:${region}:${account}:security-group/${id}`;
    const instance = async (
      id: string,
      groups: string[],
      o: { state?: string; deleted?: boolean; publicIp?: string | null; role?: string } = {},
    ) => {
      const arn = `arn:aws:ec2:${region}:${account}:instance/${id}`;
      await put(
        'aws_ec2_instance',
        arn,
        id,
        {
          instance_id: id,
          instance_state: o.state ?? 'running',
          security_groups: groups.map((g) => ({ group_id: g })),
          public_ip_address: o.publicIp ?? null,
          iam_instance_profile_arn: o.role ? `arn:aws:iam::${account}:instance-profile/${o.role}` : null,
          metadata_options: { http_tokens: 'required', http_endpoint: 'enabled' },
        },
        { deleted: o.deleted ?? false },
      );
      if (o.role) await edge(arn, `arn:aws:iam::${account}:role/${o.role}`, 'uses-role');
    };

    for (const g of GROUPS) {
      const id = `sg-${g.name}`;
      await put(
        'aws_vpc_security_group',
        sgArn(id),
        id,
        {
          group_id: id,
          group_name: g.name,
          vpc_id: 'vpc-test',
          rules: g.rules.map((r) => ({
            type: r.type ?? 'ingress',
            ip_protocol: r.ip_protocol,
            from_port: r.from_port,
            to_port: r.to_port,
            cidr_ipv4: r.cidr_ipv4 ?? null,
            cidr_ipv6: r.cidr_ipv6 ?? null,
            referenced_group_id: null,
          })),
        },
        { name: g.name },
      );
      const state = g.instance === undefined ? 'running' : g.instance;
      if (state === null) continue;
      await instance(`i-${g.name}`, [id], {
        state: state === 'deleted' ? 'running' : state,
        deleted: state === 'deleted',
      });
    }

    // Toxic-path variants, all behind the SSH-open tcp-20-25 group, and a Sensitive bucket.
    await put(
      'aws_s3_bucket',
      'arn:aws:s3:::secrets-bucket',
      'secrets-bucket',
      { name: 'secrets-bucket', bucket_policy_is_public: false },
      { tags: { DataClassification: 'Sensitive' } },
    );
    await put('aws_s3_bucket', 'arn:aws:s3:::plain-bucket', 'plain-bucket', { name: 'plain-bucket' });
    const role = (name: string, statement: Record<string, unknown>) =>
      put(
        'aws_iam_role',
        `arn:aws:iam::${account}:role/${name}`,
        name,
        { name, inline_policies: [{ policy_name: `${name}-policy`, policy: { Statement: statement } }] },
        { region: 'global' },
      );
    // Wildcards: s3:Get* on every resource reads every object.
    await role('getstar-everything', { Effect: 'Allow', Action: 's3:Get*', Resource: '*' });
    // A prefix of the bucket's objects is still its objects.
    await role('getobject-prefix', {
      Effect: 'Allow',
      Action: ['s3:GetObject'],
      Resource: ['arn:aws:s3:::secrets-bucket/exports/*'],
    });
    // ListBucket on the bucket ARN reads no object.
    await role('list-only', {
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: 'arn:aws:s3:::secrets-bucket',
    });
    // A Deny is not a grant.
    await role('deny-only', { Effect: 'Deny', Action: '*', Resource: '*' });
    // Reads only the plain bucket.
    await role('plain-reader', { Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::plain-bucket/*' });
    await instance('i-toxic-getstar', ['sg-tcp-20-25'], { publicIp: '54.0.0.1', role: 'getstar-everything' });
    await instance('i-toxic-prefix', ['sg-all-traffic-v6'], {
      publicIp: '54.0.0.2',
      role: 'getobject-prefix',
    });
    await instance('i-list-only', ['sg-tcp-20-25'], { publicIp: '54.0.0.3', role: 'list-only' });
    await instance('i-deny-only', ['sg-tcp-20-25'], { publicIp: '54.0.0.4', role: 'deny-only' });
    await instance('i-plain-reader', ['sg-tcp-20-25'], { publicIp: '54.0.0.5', role: 'plain-reader' });
    await instance('i-private-getstar', ['sg-tcp-20-25'], { role: 'getstar-everything' });
    // RDP open but not SSH: not the toxic path's way in.
    await instance('i-rdp-getstar', ['sg-udp-3389'], { publicIp: '54.0.0.6', role: 'getstar-everything' });
  });

  async function roots(detector: Detector): Promise<string[]> {
    const result = await runSandboxed(t.db, tenant.tenant.id, detector.sql);
    return detector
      .findings(result.rows as never)
      .map((f) => f.rootKey.split('/').pop()!)
      .sort();
  }

  // Decision: SSH counts tcp (and protocol -1) only — SSH has no UDP transport and Prowler's check is
  // tcp_port_22; RDP counts tcp and udp — RDP 8+ also listens on UDP 3389, as Steampipe's
  // remote-administration control counts.
  it('SSH: a range containing 22 counts (20–25, tcp as protocol 6, ::/0); ranges ending before or starting after 22, UDP, private, egress and unused groups do not', async () => {
    expect(await roots(sgSshOpen)).toEqual(['sg-proto-6-22', 'sg-tcp-20-25']);
  });

  it('RDP: 23–65535 contains 3389, UDP 3389 counts; groups reported as all-ports are skipped', async () => {
    expect(await roots(sgRdpOpen)).toEqual(['sg-tcp-23-65535', 'sg-udp-3389']);
  });

  it('all ports: protocol -1 (IPv4 or IPv6) or the full 0–65535 range of tcp/udp', async () => {
    expect(await roots(sgAllPortsOpen)).toEqual(['sg-all-traffic-v6', 'sg-ssh-and-all', 'sg-udp-0-65535']);
  });

  it('the toxic path follows IAM wildcards and object prefixes, not ListBucket, Deny, other buckets, private hosts or RDP', async () => {
    expect(await roots(toxicExposedInstanceSensitiveData)).toEqual(['i-toxic-getstar', 'i-toxic-prefix']);
  });
});

describe('security detectors, over details the AWS connector could not read', () => {
  it('conclude nothing from a denied read, and no query fails on its nulls', async () => {
    const m = await createTenantWithUser(t);
    await syncDemo(t.db, m.tenant.id);
    const tenant = m.tenant.id;
    const set = async (
      type: string,
      where: (a: Record<string, unknown>, name: string) => boolean,
      patch: object,
    ) => {
      const rows = await t.db
        .selectFrom('resources')
        .select(['arn', 'name', 'attributes'])
        .where('tenant_id', '=', tenant)
        .where('type', '=', type)
        .execute();
      for (const r of rows.filter((r) => where(r.attributes as Record<string, unknown>, r.name ?? '')))
        await t.db
          .updateTable('resources')
          .set({ attributes: JSON.stringify({ ...(r.attributes as object), ...patch }) })
          .where('tenant_id', '=', tenant)
          .where('arn', '=', r.arn)
          .execute();
      return rows.length;
    };
    // What the connector records when ListMFADevices is denied for bob, and the roles' inline
    // policies may not be listed: unknown (null), named in `unreadable`.
    await set('aws_iam_user', (_a, name) => name === 'bob', {
      // The demo writes mfa_enabled; the connector writes mfa_active only.
      mfa_enabled: null,
      mfa_active: null,
      mfa_devices: null,
      unreadable: ['ListMFADevices'],
    });
    expect(
      await set('aws_iam_role', () => true, { inline_policies: null, unreadable: ['ListRolePolicies'] }),
    ).toBeGreaterThan(0);
    const summary = await runDetectors(t.db, tenant, SECURITY_DETECTORS);
    expect(summary.failedQueries).toBe(0);
    const found = await findingsOf(tenant);
    expect(
      found.filter((f) => f.check === 'security.iam_console_user_no_mfa').map((f) => f.root),
    ).not.toContain('bob');
  });
});
