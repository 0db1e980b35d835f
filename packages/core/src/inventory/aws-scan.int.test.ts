import { startAwsPeer, writePeerProfile, type AwsPeer, type PeerProfile } from '@opsi/test-support/aws-peer';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTenantWithUser, createTestContext, type TestContext } from '@opsi/test-support';
import { pulseOverview } from '../pulse';
import { connectEnvironment, requestScan, runScan } from './scans';

/**
 * Scans of an AWS connection, as `env connect --aws-profile` makes one: a profile in a temporary
 * AWS credentials file, every SDK client sent to the local AWS peer by AWS_ENDPOINT_URL, so the
 * connector, the sync, the scan record and the detectors all run on AWS's recorded answers.
 */

let t: TestContext;
let peer: AwsPeer;
let profile: PeerProfile;
const saved: Record<string, string | undefined> = {};
const ENV = [
  'AWS_ENDPOINT_URL',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'AWS_REGION',
  'AWS_PROFILE',
];

beforeAll(async () => {
  t = await createTestContext();
  for (const k of ENV) saved[k] = process.env[k];
  delete process.env.AWS_REGION;
  delete process.env.AWS_PROFILE;
}, 60_000);
afterAll(async () => {
  for (const k of ENV)
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  await t?.close();
});
beforeEach(async () => {
  peer = await startAwsPeer();
  profile = writePeerProfile(peer.url);
  Object.assign(process.env, profile.env);
});
afterEach(async () => {
  await peer.close();
  profile.remove();
});

async function awsTenant() {
  const a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'aws', profile: profile.name, regions: ['us-west-2'] });
  return a.tenant.id;
}

async function scan(tenantId: string) {
  const requested = await requestScan(t.db, null, tenantId, 'test');
  return runScan(t.db, requested.id);
}

async function openChecks(tenantId: string) {
  const rows = await t.db
    .selectFrom('findings')
    .select('check_id')
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'open')
    .execute();
  return new Set(rows.map((r) => r.check_id));
}

function live(tenantId: string) {
  return t.db
    .selectFrom('resources')
    .select(['arn', 'type'])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .execute();
}

/** The findings that rest on IAM and S3 reads: none may come from a scan that could not make them. */
const IAM_S3_CHECKS = [
  'security.s3_public',
  'security.iam_console_user_no_mfa',
  'security.root_mfa_disabled',
  'security.iam_access_key_old',
  'security.iam_admin_star',
  'security.toxic_exposed_instance_sensitive_data',
];

describe('an AWS scan against the recorded account', () => {
  it('completes partial when IAM and S3 refuse every call and EC2 throttles twice', async () => {
    const tenantId = await awsTenant();
    peer.fail({ service: 'iam', code: 'AccessDenied', status: 403 });
    peer.fail({ service: 's3', code: 'AccessDenied', status: 403 });
    peer.fail({
      service: 'ec2',
      action: 'DescribeInstances',
      code: 'RequestLimitExceeded',
      status: 503,
      times: 2,
    });

    const done = await scan(tenantId);
    expect(done).toMatchObject({ status: 'completed', partial: true });
    expect(done.counts.retries).toBe(2);
    const actions = done.warnings.map((w) => w.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'iam:ListUsers',
        'iam:ListRoles',
        'iam:GetAccountSummary',
        's3:ListAllMyBuckets',
      ]),
    );
    expect(done.warnings.find((w) => w.action === 'iam:ListUsers')).toEqual({
      service: 'iam',
      action: 'iam:ListUsers',
      region: 'global',
      code: 'AccessDenied',
      message: expect.stringContaining('AccessDenied') as unknown as string,
    });

    const resources = await live(tenantId);
    expect(resources.filter((r) => r.type === 'aws_ec2_instance')).toHaveLength(2);
    expect(resources.filter((r) => r.type.startsWith('aws_iam_') || r.type === 'aws_s3_bucket')).toEqual([]);

    const checks = await openChecks(tenantId);
    expect(checks.has('security.sg_ssh_open')).toBe(true); // the detectors ran on what was read
    for (const check of IAM_S3_CHECKS) expect(checks.has(check), check).toBe(false);

    const overview = await pulseOverview(t.db, tenantId);
    expect(overview.coverage.last_scan).toMatchObject({ id: done.id, partial: true });
    expect(overview.coverage.last_scan?.missing_permissions).toEqual(
      expect.arrayContaining(['iam:ListUsers', 's3:ListAllMyBuckets']),
    );
  });

  it('keeps what a later scan may not read instead of deleting it, and its findings', async () => {
    const tenantId = await awsTenant();
    const full = await scan(tenantId);
    expect(full).toMatchObject({ status: 'completed', partial: false, warnings: [] });
    const before = await live(tenantId);
    const checks = await openChecks(tenantId);
    // The recorded account's own problems, each resting on a read the next scan is refused.
    for (const check of [
      'security.s3_public',
      'security.iam_console_user_no_mfa',
      'security.root_mfa_disabled',
    ])
      expect(checks.has(check), check).toBe(true);

    peer.fail({ service: 'iam', code: 'AccessDenied', status: 403 });
    peer.fail({ service: 's3', code: 'AccessDenied', status: 403 });
    const partial = await scan(tenantId);
    expect(partial).toMatchObject({ status: 'completed', partial: true });
    expect(partial.counts.deleted).toBe(0);
    expect((await live(tenantId)).map((r) => r.arn).sort()).toEqual(before.map((r) => r.arn).sort());
  });

  it('draws no "missing" finding from trails and alarms it could not list', async () => {
    const fullTenant = await awsTenant();
    await scan(fullTenant);
    const seen = await openChecks(fullTenant);
    // With the reads, the account has no multi-region trail and its databases no alarm.
    expect(seen.has('security.cloudtrail_no_multi_region')).toBe(true);
    expect(seen.has('sre.resource_no_alarm')).toBe(true);

    const tenantId = await awsTenant();
    peer.fail({ service: 'cloudtrail', code: 'AccessDeniedException', status: 400 });
    peer.fail({ service: 'monitoring', code: 'AccessDeniedException', status: 400 });
    const done = await scan(tenantId);
    expect(done.partial).toBe(true);
    expect(done.warnings.map((w) => w.action)).toEqual([
      'cloudtrail:DescribeTrails',
      'cloudwatch:DescribeAlarms',
    ]);
    const checks = await openChecks(tenantId);
    expect(checks.has('security.cloudtrail_no_multi_region')).toBe(false);
    expect(checks.has('sre.resource_no_alarm')).toBe(false);
  });

  it('does not call a bucket public when its Block Public Access may not be read', async () => {
    const tenantId = await awsTenant();
    peer.fail({ service: 's3', action: 'GetPublicAccessBlock', code: 'AccessDenied', status: 403 });
    const done = await scan(tenantId);
    expect(done.partial).toBe(true);
    expect(done.warnings.map((w) => w.action)).toEqual(['s3:GetBucketPublicAccessBlock']);
    // The bucket is there, its policy public, but Block Public Access could neutralise it: no finding.
    const bucket = await t.db
      .selectFrom('resources')
      .select('attributes')
      .where('tenant_id', '=', tenantId)
      .where('arn', '=', 'arn:aws:s3:::bucket-1355863083')
      .executeTakeFirstOrThrow();
    expect(bucket.attributes).toMatchObject({ bucket_policy_is_public: true, block_public_policy: null });
    expect((await openChecks(tenantId)).has('security.s3_public')).toBe(false);
  });

  it('fails when the identity may read nothing, naming the policy to grant', async () => {
    const tenantId = await awsTenant();
    for (const [service, code, status] of [
      ['iam', 'AccessDenied', 403],
      ['s3', 'AccessDenied', 403],
      ['ec2', 'UnauthorizedOperation', 403],
      ['elasticloadbalancing', 'AccessDenied', 403],
      ['autoscaling', 'AccessDenied', 403],
      ['rds', 'AccessDenied', 403],
      ['elasticache', 'AccessDenied', 403],
      ['dynamodb', 'AccessDeniedException', 400],
      ['monitoring', 'AccessDeniedException', 400],
      ['cloudtrail', 'AccessDeniedException', 400],
      ['logs', 'AccessDeniedException', 400],
    ] as const)
      peer.fail({ service, code, status });
    await expect(scan(tenantId)).rejects.toThrow(/docs\/aws-iam-policy\.json/);
    const row = await t.db
      .selectFrom('inventory_scans')
      .select(['status', 'error'])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/may read nothing.*refused: .*ec2:DescribeInstances/);
  });
});
