import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@opsi/logger';
import { createRedis, deleteKeys } from '@opsi/redis';
import { testRedisCluster, testRedisUrl } from '@opsi/test-support';
import { fillUp, startDrillRedis, until, type DrillRedis } from '../../../test/support/drills';
import { BacklogFull, fairKey, isRedisOutOfMemory, PRIORITY_MAX } from './fairness';
import { JobProducer } from './producer';
import { createQueueWorker } from './worker-factory';

// Fairness between tenants on a shared queue, the per-tenant backlog bound, and Redis at maxmemory.
// Every assertion is about order or admission, never about time.

const logger = createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' });
const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function setup(url = testRedisUrl(), tenantBacklogMax = 0) {
  const prefix = `opsi_t_fair_${randomUUID().slice(0, 8)}`;
  // The file's own maxmemory server (below) is a single Redis even in the cluster pass.
  const cluster = url === testRedisUrl() && testRedisCluster();
  const connection = createRedis(url, 'producer', cluster);
  const producer = new JobProducer(connection, prefix, { tenantBacklogMax });
  const command = createRedis(url, 'command', cluster);
  cleanup.push(async () => {
    await producer.close();
    await deleteKeys(command, `${prefix}*`).catch(() => undefined);
    command.disconnect();
    connection.disconnect();
  });
  /** A worker on the agent queue that records the tenant (and run) of each job it takes, one at a time. */
  const worker = (seen: string[], runs: string[] = []) => {
    const w = createQueueWorker(
      'agent',
      {
        turn: async (payload) => {
          seen.push(payload.tenant_id);
          runs.push(payload.run_id);
        },
      },
      {
        connection: createRedis(url, 'worker', cluster),
        redisPrefix: prefix,
        concurrency: 1,
        lockDuration: 5000,
        stalledInterval: 5000,
        maxStalledCount: 1,
        logger,
      },
    );
    cleanup.push(() => w.close());
    return w;
  };
  const turn = (tenant: string) => ({ run_id: randomUUID(), tenant_id: tenant });
  return { prefix, producer, command, worker, turn };
}

describe('fair queuing between tenants', () => {
  it('a tenant arriving behind another tenant’s flood is served among the next jobs, not after the flood', async () => {
    const { producer, worker, turn } = setup();
    const a = randomUUID();
    const b = randomUUID();
    for (let i = 0; i < 200; i++) await producer.enqueue('agent', 'turn', turn(a));
    for (let i = 0; i < 3; i++) await producer.enqueue('agent', 'turn', turn(b));
    const seen: string[] = [];
    worker(seen);
    await until('every job processed', () => (seen.length === 203 ? true : undefined));
    const positions = seen.flatMap((t, i) => (t === b ? [i] : []));
    // Round-robin: B's k-th job goes right after A's (k+1)-th (FIFO would put B at 200, 201, 202).
    expect(positions).toEqual([2, 4, 6]);
  });

  it('each tenant keeps its own order, and a newly flooding tenant does not overtake a waiting one', async () => {
    const { producer, worker, turn } = setup();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const ids: Array<[string, string]> = [];
    for (const [tenant, n] of [
      [a, 50],
      [b, 50],
      [c, 5],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const job = turn(tenant);
        ids.push([tenant, job.run_id]);
        await producer.enqueue('agent', 'turn', job, { jobId: job.run_id });
      }
    }
    const seenTenants: string[] = [];
    const seenRuns: string[] = [];
    worker(seenTenants, seenRuns);
    await until('every job processed', () => (seenRuns.length === 105 ? true : undefined));
    for (const tenant of [a, b, c]) {
      const mine = ids.filter(([t]) => t === tenant).map(([, id]) => id);
      expect(seenRuns.filter((_, i) => seenTenants[i] === tenant)).toEqual(mine);
    }
    // C's five jobs are all taken within the first 3 × 5 + 2 (one of A's and B's per round, ties FIFO).
    const lastC = seenTenants.lastIndexOf(c);
    expect(lastC).toBeLessThan(17);
    // B, which queued 50 behind A's 50, is interleaved with A from the start, not after A's last.
    expect(seenTenants.indexOf(b)).toBeLessThan(3);
  });

  it('the clock starts again once nothing waits and it has run far; priorities stay within BullMQ’s limit', async () => {
    const { producer, command, turn } = setup();
    const a = randomUUID();
    const queue = producer.queue('agent');
    await command.hset(fairKey(queue), 'v', 2 ** 20 + 5, `t:${a}`, 2 ** 20 + 9);
    const first = await producer.enqueue('agent', 'turn', turn(a));
    expect(first.opts.priority).toBe(1);
    expect(await command.hget(fairKey(queue), `t:${a}`)).toBe('1');

    // Near the top: the head waits at PRIORITY_MAX - 2 and the tenant's last place is PRIORITY_MAX - 1.
    await first.remove();
    await producer.enqueue('agent', 'turn', turn(randomUUID()), { priority: PRIORITY_MAX - 2 });
    await command.hset(fairKey(queue), `t:${a}`, PRIORITY_MAX - 1);
    const top = await producer.enqueue('agent', 'turn', turn(a));
    const clamped = await producer.enqueue('agent', 'turn', turn(a));
    expect([top.opts.priority, clamped.opts.priority]).toEqual([PRIORITY_MAX, PRIORITY_MAX]);
    expect(await queue.getJobCounts('prioritized')).toEqual({ prioritized: 3 });
  });

  it('jobs without a tenant, and jobs given a priority, are enqueued as asked', async () => {
    const { producer } = setup();
    const job = await producer.enqueue(
      'agent',
      'turn',
      { run_id: randomUUID(), tenant_id: randomUUID() },
      {
        priority: 7,
      },
    );
    expect(job.opts.priority).toBe(7);
    expect(PRIORITY_MAX).toBe(2 ** 21 - 1);
  });
});

describe('the per-tenant backlog bound', () => {
  it('refuses the tenant whose backlog is full (BacklogFull), admits others, and admits it again once its jobs are taken', async () => {
    const { producer, worker, turn } = setup(testRedisUrl(), 3);
    const a = randomUUID();
    const b = randomUUID();
    for (let i = 0; i < 3; i++) {
      const place = await producer.admit('agent', a);
      await producer.enqueue('agent', 'turn', turn(a), place);
    }
    const refused = await producer.admit('agent', a).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BacklogFull);
    expect(refused).toMatchObject({ queue: 'agent', tenantId: a, backlog: 3, limit: 3 });
    await expect(producer.enqueue('agent', 'turn', turn(a), { admit: true })).rejects.toBeInstanceOf(
      BacklogFull,
    );
    // Nothing was enqueued by the refusals.
    expect(await producer.queue('agent').getJobCounts('prioritized', 'waiting')).toEqual({
      prioritized: 3,
      waiting: 0,
    });
    // Another tenant is not affected.
    await producer.enqueue('agent', 'turn', turn(b), await producer.admit('agent', b));
    // Enqueues without admission (a job's follow-up work) are never refused.
    await producer.enqueue('agent', 'turn', turn(a));
    const seen: string[] = [];
    worker(seen);
    await until('every job processed', () => (seen.length === 5 ? true : undefined));
    await expect(producer.admit('agent', a)).resolves.toMatchObject({ priority: expect.any(Number) });
  });
});

describe('admissions while nothing waits', () => {
  it('get consecutive places: once their jobs land they count one each, and a later tenant is not put behind all of them', async () => {
    const { producer, worker, turn } = setup(testRedisUrl(), 3);
    const a = randomUUID();
    const b = randomUUID();
    // Three admissions of A before any of its jobs is in the queue (racing requests, or an API process
    // between its admission and its enqueue), then their jobs.
    const places = [];
    for (let i = 0; i < 3; i++) places.push(await producer.admit('agent', a));
    expect(new Set(places.map((p) => p.priority)).size).toBe(3);
    for (const place of places) await producer.enqueue('agent', 'turn', turn(a), place);
    // A's three waiting jobs are its bound: the fourth is refused.
    await expect(producer.admit('agent', a)).rejects.toMatchObject({ backlog: 3, limit: 3 });
    await producer.enqueue('agent', 'turn', turn(b), await producer.admit('agent', b));
    const seen: string[] = [];
    worker(seen);
    await until('every job processed', () => (seen.length === 4 ? true : undefined));
    // Round-robin as for a flood (see above): B shares the level after the head with A's second job and
    // comes after it. One shared place would have put B behind all three.
    expect(seen).toEqual([a, a, b, a]);
  });
});

describe('Redis at maxmemory with noeviction', () => {
  let redis: DrillRedis | undefined;
  afterAll(async () => redis?.destroy());

  it('an enqueue is refused with the OOM error (a 503 at the API); a job queued before is neither lost nor run twice', async () => {
    redis = await startDrillRedis();
    const { producer, command, worker, turn } = setup(redis.url);
    await command.config('SET', 'maxmemory-policy', 'noeviction');
    const a = randomUUID();
    const queued = turn(a);
    await producer.enqueue('agent', 'turn', queued, { jobId: queued.run_id });

    const used = Number(/used_memory:(\d+)/.exec(await command.info('memory'))![1]);
    await command.config('SET', 'maxmemory', String(used + 256 * 1024));
    await fillUp(command);
    const refused = await producer.enqueue('agent', 'turn', turn(a)).catch((e: unknown) => e);
    expect(isRedisOutOfMemory(refused)).toBe(true);
    const refusedAdmit = await producer.admit('agent', randomUUID()).catch((e: unknown) => e);
    expect(isRedisOutOfMemory(refusedAdmit)).toBe(true);

    // Memory comes back: the job queued before the refusal runs, once.
    await command.del(...(await command.keys('filler:*')));
    await command.config('SET', 'maxmemory', '0');
    const seen: string[] = [];
    worker(seen);
    await until('the queued job ran', () => (seen.length === 1 ? true : undefined));
    const job = await producer.queue('agent').getJob(queued.run_id);
    expect(await job!.getState()).toBe('completed');
    expect(await producer.queue('agent').getJobCounts('prioritized', 'waiting', 'active', 'failed')).toEqual({
      prioritized: 0,
      waiting: 0,
      active: 0,
      failed: 0,
    });
  });
});
