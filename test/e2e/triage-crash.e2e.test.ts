import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';
import { call, createTenantWithUser, mintTestToken } from '../support/index';
import { freePort, startService, type ServiceProcess } from '../support/processes';

// A triage worker SIGKILLed in the middle of a coalesced batch: the batch is taken over by another worker
// and every alert is decided exactly once (no alert lost, none counted twice), with real processes.

const REDIS_URL = 'redis://127.0.0.1:6379';
let database: TestDatabase;
let redis: Redis;
const redisPrefix = `opsi_e2e_${randomBytes(5).toString('hex')}`;
let api: ServiceProcess | undefined;
const workers: ServiceProcess[] = [];
let token = '';
let tenantId = '';

async function startWorker(): Promise<ServiceProcess> {
  const metricsPort = await freePort();
  const worker = await startService(
    {
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '3',
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      NODE_ENV: 'test',
      WORKER_QUEUES: 'triage',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      WORKER_METRICS_PORT: String(metricsPort),
    },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
  workers.push(worker);
  return worker;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, boundMs = 120_000) {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const processed = async () =>
  (
    await database.db
      .selectFrom('triage_inbox')
      .select(sql<number>`count(*) filter (where processed_at is not null)::int`.as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow()
  ).n;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createRedis(REDIS_URL, 'command');
  const member = await createTenantWithUser({ db: database.db });
  tenantId = member.tenant.id;
  token = (await mintTestToken({ db: database.db }, member, 'read_write')).token;
  api = await startService(
    {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      NODE_ENV: 'test',
      TRIAGE_WAIT_MS: '200', // answer pending quickly: the test follows the batch in the database
    },
    { entry: 'apps/api/src/main.ts' },
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...workers, ...(api ? [api] : [])].map((p) => p.stop(10_000).catch(() => undefined)));
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

describe('triage batch and a worker crash', () => {
  it('a worker SIGKILLed mid-batch: the batch is re-processed, every alert counted exactly once', async () => {
    const doomed = await startWorker();
    // 999 alerts (at most 1,000 per request) of 333 fingerprints: each fingerprint's first alert opens an incident (its own
    // transaction), the repeats are counted together at the end of the pass.
    const fingerprints = 333;
    const body = Array.from({ length: 999 }, (_, i) => ({
      title: `crash alert ${i % fingerprints}`,
      severity: 'high',
      source: 'e2e',
      fingerprint: `crash-${i % fingerprints}`,
    }));
    const res = await call(api!.url, 'POST', '/api/v1/triage/alerts', { token, body });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(999);
    // Kill the worker once it has decided some of the batch, but not all of it.
    const atKill = await until('the batch to be under way', async () => {
      const n = await processed();
      return n > 0 ? n : undefined;
    });
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const afterKill = await processed();
    expect(atKill).toBeLessThan(999);
    expect(afterKill).toBeLessThan(999); // the in-memory repeats of the pass died with it
    await startWorker();
    await until('every alert to be decided', async () => ((await processed()) === 999 ? true : undefined));
    const events = await database.db
      .selectFrom('triage_events')
      .select(['fingerprint', 'count', 'action', 'incident_id'])
      .where('tenant_id', '=', tenantId)
      .execute();
    expect(events).toHaveLength(fingerprints);
    expect(events.every((e) => e.count === 3)).toBe(true);
    expect(events.reduce((n, e) => n + e.count, 0)).toBe(999);
    expect(new Set(events.map((e) => e.fingerprint)).size).toBe(fingerprints);
    const incidents = await database.db
      .selectFrom('incidents')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    expect(incidents.n).toBe(fingerprints);
    // Every inbox row points at its fingerprint's event.
    const orphans = await database.db
      .selectFrom('triage_inbox as b')
      .leftJoin('triage_events as e', 'e.id', 'b.event_id')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('b.tenant_id', '=', tenantId)
      .where(sql<boolean>`e.fingerprint is distinct from b.alert->>'fingerprint'`)
      .executeTakeFirstOrThrow();
    expect(orphans.n).toBe(0);
  });
});
