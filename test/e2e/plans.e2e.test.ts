import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { freePort, runAdmin, startService, type ServiceProcess } from '../support/processes';

// A resolution plan the way an operator and a user run it: the API and a worker with the default
// WORKER_QUEUES (so the plans pool is served without naming it) as real processes on Postgres and
// Redis, the fix applied with `npm run admin -- demo exec` while they run, and plain HTTP from outside.

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const redisPrefix = `opsi_t_${randomBytes(5).toString('hex')}`;
let database: TestDatabase;
let redis: Redis;
let api: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;
let member: TestMember;
let token: string;

const env = () => ({ DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redisPrefix, NODE_ENV: 'test' });

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createRedis(REDIS_URL, 'command');
  member = await createTenantWithUser({ db: database.db });
  token = (await mintTestToken({ db: database.db }, member, 'read_write')).token;
  await connectEnvironment(database.db, member.tenant.id, {
    kind: 'demo',
    seed: 42,
    size: 'small',
    epoch: '2026-11-01',
  });
  await runScan(database.db, (await requestScan(database.db, null, member.tenant.id, 'test')).id);
  api = await startService(env(), { entry: 'apps/api/src/main.ts' });
  const metricsPort = await freePort();
  worker = await startService(
    { ...env(), DATABASE_POOL_MAX: '3', WORKER_METRICS_PORT: String(metricsPort), WORKER_QUEUES: undefined },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([api, worker].map((p) => p?.stop(10_000)));
  if (redis) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  }
  await database?.close();
});

async function until(id: string, ok: (p: Record<string, any>) => boolean) {
  for (let i = 0; i < 600; i++) {
    const res = await call(api!.url, 'GET', `/api/pulse/plans/${id}`, { token });
    if (ok(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`plan ${id} never got there`);
}

describe('a resolution plan across real processes', () => {
  it('an open security group: plan, demo exec the fix, verify, finalize: resolved', async () => {
    const list = await call(api!.url, 'GET', '/api/v1/pulse/findings?domain=security', { token });
    const finding = list.body.findings.find((f: { check_id: string }) =>
      f.check_id.startsWith('security.sg_'),
    );
    expect(finding).toBeDefined();
    const created = await call(api!.url, 'POST', `/api/pulse/findings/${finding.id}/resolution-plan`, {
      token,
    });
    expect(created.status).toBe(202);
    const plan = await until(created.body.id, (p) => p.status === 'ready');
    for (const step of plan.steps.filter((s: { final: boolean }) => !s.final)) {
      if (step.fix_command) {
        const applied = await runAdmin(
          ['demo', 'exec', '--tenant', member.tenant.slug, step.fix_command.command],
          env(),
        );
        expect(applied.code, applied.stderr).toBe(0);
        expect(applied.json?.applied ?? applied.json).toBeDefined();
      }
      if (step.verification) {
        expect(
          (await call(api!.url, 'POST', `/api/pulse/plans/${plan.id}/steps/${step.seq}/verify`, { token }))
            .status,
        ).toBe(202);
        const checked = await until(plan.id, (p) => p.steps[step.seq - 1].status !== 'verifying');
        expect(checked.steps[step.seq - 1].status).toBe('verified');
      } else {
        expect(
          (await call(api!.url, 'POST', `/api/pulse/plans/${plan.id}/steps/${step.seq}/confirm`, { token }))
            .status,
        ).toBe(200);
      }
    }
    expect((await call(api!.url, 'POST', `/api/pulse/plans/${plan.id}/finalize`, { token })).status).toBe(
      202,
    );
    const done = await until(plan.id, (p) => p.status !== 'finalizing');
    expect(done.status).toBe('resolved');
    expect(done.final_check.outcome).toBe('resolved');
    const resolved = await call(api!.url, 'GET', '/api/v1/pulse/resolved?domain=security', { token });
    expect(resolved.body.resolved.map((r: { finding_id: string }) => r.finding_id)).toContain(finding.id);
  }, 120_000);
});
