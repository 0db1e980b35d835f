import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';
import { createTenantWithUser, mintTestToken, script } from '../support/index';
import { until } from '../support/drills';
import { freePort, startService, type ServiceProcess } from '../support/processes';

// Fairness between tenants with real processes, at a small scale: tenant A queues many turns, then
// tenant B one; a single worker slot then serves them. B's turn must be taken among the first few, not
// after A's backlog. Asserted on the order in which the worker started the runs, never on time.

const REDIS_URL = 'redis://127.0.0.1:6379';
const redisPrefix = `opsi_e2e_fair_${randomBytes(5).toString('hex')}`;
let database: TestDatabase;
let redis: Redis;
let api: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createRedis(REDIS_URL, 'command');
  api = await startService(
    { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redisPrefix, NODE_ENV: 'test' },
    { entry: 'apps/api/src/main.ts' },
  );
});

afterAll(async () => {
  await Promise.all([worker, api].map((p) => p?.stop(10_000).catch(() => undefined)));
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

/** Opens /api/v1/stream and hangs up once admitted (the run is durable); answers the run id. */
async function queueTurn(token: string, prompt: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${api!.url}/api/v1/stream?${new URLSearchParams({ prompt })}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const runId = res.headers.get('x-run-id')!;
  controller.abort();
  return runId;
}

describe('fair queuing across tenants (API and worker processes)', () => {
  it('a turn of tenant B queued behind 30 of tenant A is among the first three taken; each tenant keeps its order', async () => {
    const a = await createTenantWithUser({ db: database.db }, { budget: 100 });
    const b = await createTenantWithUser({ db: database.db }, { budget: 100 });
    const tokenA = (await mintTestToken({ db: database.db }, a, 'read_write')).token;
    const tokenB = (await mintTestToken({ db: database.db }, b, 'read_write')).token;
    const prompt = script([{ sleep: 5 }, { delta: 'x' }]); // the sleep keeps start times apart
    const runsA: string[] = [];
    for (let i = 0; i < 30; i++) runsA.push(await queueTurn(tokenA, prompt));
    const runB = await queueTurn(tokenB, prompt);

    // One worker with one slot: the queue's order is the order the runs start.
    const metricsPort = await freePort();
    worker = await startService(
      {
        DATABASE_URL: database.url,
        DATABASE_POOL_MAX: '3',
        REDIS_URL,
        REDIS_PREFIX: redisPrefix,
        NODE_ENV: 'test',
        AGENT_ENGINE: 'scripted',
        WORKER_QUEUES: 'agent',
        WORKER_CONCURRENCY_AGENT: '1',
        WORKER_METRICS_PORT: String(metricsPort),
      },
      { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
    );
    const rows = await until(
      'every run to finish',
      async () => {
        const all = await database.db
          .selectFrom('agent_runs')
          .select(['id', 'status', 'started_at', 'last_seq'])
          .where('id', 'in', [...runsA, runB])
          .execute();
        return all.every((r) => r.status === 'completed') ? all : undefined;
      },
      120_000,
    );
    const started = [...rows]
      .sort((x, y) => x.started_at!.getTime() - y.started_at!.getTime())
      .map((r) => r.id);
    // Round-robin: B's turn goes right behind A's second (first in first out would make it 31st).
    expect(started.indexOf(runB)).toBeLessThan(3);
    expect(started.filter((id) => id !== runB)).toEqual(runsA);
    // Durable as before: each run has its events numbered from 1 and ended once.
    for (const r of rows) expect(r.last_seq).toBeGreaterThanOrEqual(3);
  });
});
