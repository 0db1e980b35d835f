import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '@opsi/db';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis } from '@opsi/redis';
import { deleteRedisKeys, mintTestToken, type TestMember } from '../support/index';
import { freePort, REPO_ROOT, runAdmin, startService, type ServiceProcess } from '../support/processes';

// Every operator command, run as an operator runs it (`npm run admin -- … --json`, a process of its
// own), must exit by itself with its one JSON object: exit code 0, or 1 with {detail} for a deliberate
// failure. Once against the split processes (API, worker, scheduler) on a database of this file's own
// and a Redis prefix of its own, once in embedded mode (PGlite in a fresh DATA_DIR, no Redis). A
// command that does not exit within the bound is killed and fails its test. Tests run in order.

const REDIS_URL = 'redis://127.0.0.1:6379';
/**
 * Far above what any command here needs (a small demo scan takes seconds; an embedded command a few
 * seconds of PGlite start, more on a loaded machine), far below a hang.
 */
const EXIT_BOUND_MS = 120_000;
/** A test runs many commands one after another, each bounded by EXIT_BOUND_MS. */
const MANY_COMMANDS_MS = 900_000;
const TERRAFORM_STATE = join(REPO_ROOT, 'packages/inventory/src/terraform/fixtures/show.json');
const FOLLOW = 'npm run admin -- scan --tenant demo --wait';

type AdminResult = Awaited<ReturnType<typeof runAdmin>>;

async function admin(args: string[], env: Record<string, string | undefined>): Promise<AdminResult> {
  const result = await runAdmin(args, env, { timeoutMs: EXIT_BOUND_MS });
  expect(result.timedOut, `admin ${args.join(' ')} did not exit by itself:\n${result.stderr}`).toBe(false);
  return result;
}

/** Exit code 0 and exactly one JSON object on stdout, with these top-level keys. */
function expectOk(result: AdminResult, keys: string[]) {
  expect(result.code, result.stdout + result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  expect(Object.keys(result.json!).sort()).toEqual([...keys].sort());
  return result.json!;
}

/** Exit code 1 and one `{detail}` object. */
function expectFailure(result: AdminResult, detail: RegExp) {
  expect(result.code, result.stdout + result.stderr).toBe(1);
  expect(Object.keys(result.json!)).toEqual(['detail']);
  expect(result.json!.detail).toMatch(detail);
}

function scansOf(db: Db, tenantId: string) {
  return db
    .selectFrom('inventory_scans')
    .select(['id', 'status'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .execute();
}

/** An unattached volume of the tenant's last scan: `delete-volume` on it is accepted. */
async function unattachedVolume(db: Db, tenantId: string) {
  const volume = await db
    .selectFrom('resources')
    .select('native_id')
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'aws_ebs_volume')
    .where('deleted_at', 'is', null)
    .where((eb) => eb(eb.fn('jsonb_array_length', [eb.ref('attributes', '->').key('attachments')]), '=', 0))
    .orderBy('native_id')
    .executeTakeFirstOrThrow();
  return volume.native_id;
}

/**
 * The commands that work the same in both modes, on a tenant of their own (`acme`): create, update,
 * users, budget, token expiry, every kind of connection, and the deliberate failures. `mint` makes a
 * token for the created user (operators cannot mint one: only a browser session can).
 */
async function runTenantCommands(
  env: Record<string, string | undefined>,
  mint: (member: TestMember) => Promise<string>,
) {
  const created = expectOk(
    await admin(['tenant', 'create', 'acme', '--name', 'Acme Corp', '--tier', 'team'], env),
    ['tenant'],
  );
  expect(created.tenant).toMatchObject({ slug: 'acme', name: 'Acme Corp', tier: 'team', timezone: 'UTC' });

  const updated = expectOk(await admin(['tenant', 'update', 'acme', '--timezone', 'Europe/Paris'], env), [
    'tenant',
  ]);
  expect(updated.tenant).toMatchObject({ slug: 'acme', timezone: 'Europe/Paris' });

  const user = expectOk(
    await admin(
      ['user', 'create', '--tenant', 'acme', '--email', 'ops@acme.example', '--password', 'correct-horse'],
      env,
    ),
    ['user'],
  );
  expect(user.user).toMatchObject({ email: 'ops@acme.example', role: 'member' });

  const budget = expectOk(await admin(['budget', 'set', '--tenant', 'acme', '--daily', '7'], env), [
    'tenant',
  ]);
  expect(budget.tenant).toMatchObject({ slug: 'acme', daily_agent_budget: 7 });

  const tokenId = await mint({
    tenant: { id: created.tenant.id, slug: 'acme', name: 'Acme Corp', tier: 'team' },
    user: user.user as TestMember['user'],
    password: 'correct-horse',
  });
  const expired = expectOk(await admin(['token', 'expire', tokenId], env), ['token']);
  expect(expired.token.id).toBe(tokenId);
  expect(Date.parse(expired.token.expires_at)).not.toBeNaN();
  expectFailure(await admin(['token', 'expire', randomUUID()], env), /token/i);

  const aws = expectOk(
    await admin(
      ['env', 'connect', '--tenant', 'acme', '--aws-profile', 'readonly', '--regions', 'eu-west-1'],
      env,
    ),
    ['connection', 'policy'],
  );
  // The read-only actions the profile's identity needs (issue 27).
  expect(aws.policy).toBe('docs/aws-iam-policy.json');
  expect(aws.connection).toMatchObject({
    kind: 'aws',
    config: { profile: 'readonly', regions: ['eu-west-1'] },
  });
  const terraform = expectOk(
    await admin(['env', 'connect', '--tenant', 'acme', '--terraform-state', TERRAFORM_STATE], env),
    ['connection'],
  );
  expect(terraform.connection).toMatchObject({ kind: 'terraform_state', config: { file: TERRAFORM_STATE } });
  const demo = expectOk(
    await admin(['env', 'connect', '--tenant', 'acme', '--demo', '--size', 'small', '--seed', '7'], env),
    ['connection'],
  );
  expect(demo.connection).toMatchObject({ kind: 'demo', config: { seed: 7, size: 'small' } });
  expect(demo.connection.id).toBe(aws.connection.id); // one connection per tenant, replaced

  const advanced = expectOk(await admin(['demo', 'advance', '--tenant', 'acme', '--days', '2'], env), [
    'environment',
  ]);
  expect(advanced.environment).toMatchObject({ day: 2 });

  // Integrations and the morning report (the URL is stored encrypted and never printed).
  const installed = expectOk(
    await admin(
      [
        'tools',
        'install',
        'slack',
        '--tenant',
        'acme',
        '--url',
        'https://hooks.slack.com/services/T0/B0/secretpath',
      ],
      env,
    ),
    ['tool', 'created'],
  );
  expect(installed).toMatchObject({ created: true, tool: { id: 'slack' } });
  expect(JSON.stringify(installed)).not.toContain('secretpath');
  const listed = expectOk(await admin(['tools', 'list', '--tenant', 'acme'], env), ['tools']);
  expect(listed.tools.map((t: { id: string }) => t.id)).toContain('slack');
  expect(expectOk(await admin(['tools', 'remove', 'slack', '--tenant', 'acme'], env), ['removed'])).toEqual({
    removed: 'slack',
  });
  const report = expectOk(await admin(['report', '--tenant', 'acme'], env), ['report']);
  expect(report.report).toMatchObject({ id: expect.any(String), requested_by: 'operator' });

  // Deliberate failures: a usage mistake, a refused AWS command, an unknown tenant.
  expectFailure(await admin(['tenant', 'create', 'bad', '--tier', 'platinum'], env), /platinum/);
  expectFailure(
    await admin(
      ['demo', 'exec', '--tenant', 'acme', 'aws ec2 delete-volume --volume-id vol-0000000000000000'],
      env,
    ),
    /InvalidVolume\.NotFound/,
  );
  expectFailure(await admin(['scan', '--tenant', 'nobody'], env), /nobody|tenant/i);

  const deletedUser = expectOk(
    await admin(['user', 'delete', '--tenant', 'acme', '--email', 'ops@acme.example'], env),
    ['user'],
  );
  expect(deletedUser.user).toMatchObject({ email: 'ops@acme.example' });
  const deleted = expectOk(await admin(['tenant', 'delete', 'acme'], env), ['tenant']);
  expect(deleted.tenant.slug).toBe('acme');
  expect(deleted.tenant.deleted_at).not.toBeNull();
}

describe(
  'operator commands against the split processes (Postgres, Redis)',
  { timeout: MANY_COMMANDS_MS },
  () => {
    let database: TestDatabase;
    const redisPrefix = `opsi_e2e_ops_${randomBytes(5).toString('hex')}`;
    const processes: ServiceProcess[] = [];
    let env: Record<string, string>;
    let queuedScanId = '';
    let demoTenantId = '';

    beforeAll(async () => {
      database = await createTestDatabase();
      env = {
        DATABASE_URL: database.url,
        DATABASE_POOL_MAX: '3',
        REDIS_URL,
        REDIS_PREFIX: redisPrefix,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        SECRETS_KEY: 'k'.repeat(40),
      };
      const api = await startService(env, { entry: 'apps/api/src/main.ts' });
      processes.push(api);
      // The scheduler serves no HTTP: startService checks it has not exited while the API answers.
      processes.push(
        await startService(env, { entry: 'apps/scheduler/src/main.ts', readyUrl: `${api.url}/readyz` }),
      );
    });

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      const redis = createRedis(REDIS_URL, 'command');
      try {
        await deleteRedisKeys(redis, `${redisPrefix}:*`);
      } finally {
        redis.disconnect();
      }
      await database?.close();
    });

    it('demo with no worker running says its scan is queued and how to follow it, and exits', async () => {
      const result = await admin(['demo'], env);
      const body = expectOk(result, ['tenant', 'user', 'login', 'scan', 'follow']);
      expect(body.tenant).toMatchObject({ slug: 'demo', tier: 'team' });
      expect(body.login).toEqual({ email: 'demo@example.com', password: 'demo-password' });
      expect(body.scan).toMatchObject({ status: 'queued' });
      expect(body.follow).toBe(FOLLOW);
      queuedScanId = body.scan.id;
      demoTenantId = body.tenant.id;
      expect(await scansOf(database.db, demoTenantId)).toEqual([{ id: queuedScanId, status: 'queued' }]);
    });

    it('asking again, by demo or scan, reuses the queued scan instead of queueing another', async () => {
      const again = expectOk(await admin(['demo'], env), ['tenant', 'user', 'login', 'scan', 'follow']);
      expect(again.scan.id).toBe(queuedScanId);
      const scan = expectOk(await admin(['scan', '--tenant', 'demo'], env), ['scan', 'follow']);
      expect(scan.scan).toMatchObject({ id: queuedScanId, status: 'queued' });
      expect(scan.follow).toBe(FOLLOW);
      expect(await scansOf(database.db, demoTenantId)).toEqual([{ id: queuedScanId, status: 'queued' }]);
    });

    it('scan --wait with no worker serving the queue gives up with a {detail} that says what to do', async () => {
      const result = await admin(['scan', '--tenant', 'demo', '--wait'], env);
      expectFailure(result, /no worker serves the pulse queue.*npm run start:worker/);
      expect(result.json!.detail).toContain(FOLLOW);
      expect(await scansOf(database.db, demoTenantId)).toEqual([{ id: queuedScanId, status: 'queued' }]);
    });

    it('scan --wait with a worker running exits once the scan is done and its findings are written', async () => {
      const metricsPort = await freePort();
      processes.push(
        await startService(
          { ...env, WORKER_METRICS_PORT: String(metricsPort) },
          { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
        ),
      );
      const body = expectOk(await admin(['scan', '--tenant', 'demo', '--wait'], env), ['scan']);
      expect(body.scan).toMatchObject({ status: 'completed', phase: 'done' });
      // The new worker may take the queued scan before this command asks for one: that scan then
      // completed first, and this command's is a new one (scan reuses only a queued or running scan).
      const scans = [{ id: queuedScanId, status: 'completed' }];
      if (body.scan.id !== queuedScanId) scans.push({ id: body.scan.id, status: 'completed' });
      expect(body.scan.counts.findings).toBeGreaterThan(0);
      const findings = await database.db
        .selectFrom('findings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', demoTenantId)
        // A second scan's rediscoveries are written as confirmed members of the first one's groups.
        .where('status', '<>', 'confirmed')
        .executeTakeFirstOrThrow();
      expect(Number(findings.n)).toBe(body.scan.counts.findings);
      // Every finops finding's resources carry the quantity their monthly cost is billed on.
      const unmeasured = await database.db
        .selectFrom('finding_resources as r')
        .innerJoin('findings as f', 'f.id', 'r.finding_id')
        .select(['f.check_id', 'r.type', 'r.arn'])
        .where('f.tenant_id', '=', demoTenantId)
        .where('f.domain', '=', 'finops')
        .where((eb) => eb.or([eb('r.measured_size', 'is', null), eb('r.size_unit', 'is', null)]))
        .execute();
      expect(unmeasured).toEqual([]);
      expect(await scansOf(database.db, demoTenantId)).toEqual(scans);
    });

    it('demo once scanned answers at once with no scan; demo exec and advance change the environment', async () => {
      const body = expectOk(await admin(['demo'], env), ['tenant', 'user', 'login', 'scan']);
      expect(body.scan).toBeNull();
      const volume = await unattachedVolume(database.db, demoTenantId);
      const applied = expectOk(
        await admin(['demo', 'exec', '--tenant', 'demo', `aws ec2 delete-volume --volume-id ${volume}`], env),
        ['applied'],
      );
      expect(applied.applied).toMatchObject({ day: 0 });
      expect(applied.applied.effects).toEqual([expect.objectContaining({ change: 'deleted' })]);
      const advanced = expectOk(await admin(['demo', 'advance', '--tenant', 'demo', '--days', '1'], env), [
        'environment',
      ]);
      expect(advanced.environment.day).toBe(1);
      const rescanned = expectOk(await admin(['scan', '--tenant', 'demo', '--wait'], env), ['scan']);
      expect(rescanned.scan).toMatchObject({ status: 'completed' });
      expect(rescanned.scan.counts.deleted).toBeGreaterThanOrEqual(1);
    });

    it('every other command exits by itself with its JSON object', async () => {
      await runTenantCommands(env, async (member) => (await mintTestToken(database, member)).id);
      // The API, the worker and the scheduler all outlived every command.
      for (const p of processes) expect(p.child.exitCode, p.output()).toBeNull();
    });
  },
);

describe('operator commands in embedded mode (PGlite, no Redis)', { timeout: MANY_COMMANDS_MS }, () => {
  let dataDir = '';
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'opsi-e2e-ops-'));
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', SECRETS_KEY: 'k'.repeat(40) };
  });

  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('demo scans in the command itself and exits; asked again, it has nothing to scan', async () => {
    const body = expectOk(await admin(['demo'], env), ['tenant', 'user', 'login', 'scan']);
    expect(body.scan).toMatchObject({ status: 'completed' });
    expect(body.scan.counts.findings).toBeGreaterThan(0);
    const again = expectOk(await admin(['demo'], env), ['tenant', 'user', 'login', 'scan']);
    expect(again.scan).toBeNull();
  });

  it('scan, demo exec and demo advance exit by themselves', async () => {
    const database = await openDatabase({ DATA_DIR: dataDir, DATABASE_POOL_MAX: 1 });
    let volume: string;
    try {
      const tenant = await database.db
        .selectFrom('tenants')
        .select('id')
        .where('slug', '=', 'demo')
        .executeTakeFirstOrThrow();
      volume = await unattachedVolume(database.db, tenant.id);
    } finally {
      await database.close();
    }
    const applied = expectOk(
      await admin(['demo', 'exec', '--tenant', 'demo', `aws ec2 delete-volume --volume-id ${volume}`], env),
      ['applied'],
    );
    expect(applied.applied.effects).toEqual([expect.objectContaining({ change: 'deleted' })]);
    expectOk(await admin(['demo', 'advance', '--tenant', 'demo', '--days', '1'], env), ['environment']);
    const scan = expectOk(await admin(['scan', '--tenant', 'demo', '--wait'], env), ['scan']);
    expect(scan.scan).toMatchObject({ status: 'completed' });
    expect(scan.scan.counts.deleted).toBeGreaterThanOrEqual(1);
  });

  it('every other command exits by itself with its JSON object', async () => {
    await runTenantCommands(env, async (member) => {
      // PGlite has one owner: the test opens the data directory only between two commands.
      const database = await openDatabase({ DATA_DIR: dataDir, DATABASE_POOL_MAX: 1 });
      try {
        return (await mintTestToken(database, member)).id;
      } finally {
        await database.close();
      }
    });
  });
});
