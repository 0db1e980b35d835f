import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis } from '@opsi/redis';
import { startS3Peer, type S3Peer } from '../support/s3';
import { freePort, runAdmin, startService, type ServiceProcess } from '../support/processes';
import { deleteRedisKeys } from '../support/index';

// `env connect --terraform-state` with a raw terraform.tfstate (version 4) and `--terraform-s3` with an
// S3 backend (s3rver, an S3-compatible server, reached through AWS_ENDPOINT_URL_S3), as an operator
// runs them: each a process of its own that prints one JSON object and exits by itself. The worker,
// another process, reads the S3 state again at each scan, so a change between two scans is drift.

const REDIS_URL = 'redis://127.0.0.1:6379';
const EXIT_BOUND_MS = 120_000;
const BUCKET = 'acme-tfstate';
const KEY = 'workspaces/prod/terraform.tfstate';

const rawState = (serial: number, resources: unknown[]) =>
  JSON.stringify({
    version: 4,
    terraform_version: '1.10.2',
    serial,
    lineage: '5fa3709f-e2f7-02d6-8679-a14a43731c53',
    outputs: {},
    resources,
    check_results: null,
  });
const resource = (type: string, name: string, instances: unknown[]) => ({
  mode: 'managed',
  type,
  name,
  provider: 'provider["registry.terraform.io/hashicorp/aws"]',
  instances,
});
const vpc = (id: string, tags: Record<string, string>) => ({
  schema_version: 1,
  attributes: {
    arn: `arn:aws:ec2:eu-west-1:886436970436:vpc/${id}`,
    id,
    cidr_block: '10.10.0.0/16',
    owner_id: '886436970436',
    tags,
    tags_all: tags,
  },
  sensitive_attributes: [],
  private: 'eyJzY2hlbWFfdmVyc2lvbiI6IjEifQ==',
});

async function admin(args: string[], env: Record<string, string | undefined>) {
  const result = await runAdmin(args, env, { timeoutMs: EXIT_BOUND_MS });
  expect(result.timedOut, `admin ${args.join(' ')} did not exit by itself:\n${result.stderr}`).toBe(false);
  expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return result;
}

describe('Terraform states connected by the operator command', { timeout: 600_000 }, () => {
  let database: TestDatabase;
  let peer: S3Peer;
  let s3: S3Client;
  let dir: string;
  let env: Record<string, string>;
  const processes: ServiceProcess[] = [];
  const redisPrefix = `opsi_e2e_tf_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    peer = await startS3Peer([BUCKET]);
    s3 = new S3Client({
      region: 'eu-west-1',
      endpoint: peer.endpoint,
      forcePathStyle: true,
      credentials: {
        accessKeyId: peer.env.AWS_ACCESS_KEY_ID!,
        secretAccessKey: peer.env.AWS_SECRET_ACCESS_KEY!,
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'opsi-tf-e2e-'));
    env = {
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '3',
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      SECRETS_KEY: 'k'.repeat(40),
      ...peer.env,
    };
    const metricsPort = await freePort();
    processes.push(
      await startService(
        { ...env, WORKER_METRICS_PORT: String(metricsPort), WORKER_QUEUES: 'pulse' },
        { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    s3?.destroy();
    await peer?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    const redis = createRedis(REDIS_URL, 'command');
    try {
      await deleteRedisKeys(redis, `${redisPrefix}:*`);
    } finally {
      redis.disconnect();
    }
    await database?.close();
  });

  it('connects a raw state file and an S3 backend, scans both, and shows an S3 change as drift', async () => {
    expect((await admin(['tenant', 'create', 'acme'], env)).code).toBe(0);

    // A raw terraform.tfstate, version 4, as Terraform writes it locally.
    const file = join(dir, 'terraform.tfstate');
    await writeFile(
      file,
      rawState(8, [
        resource('aws_vpc', 'lochness', [vpc('vpc-07cc842791f2bb1e4', { Name: 'LochNess-VPC' })]),
      ]),
    );
    const local = await admin(['env', 'connect', '--tenant', 'acme', '--terraform-state', file], env);
    expect(local.code, local.stdout + local.stderr).toBe(0);
    expect(local.json!.connection).toMatchObject({
      kind: 'terraform_state',
      config: { file },
      states: [{ source: file, kind: 'file', format: 'state_v4', serial: 8, managed: 1, resources: 1 }],
    });

    // The S3 backend's state: two VPCs, one in a for_each, and a resource type not modelled.
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: KEY,
        Body: rawState(41, [
          resource('aws_vpc', 'by_env', [
            { index_key: 'prod', ...vpc('vpc-0prod', { Name: 'prod', Team: 'core' }) },
          ]),
          resource('aws_route53_zone', 'main', [
            { schema_version: 0, attributes: { id: 'Z1', name: 'acme.example' } },
          ]),
        ]),
      }),
    );
    const remote = await admin(
      [
        'env',
        'connect',
        '--tenant',
        'acme',
        '--terraform-s3',
        `s3://${BUCKET}/${KEY}`,
        '--region',
        'eu-west-1',
      ],
      env,
    );
    expect(remote.code, remote.stdout + remote.stderr).toBe(0);
    expect(remote.json!.connection.config).toEqual({ s3: `s3://${BUCKET}/${KEY}`, region: 'eu-west-1' });
    expect(remote.json!.connection.states).toMatchObject([
      { source: file, serial: 8 },
      {
        source: `s3://${BUCKET}/${KEY}`,
        kind: 's3',
        region: 'eu-west-1',
        serial: 41,
        resources: 1,
        skipped_unsupported: { aws_route53_zone: 1 },
      },
    ]);

    const first = await admin(['scan', '--tenant', 'acme', '--wait'], env);
    expect(first.json!.scan, first.stderr).toMatchObject({ status: 'completed', counts: { collected: 2 } });

    // Between two scans the S3 state changes; the worker reads it again.
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: KEY,
        Body: rawState(42, [
          resource('aws_vpc', 'by_env', [
            { index_key: 'prod', ...vpc('vpc-0prod', { Name: 'prod', Team: 'platform' }) },
          ]),
        ]),
      }),
    );
    const second = await admin(['scan', '--tenant', 'acme', '--wait'], env);
    expect(second.json!.scan).toMatchObject({
      status: 'completed',
      counts: { updated: 1, created: 0, deleted: 0 },
    });
    const history = await database.db
      .selectFrom('resource_history')
      .select(['arn', 'change', 'changed_fields'])
      .where('snapshot_id', '=', second.json!.scan.snapshot_id)
      .execute();
    expect(history).toEqual([
      {
        arn: 'arn:aws:ec2:eu-west-1:886436970436:vpc/vpc-0prod',
        change: 'updated',
        changed_fields: expect.arrayContaining(['tags.Team']),
      },
    ]);

    const tools = await admin(['tools', 'list', '--tenant', 'acme'], env);
    const tf = tools.json!.tools.find((t: { id: string }) => t.id === 'terraform_state');
    expect(tf.settings.states.map((s: { source: string; serial: number }) => [s.source, s.serial])).toEqual([
      [file, 8],
      [`s3://${BUCKET}/${KEY}`, 42],
    ]);

    // Forgetting the file's state: the next scan no longer sees its VPC.
    const forgot = await admin(['env', 'forget-state', '--tenant', 'acme', '--terraform-state', file], env);
    expect(forgot.code, forgot.stdout + forgot.stderr).toBe(0);
    expect(forgot.json!.removed).toBe(file);
    expect(forgot.json!.states.map((s: { source: string }) => s.source)).toEqual([`s3://${BUCKET}/${KEY}`]);
    const third = await admin(['scan', '--tenant', 'acme', '--wait'], env);
    expect(third.json!.scan).toMatchObject({ status: 'completed', counts: { deleted: 1, collected: 1 } });
    const again = await admin(['env', 'forget-state', '--tenant', 'acme', '--terraform-state', file], env);
    expect([again.code, Object.keys(again.json!)]).toEqual([1, ['detail']]);
    expect(again.json!.detail).toMatch(/no Terraform state/);
  });

  it('refuses a missing S3 key, a bad address and --region alone with one {detail} and exit 1', async () => {
    for (const [args, detail] of [
      [['--terraform-s3', `s3://${BUCKET}/nope.tfstate`], /no such key/],
      [['--terraform-s3', 'https://example.com/state'], /not an S3 address: give s3:\/\/BUCKET\/KEY/],
      [
        ['--terraform-state', join(dir, 'terraform.tfstate'), '--region', 'eu-west-1'],
        /--region goes with --terraform-s3/,
      ],
    ] as const) {
      const result = await admin(['env', 'connect', '--tenant', 'acme', ...args], env);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(Object.keys(result.json!)).toEqual(['detail']);
      expect(result.json!.detail).toMatch(detail);
    }
  });
});
