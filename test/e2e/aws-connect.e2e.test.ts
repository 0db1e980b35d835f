import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAwsPeer, writePeerProfile, type AwsPeer, type PeerProfile } from '../support/aws-peer';
import {
  call,
  createTenantWithUser,
  createTestContext,
  mintTestToken,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '../support/index';
import { freePort, runAdmin, startService, type ServiceProcess } from '../support/processes';

/**
 * `env connect --aws-profile` end to end: the operator's commands, the API and a worker as processes,
 * a profile in a temporary AWS credentials file, and every AWS request sent by AWS_ENDPOINT_URL to
 * the local peer that answers AWS's recorded examples. Connect, scan (through the queue), findings.
 */

const BOUND_MS = 120_000;
let t: TestContext;
let peer: AwsPeer;
let profile: PeerProfile;
let env: Record<string, string>;
let api: ServiceProcess;
let worker: ServiceProcess;
let member: TestMember;
let token = '';

/** An operator command: exits by itself with 0 and one JSON object on stdout. */
async function admin(args: string[]) {
  const r = await runAdmin(args, env, { timeoutMs: BOUND_MS });
  const what = `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(-2000)}`;
  expect(r.timedOut, `did not exit by itself: ${what}`).toBe(false);
  expect(r.code, what).toBe(0);
  return JSON.parse(r.stdout.trim()) as Record<string, any>;
}

async function get(path: string) {
  const res = await call(api.url, 'GET', path, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return res.body as Record<string, any>;
}

beforeAll(async () => {
  t = await createTestContext();
  peer = await startAwsPeer();
  profile = writePeerProfile(peer.url);
  env = {
    DATABASE_URL: t.database.url,
    DATABASE_POOL_MAX: '3',
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: t.redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
    ...profile.env,
  };
  api = await startService(env, { entry: 'apps/api/src/main.ts' });
  const metricsPort = await freePort();
  worker = await startService(
    { ...env, WORKER_METRICS_PORT: String(metricsPort) },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
  member = await createTenantWithUser(t, { tier: 'team' });
  token = (await mintTestToken(t, member, 'read')).token;
}, 300_000);

afterAll(async () => {
  await Promise.all([api, worker].filter(Boolean).map((p) => p.stop()));
  await peer?.close();
  profile?.remove();
  await t?.close();
});

describe('env connect --aws-profile, against the recorded AWS account', () => {
  it('connects, naming the read-only policy the profile needs', async () => {
    const out = await admin([
      'env',
      'connect',
      '--tenant',
      member.tenant.slug,
      '--aws-profile',
      'opsi-peer',
      '--regions',
      'us-west-2',
    ]);
    expect(out.connection).toMatchObject({
      kind: 'aws',
      config: { profile: 'opsi-peer', regions: ['us-west-2'] },
    });
    expect(out.policy).toBe('docs/aws-iam-policy.json');
  });

  it('scans the account through a worker and finds its problems', async () => {
    const { scan } = await admin(['scan', '--tenant', member.tenant.slug, '--wait']);
    expect(scan).toMatchObject({ status: 'completed', partial: false, warnings: [] });
    // The recorded account: 55 resources over the services and both pages of each paged listing.
    expect(scan.counts.resources).toBe(55);
    const stsCalls = peer.requests.filter((r) => r.service === 'sts');
    expect(stsCalls.length).toBeGreaterThan(0); // the worker's SDK clients reached the peer

    const { findings } = await get('/api/v1/pulse/findings');
    const checks = new Set((findings as Array<{ check_id: string }>).map((f) => f.check_id));
    for (const check of [
      'security.s3_public',
      'security.iam_console_user_no_mfa',
      'security.sg_ssh_open',
      'security.cloudtrail_no_multi_region',
    ])
      expect(checks.has(check), check).toBe(true);
  });

  it('completes partial when IAM refuses, and says which permissions to add', async () => {
    peer.fail({ service: 'iam', code: 'AccessDenied', status: 403 });
    const { scan } = await admin(['scan', '--tenant', member.tenant.slug, '--wait']);
    expect(scan).toMatchObject({ status: 'completed', partial: true });
    expect(scan.warnings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          service: 'iam',
          action: 'iam:ListUsers',
          region: 'global',
          code: 'AccessDenied',
        }),
      ]),
    );
    expect(scan.counts.deleted).toBe(0);

    const overview = await get('/api/v1/pulse/overview');
    expect(overview.coverage.last_scan).toMatchObject({ id: scan.id, partial: true });
    expect(overview.coverage.last_scan.missing_permissions).toEqual(
      expect.arrayContaining(['iam:GetAccountSummary', 'iam:ListRoles', 'iam:ListUsers']),
    );
  });
});
