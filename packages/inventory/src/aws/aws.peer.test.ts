import { startAwsPeer, type AwsPeer, type PeerFault } from '@opsi/test-support/aws-peer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CollectedInventory, InventoryResource } from '../model';
import { AwsCollectError, createAwsConnector, type AwsConnectorOptions } from './index';

/**
 * The connector through the real SDK v3 clients (their serializers, deserializers, paginators and
 * retry strategy) against the local AWS peer, which answers AWS's published example responses in each
 * service's wire protocol (test/support/aws-recordings, a small us-west-2 account).
 */

const ACCOUNT = '123456789012';
const REGION = 'us-west-2';
let peer: AwsPeer;

beforeEach(async () => {
  peer = await startAwsPeer();
});
afterEach(async () => {
  await peer.close();
});

function collect(options: Partial<AwsConnectorOptions> = {}): Promise<CollectedInventory> {
  return createAwsConnector({
    regions: [REGION],
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
    clientFactory: (Ctor, config) => new Ctor({ ...config, endpoint: peer.url } as typeof config),
    ...options,
  }).collect({});
}

function index(inv: CollectedInventory) {
  const byArn = new Map(inv.resources.map((r) => [r.arn, r]));
  const get = (arn: string): InventoryResource => {
    const r = byArn.get(arn);
    if (!r) throw new Error(`no ${arn} among ${[...byArn.keys()].join(' ')}`);
    return r;
  };
  const ofType = (type: string) => inv.resources.filter((r) => r.type === type);
  const edge = (from: string, to: string, kind: string) =>
    inv.edges.some((e) => e.from === from && e.to === to && e.kind === kind);
  return { get, ofType, edge, has: (arn: string) => byArn.has(arn) };
}

const ec2 = (kind: string, id: string) => `arn:aws:ec2:${REGION}:${ACCOUNT}:${kind}/${id}`;

/** Every service's error to a denied call, in its own shape and status. */
const DENIED: Record<string, Omit<PeerFault, 'service'>> = {
  iam: { code: 'AccessDenied', status: 403 },
  s3: { code: 'AccessDenied', status: 403 },
  ec2: { code: 'UnauthorizedOperation', status: 403 },
  monitoring: { code: 'AccessDeniedException', status: 400 },
  cloudtrail: { code: 'AccessDeniedException', status: 400 },
};

// Each test scans the whole recorded account: 1-3 s alone, up to 15 s on a loaded machine.
describe('AWS connector against recorded AWS answers', { timeout: 30_000 }, () => {
  it('reads the account through every service, every page of every paginated listing', async () => {
    const inv = await collect();
    const { get, ofType, edge, has } = index(inv);
    expect(inv.warnings).toEqual([]);
    expect(inv.unread).toEqual([]);
    expect(inv.retries).toBe(0);
    expect(peer.requests.filter((r) => r.status >= 500)).toEqual([]);

    // Pages: EC2 nextToken, IAM Marker/IsTruncated, S3 ContinuationToken, RDS Marker, DynamoDB
    // LastEvaluatedTableName: the second page is asked for with the first page's token.
    const pages = (service: string, action: string) =>
      peer.requests.filter((r) => r.service === service && r.action === action).map((r) => r.token);
    expect(pages('ec2', 'DescribeInstances')).toEqual([null, 'page-2']);
    expect(pages('iam', 'ListUsers')).toEqual([null, 'page-2']);
    expect(pages('s3', 'ListBuckets')).toEqual([null, 'page-2']);
    expect(pages('rds', 'DescribeDBInstances')).toEqual([null, 'page-2']);
    expect(pages('iam', 'ListRoles')).toEqual([null, 'page-2']);
    expect(pages('iam', 'ListInstanceProfiles')).toEqual([null, 'page-2']);
    expect(pages('ec2', 'DescribeSecurityGroups')).toEqual([null, 'page-2']);
    expect(pages('rds', 'DescribeDBSnapshots')).toEqual([null, 'page-2']);
    expect(pages('dynamodb', 'ListTables')).toEqual([null, 'ProductCatalog']);

    // EC2 (EC2 query XML): both pages' instances, with state, tags, the stop time out of `reason`.
    const stopped = get(ec2('instance', 'i-fde9cece'));
    expect(stopped).toMatchObject({
      type: 'aws_ec2_instance',
      nativeId: 'i-fde9cece',
      accountId: ACCOUNT,
      region: REGION,
      availabilityZone: 'us-west-2a',
      tags: { notebook: '' },
    });
    expect(stopped.attributes).toMatchObject({
      instance_state: 'stopped',
      instance_type: 'm1.small',
      launch_time: '2012-10-16T20:00:13.000Z',
    });
    const running = get(ec2('instance', 'i-78f1b94a'));
    expect(running.attributes).toMatchObject({
      instance_state: 'running',
      public_ip_address: '54.245.16.142',
      platform: 'windows',
    });
    expect(get(ec2('volume', 'vol-a8d2e991'))).toMatchObject({ sizeValue: 30, sizeUnit: 'GiB' });
    expect(edge(ec2('volume', 'vol-a8d2e991'), ec2('instance', 'i-78f1b94a'), 'attached-to')).toBe(true);
    // Snapshot ARNs carry no account, as AWS writes them; answers older than `encrypted` leave it unknown.
    expect(get(`arn:aws:ec2:${REGION}::snapshot/snap-b253e6da`).attributes).toMatchObject({
      volume_id: 'vol-ee102886',
      encrypted: null,
      // Not among the snapshots the RestorableBy=all listing answers.
      is_public: false,
    });
    expect(pages('ec2', 'DescribeSnapshots')).toEqual([null, null]);
    expect(
      peer.requests
        .filter((r) => r.action === 'DescribeSnapshots')
        .map((r) => r.item)
        .sort(),
    ).toEqual(['all', null]);
    expect(get(`arn:aws:::${ACCOUNT}`).attributes.ebs_encryption_by_default).toEqual({ [REGION]: false });

    // VPC: the security group rules the sg-open detectors read, flattened one per source.
    const notebook = get(ec2('security-group', 'sg-4e970e7e'));
    expect(notebook.attributes.rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'ingress', from_port: 8888, to_port: 8888, cidr_ipv4: '0.0.0.0/0' }),
      ]),
    );
    expect(ofType('aws_vpc_security_group')).toHaveLength(5);
    expect(get(ec2('vpc', 'vpc-8d2910e4')).attributes).toMatchObject({ cidr_block: '10.0.0.0/16' });
    expect(get(ec2('subnet', 'subnet-812910e8')).availabilityZone).toBe('us-west-2a');
    expect(get(ec2('elastic-ip', 'eipalloc-312e1758')).attributes).toMatchObject({
      public_ip: '50.112.139.73',
      association_id: null,
    });
    // EC2-Classic addresses have no allocation id: the address is their id.
    expect(get(ec2('elastic-ip', '54.245.81.77')).attributes).toMatchObject({ allocation_id: null });
    expect(ofType('aws_vpc_route_table')).toHaveLength(2);
    expect(ofType('aws_vpc_internet_gateway')).toHaveLength(2);

    // S3 (REST-XML): buckets of both pages, with no BucketRegion, so GetBucketLocation for each; the
    // one answered "EU" (eu-west-1) is outside the regions scanned and left out.
    expect(peer.count('s3', 'GetBucketLocation')).toBe(3);
    expect(has('arn:aws:s3:::elasticbeanstalk-us-east-1-419278470775')).toBe(false);
    const demo = get('arn:aws:s3:::botostats');
    expect(demo).toMatchObject({ region: REGION, tags: { key1: 'value1', key2: 'value2' } });
    expect(demo.attributes).toMatchObject({
      block_public_acls: true,
      ignore_public_acls: true,
      block_public_policy: true,
      bucket_policy_is_public: false,
      versioning_enabled: true,
      unreadable: [],
    });
    expect(demo.attributes.lifecycle_rules).toEqual([expect.objectContaining({ id: 'Rule for TaxDocs/' })]);
    expect(demo.attributes.server_side_encryption_configuration).toMatchObject({
      rules: [{ apply_server_side_encryption_by_default: { sse_algorithm: 'AES256' } }],
    });
    expect(demo.attributes.acl).toMatchObject({
      grants: [
        {
          grantee: { type: 'CanonicalUser', display_name: 'CustomersName@amazon.com' },
          permission: 'FULL_CONTROL',
        },
      ],
    });
    const open = get('arn:aws:s3:::bucket-1355863083');
    expect(open.tags).toEqual({ organization: 'marketing' });
    // No Block Public Access configuration (404): nothing blocked, and its policy is public.
    expect(open.attributes).toMatchObject({
      block_public_acls: false,
      restrict_public_buckets: false,
      bucket_policy_is_public: true,
      versioning_enabled: false,
    });
    expect(open.attributes.policy).toMatchObject({ Statement: [{ Principal: '*', Effect: 'Allow' }] });

    // IAM (query XML): users of both pages, keys, MFA, console passwords; URL-encoded documents decoded.
    const andrew = get('arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/engineering/Andrew');
    expect(andrew).toMatchObject({ region: 'global', tags: { Dept: '12345', Team: 'Accounting' } });
    expect(andrew.attributes).toMatchObject({
      password_enabled: true,
      mfa_active: false,
      access_key_count: 2,
      attached_policy_arns: [
        'arn:aws:iam::aws:policy/AdministratorAccess',
        'arn:aws:iam::aws:policy/SecurityAudit',
      ],
    });
    const jackie = get('arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/engineering/Jackie');
    expect(jackie.attributes).toMatchObject({ password_enabled: false, mfa_active: true });
    expect(
      ofType('aws_iam_access_key')
        .map((k) => k.nativeId)
        .sort(),
    ).toEqual([
      'AKIA111111111EXAMPLE',
      'AKIA222222222EXAMPLE',
      'AKIAI44QH8DHBEXAMPLE',
      'AKIAIOSFODNN7EXAMPLE',
    ]);
    const role = get('arn:aws:iam::123456789012:role/application_abc/component_xyz/S3Access');
    expect(role.attributes.assume_role_policy_document).toMatchObject({
      Statement: [{ Principal: { Service: ['ec2.amazonaws.com'] } }],
    });
    expect(role.attributes.inline_policies).toEqual([
      expect.objectContaining({
        policy_name: 'ExamplePolicy',
        policy_document: {
          Statement: [expect.objectContaining({ Action: expect.arrayContaining(['s3:Put*']) })],
        },
      }),
    ]);
    expect(
      get('arn:aws:iam::123456789012:policy/AWSCloudTrailAccessPolicy').attributes.policy_document,
    ).toMatchObject({ Statement: [{ Effect: 'Allow', Action: 'iam:*', Resource: '*' }] });
    expect(ofType('aws_iam_role')).toHaveLength(2);
    expect(ofType('aws_iam_instance_profile')).toHaveLength(2);
    expect(get(`arn:aws:::${ACCOUNT}`)).toMatchObject({
      name: 'foocorporation',
      attributes: { account_mfa_enabled: false, caller_arn: 'arn:aws:iam::123456789012:user/Alice' },
    });

    // RDS, ELBv2, Auto Scaling, ElastiCache (query XML).
    // The first page predates DBInstanceArn: the ARN is built from the identifier.
    const db = get('arn:aws:rds:us-west-2:123456789012:db:simcoprod01');
    expect(db).toMatchObject({ tags: {} });
    expect(db.attributes).toMatchObject({ multi_az: false, engine: 'mysql', class: 'db.m1.large' });
    expect(get('arn:aws:rds:us-west-2:123456789012:db:mydbinstancecf').attributes).toMatchObject({
      engine: 'mysql',
      class: 'db.t3.small',
    });
    expect(ofType('aws_rds_db_snapshot')).toHaveLength(3);
    const lb = get(
      'arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/my-load-balancer/50dc6c495c0c9188',
    );
    expect(lb.tags).toEqual({ project: 'lima', department: 'digital-media' });
    expect(lb.attributes).toMatchObject({ scheme: 'internet-facing' });
    expect(ofType('aws_ec2_target_group')).toHaveLength(1);
    expect(ofType('aws_ec2_autoscaling_group')[0]?.attributes).toMatchObject({ min_size: 0, max_size: 1 });
    // AWS's page masks the account in this ARN; the connector keeps the ARN as answered.
    expect(get('arn:aws:elasticache:us-west-2:xxxxxxxxxxx152:replicationgroup:my-cluster')).toMatchObject({
      tags: { Project: 'querySpeedUp', Environment: 'PROD' },
    });

    // DynamoDB, CloudWatch (JSON 1.0), CloudTrail, CloudWatch Logs (JSON 1.1).
    const thread = get('arn:aws:dynamodb:us-west-2:123456789012:table/Thread');
    expect(thread.tags).toEqual({ Owner: 'blueTeam', Environment: 'Production' });
    expect(thread.attributes.point_in_time_recovery_description).toEqual({
      point_in_time_recovery_status: 'DISABLED',
    });
    expect(ofType('aws_dynamodb_table')).toHaveLength(4);
    const alarm = get('arn:aws:cloudwatch:us-east-1:123456789012:alarm:myalarm');
    expect(alarm.attributes).toMatchObject({ metric_name: 'CPUUtilization', threshold: 70 });
    expect(get('arn:aws:cloudtrail:us-east-1:123456789012:trail/Trail1').attributes).toMatchObject({
      is_multi_region_trail: false,
      is_logging: true,
    });
    expect(
      ofType('aws_cloudwatch_log_group').map((g) => [g.nativeId, g.attributes.retention_in_days]),
    ).toEqual([['my-logs', 5]]);
  });

  it.each(['standard', 'adaptive'] as const)(
    'lets the SDK (%s retries) retry Throttling, RequestLimitExceeded and 503 SlowDown, and counts the retries',
    async (retryMode) => {
      peer.fail({
        service: 'ec2',
        action: 'DescribeInstances',
        code: 'RequestLimitExceeded',
        status: 503,
        times: 2,
      });
      peer.fail({ service: 'iam', action: 'ListRoles', code: 'Throttling', status: 400, times: 1 });
      peer.fail({ service: 's3', action: 'GetBucketTagging', code: 'SlowDown', status: 503, times: 1 });
      const inv = await collect({ retryMode });
      expect(inv.retries).toBe(4);
      expect(inv.warnings).toEqual([]);
      const { ofType } = index(inv);
      expect(ofType('aws_ec2_instance')).toHaveLength(2);
      expect(ofType('aws_iam_role')).toHaveLength(2);
      expect(ofType('aws_s3_bucket')).toHaveLength(2);
      // Two refused, then the first page and the second.
      expect(peer.count('ec2', 'DescribeInstances')).toBe(4);
    },
    30_000,
  );

  it('fails the sync, naming service, region and code, when the retries run out', async () => {
    peer.fail({ service: 'ec2', action: 'DescribeVolumes', code: 'RequestLimitExceeded', status: 503 });
    const err = await collect({ maxAttempts: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AwsCollectError);
    expect(err).toMatchObject({ service: 'ec2', region: REGION, code: 'RequestLimitExceeded' });
    expect(peer.count('ec2', 'DescribeVolumes')).toBe(2);
  });

  it('completes without what IAM and S3 refuse, saying which actions were refused', async () => {
    peer.fail({ service: 'iam', ...DENIED.iam! });
    peer.fail({ service: 's3', ...DENIED.s3! });
    peer.fail({
      service: 'ec2',
      action: 'DescribeInstances',
      code: 'RequestLimitExceeded',
      status: 503,
      times: 2,
    });
    const inv = await collect();
    const { ofType, get } = index(inv);
    expect(ofType('aws_ec2_instance')).toHaveLength(2);
    expect(ofType('aws_vpc_security_group')).toHaveLength(5);
    expect(inv.resources.filter((r) => r.type.startsWith('aws_iam_') || r.type === 'aws_s3_bucket')).toEqual(
      [],
    );
    expect(inv.retries).toBe(2);
    const actions = inv.warnings!.map((w) => w.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'iam:GetAccountSummary',
        'iam:ListUsers',
        'iam:ListRoles',
        'iam:ListPolicies',
        'iam:ListInstanceProfiles',
        's3:ListAllMyBuckets',
      ]),
    );
    expect(inv.warnings!.find((w) => w.action === 'iam:ListUsers')).toMatchObject({
      service: 'iam',
      region: 'global',
      code: 'AccessDenied',
    });
    expect(inv.warnings!.find((w) => w.action === 's3:ListAllMyBuckets')).toMatchObject({
      service: 's3',
      region: 'global',
      code: 'AccessDenied',
    });
    expect(inv.warnings!.every((w) => w.service === 'iam' || w.service === 's3')).toBe(true);
    expect(inv.unread).toEqual(
      expect.arrayContaining([
        {
          region: 'global',
          types: [
            'aws_iam_access_key',
            'aws_iam_instance_profile',
            'aws_iam_policy',
            'aws_iam_role',
            'aws_iam_user',
          ],
        },
        { region: '*', types: ['aws_s3_bucket'] },
      ]),
    );
    // The account summary was refused: root MFA is unknown, not "off".
    expect(get(`arn:aws:::${ACCOUNT}`).attributes).toMatchObject({
      account_mfa_enabled: null,
      unread: expect.arrayContaining([{ region: '*', types: ['aws_s3_bucket'] }]),
    });
  });

  it('keeps a bucket whose settings may not be read, with those settings unknown rather than absent', async () => {
    peer.fail({ service: 's3', action: 'GetPublicAccessBlock', ...DENIED.s3! });
    peer.fail({ service: 's3', action: 'GetBucketPolicyStatus', ...DENIED.s3! });
    peer.fail({ service: 's3', action: 'GetBucketEncryption', ...DENIED.s3! });
    const inv = await collect();
    const open = index(inv).get('arn:aws:s3:::bucket-1355863083');
    expect(open.attributes).toMatchObject({
      block_public_acls: null,
      restrict_public_buckets: null,
      bucket_policy_is_public: null,
      server_side_encryption_configuration: null,
      unreadable: ['GetPublicAccessBlock', 'GetBucketPolicyStatus', 'GetBucketEncryption'],
    });
    expect(inv.warnings!.map((w) => w.action)).toEqual([
      's3:GetBucketPolicyStatus',
      's3:GetBucketPublicAccessBlock',
      's3:GetEncryptionConfiguration',
    ]);
    expect(inv.unread).toEqual([]);
  });

  it('leaves out only the detail a per-item refusal covers: one user, one role, one policy, one load balancer', async () => {
    // Jackie's access keys and MFA devices, one role's attached policies, every inline role policy and
    // policy version, the load balancers' tags and target health: each denied on its own.
    peer.fail({ service: 'iam', action: 'ListAccessKeys', item: 'Jackie', ...DENIED.iam! });
    peer.fail({ service: 'iam', action: 'ListMFADevices', item: 'Jackie', ...DENIED.iam! });
    peer.fail({ service: 'iam', action: 'ListAttachedRolePolicies', item: 'SDBAccess', ...DENIED.iam! });
    peer.fail({ service: 'iam', action: 'GetRolePolicy', ...DENIED.iam! });
    peer.fail({ service: 'iam', action: 'GetPolicyVersion', ...DENIED.iam! });
    peer.fail({ service: 'elasticloadbalancing', action: 'DescribeTags', code: 'AccessDenied', status: 400 });
    peer.fail({
      service: 'elasticloadbalancing',
      action: 'DescribeTargetHealth',
      code: 'AccessDenied',
      status: 400,
    });
    const inv = await collect();
    const { get, ofType } = index(inv);
    const user = (name: string) =>
      get(`arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/engineering/${name}`);

    // Both users are there; Jackie's keys and MFA are unknown, not "none", and Andrew's are read.
    expect(user('Jackie').attributes).toMatchObject({
      password_enabled: false,
      mfa_active: null,
      mfa_devices: null,
      access_key_count: null,
      unreadable: ['ListAccessKeys', 'ListMFADevices'],
    });
    expect(user('Andrew').attributes).toMatchObject({
      mfa_active: false,
      access_key_count: 2,
      unreadable: [],
    });
    expect(
      ofType('aws_iam_access_key')
        .map((k) => k.attributes.user_name)
        .sort(),
    ).toEqual(['Andrew', 'Andrew']);

    // Both roles are there: one without its attached policies, the other with its inline policy's
    // document unknown (null) rather than empty.
    expect(ofType('aws_iam_role')).toHaveLength(2);
    const s3Access = get('arn:aws:iam::123456789012:role/application_abc/component_xyz/S3Access');
    expect(s3Access.attributes.inline_policies).toEqual([
      { policy_name: 'ExamplePolicy', policy_document: null },
    ]);
    expect(s3Access.attributes.unreadable).toEqual(['GetRolePolicy']);
    const sdb = ofType('aws_iam_role').find((r) => r.nativeId === 'SDBAccess')!;
    expect(sdb.attributes).toMatchObject({
      attached_policies: null,
      unreadable: ['GetRolePolicy', 'ListAttachedRolePolicies'],
    });
    expect(get('arn:aws:iam::123456789012:policy/AWSCloudTrailAccessPolicy').attributes).toMatchObject({
      policy_document: null,
      unreadable: ['GetPolicyVersion'],
    });

    // The load balancer and its target group are there, their tags and targets unknown.
    const lb = get(
      'arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/my-load-balancer/50dc6c495c0c9188',
    );
    expect(lb.attributes).toMatchObject({ scheme: 'internet-facing', unreadable: ['DescribeTags'] });
    expect(lb.attributes.listeners).not.toBeNull();
    const [tg] = ofType('aws_ec2_target_group');
    expect(tg?.attributes).toMatchObject({
      target_health_descriptions: null,
      unreadable: ['DescribeTags', 'DescribeTargetHealth'],
    });

    // Only the access keys are kept as they were: every other type was read.
    expect(inv.unread).toEqual([{ region: 'global', types: ['aws_iam_access_key'] }]);
    expect(inv.warnings!.map((w) => `${w.action}@${w.region}`)).toEqual([
      'elasticloadbalancing:DescribeTags@us-west-2',
      'elasticloadbalancing:DescribeTargetHealth@us-west-2',
      'iam:GetPolicyVersion@global',
      'iam:GetRolePolicy@global',
      'iam:ListAccessKeys@global',
      'iam:ListAttachedRolePolicies@global',
      'iam:ListMFADevices@global',
    ]);
  }, 30_000);

  it('keeps the trails, their tags unknown, when CloudTrail refuses ListTags', async () => {
    // The recorded trails' home region is us-east-1: their tags are listed from there.
    peer.fail({ service: 'cloudtrail', action: 'ListTags', ...DENIED.cloudtrail! });
    const inv = await collect({ regions: ['us-east-1'] });
    const trail = index(inv).get('arn:aws:cloudtrail:us-east-1:123456789012:trail/Trail1');
    expect(trail).toMatchObject({ tags: {}, attributes: { is_logging: true, unreadable: ['ListTags'] } });
    expect(inv.unread).toEqual([]);
    expect(inv.warnings!.map((w) => `${w.action}@${w.region}`)).toEqual(['cloudtrail:ListTags@us-east-1']);
  }, 30_000);

  it("keeps the buckets it held when a bucket's location may not be read", async () => {
    peer.fail({ service: 's3', action: 'GetBucketLocation', ...DENIED.s3! });
    const inv = await collect();
    expect(inv.unread).toEqual([{ region: '*', types: ['aws_s3_bucket'] }]);
    expect(inv.warnings!.map((w) => w.action)).toEqual(['s3:GetBucketLocation']);
  }, 30_000);

  // EC2 answers a region the account has not opted in to with OptInRequired, or AuthFailure.
  it.each(['OptInRequired', 'AuthFailure'])(
    'skips a region the account has not enabled (EC2 %s), with a warning, and reads the others',
    async (code) => {
      const optIn = 'ap-east-1';
      peer.fail({ service: 'ec2', region: optIn, code, status: 401 });
      for (const service of ['elasticloadbalancing', 'autoscaling', 'rds', 'elasticache'])
        peer.fail({ service, region: optIn, code: 'InvalidClientTokenId', status: 403 });
      for (const service of ['dynamodb', 'monitoring', 'cloudtrail', 'logs'])
        peer.fail({ service, region: optIn, code: 'UnrecognizedClientException', status: 400 });
      const inv = await collect({ regions: [REGION, optIn] });
      expect(index(inv).ofType('aws_ec2_instance')).toHaveLength(2);
      expect(new Set(inv.warnings!.map((w) => w.region))).toEqual(new Set([optIn]));
      expect(inv.warnings!.find((w) => w.service === 'ec2')).toMatchObject({ code });
      expect(inv.unread!.every((u) => u.region === optIn)).toBe(true);
      // One scope for the region, every type a call of it would have added.
      expect(inv.unread).toHaveLength(1);
      expect(inv.unread![0]!.types).toEqual(
        expect.arrayContaining(['aws_ec2_instance', 'aws_vpc_security_group', 'aws_cloudwatch_log_group']),
      );
    },
  );

  it('completes partial with what EC2 answers when it refuses its other calls, counting 503 throttles', async () => {
    // EC2 answers DescribeInstances, DescribeVolumes and DescribeSecurityGroups only (the first and a
    // refused one throttled once each, RequestLimitExceeded with HTTP 503 as EC2 documents);
    // every other EC2 call is UnauthorizedOperation, every other service AccessDenied.
    const answered = ['DescribeInstances', 'DescribeVolumes', 'DescribeSecurityGroups'];
    const refused = [
      'DescribeSnapshots',
      'DescribeLaunchTemplateVersions',
      'DescribeLaunchTemplates',
      'GetEbsEncryptionByDefault',
      'DescribeVpcs',
      'DescribeSubnets',
      'DescribeRouteTables',
      'DescribeInternetGateways',
      'DescribeNatGateways',
      'DescribeAddresses',
    ];
    for (const action of ['DescribeInstances', 'DescribeRouteTables'])
      peer.fail({ service: 'ec2', action, code: 'RequestLimitExceeded', status: 503, times: 1 });
    for (const action of refused) peer.fail({ service: 'ec2', action, ...DENIED.ec2! });
    for (const [service, denial] of Object.entries(DENIED))
      if (service !== 'ec2') peer.fail({ service, ...denial });
    for (const service of ['elasticloadbalancing', 'autoscaling', 'rds', 'elasticache'])
      peer.fail({ service, code: 'AccessDenied', status: 403 });
    for (const service of ['dynamodb', 'logs'])
      peer.fail({ service, code: 'AccessDeniedException', status: 400 });

    const inv = await collect();
    const { ofType } = index(inv);
    expect(ofType('aws_ec2_instance')).toHaveLength(2);
    expect(ofType('aws_ebs_volume').length).toBeGreaterThan(0);
    expect(ofType('aws_vpc_security_group')).toHaveLength(5);
    expect(ofType('aws_vpc')).toEqual([]);
    // Both throttles retried by the SDK and counted, the one whose retry was then refused included.
    expect(peer.requests.filter((r) => r.status === 503)).toHaveLength(2);
    expect(inv.retries).toBe(2);
    // Every EC2 call the peer refused is named (DescribeLaunchTemplates is not sent once the default
    // versions are refused), the throttled-then-refused DescribeRouteTables too; none of the answered.
    const ec2Warnings = inv.warnings!.filter((w) => w.service === 'ec2');
    const peerRefused = new Set(
      peer.requests.filter((r) => r.service === 'ec2' && r.status === 403).map((r) => `ec2:${r.action}`),
    );
    expect(ec2Warnings.map((w) => w.action).sort()).toEqual([...peerRefused].sort());
    expect(peerRefused).toContain('ec2:DescribeRouteTables');
    expect(peerRefused.size).toBeGreaterThanOrEqual(refused.length - 1);
    expect(ec2Warnings.every((w) => w.region === REGION && w.code === 'UnauthorizedOperation')).toBe(true);
    const regional = inv.unread!.find((u) => u.region === REGION)!;
    expect(regional.types).toEqual(
      expect.arrayContaining(['aws_vpc', 'aws_vpc_route_table', 'aws_ebs_snapshot', 'aws_rds_db_instance']),
    );
    for (const read of ['aws_ec2_instance', 'aws_ebs_volume', 'aws_vpc_security_group'])
      expect(regional.types).not.toContain(read);
    expect(
      new Set(peer.requests.filter((r) => r.service === 'ec2' && r.status === 200).map((r) => r.action)),
    ).toEqual(new Set(answered));
    // EBS default encryption was refused: unknown, not "off".
    const account = ofType('aws_account')[0]!;
    expect(account.attributes.ebs_encryption_by_default).toEqual({ [REGION]: null });
  });

  it('leaves no request retrying after the sync ended', async () => {
    // ELB's target groups are throttled while Auto Scaling fails outright: the sync fails with
    // DescribeTargetGroups backing off (at most 1 s before its first retry). That retry must not reach
    // AWS after the sync, into the next one's throttles.
    peer.fail({
      service: 'elasticloadbalancing',
      action: 'DescribeTargetGroups',
      code: 'Throttling',
      status: 400,
    });
    peer.fail({ service: 'autoscaling', code: 'ValidationError', status: 400 });
    await expect(collect()).rejects.toThrow(/autoscaling in us-west-2: ValidationError/);
    const sent = peer.count('elasticloadbalancing', 'DescribeTargetGroups');
    expect(sent).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 2500));
    expect(peer.count('elasticloadbalancing', 'DescribeTargetGroups')).toBe(sent);
  });

  it('fails, naming the actions it needs, when the identity may read nothing', async () => {
    for (const [service, denial] of Object.entries(DENIED)) peer.fail({ service, ...denial });
    for (const service of ['elasticloadbalancing', 'autoscaling', 'rds', 'elasticache'])
      peer.fail({ service, code: 'AccessDenied', status: 403 });
    for (const service of ['dynamodb', 'logs'])
      peer.fail({ service, code: 'AccessDeniedException', status: 400 });
    await expect(collect()).rejects.toThrow(
      /may read nothing of this account: give it the read-only actions of docs\/aws-iam-policy\.json \(refused: .*ec2:DescribeInstances.*s3:ListAllMyBuckets/,
    );
  });
});
