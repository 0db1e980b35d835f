import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@opsi/logger';
import { createRedis, deleteKeys, whenReady } from '@opsi/redis';
import { testRedisCluster, testRedisUrl } from '@opsi/test-support';
import { JobProducer } from './producer';
import { RunEventLog } from './run-log';
import { createQueueWorker } from './worker-factory';

const prefix = `opsi_t_jobs_${randomUUID().slice(0, 8)}`;
const command = createRedis(testRedisUrl(), 'command', testRedisCluster());
const producerConnection = createRedis(testRedisUrl(), 'producer', testRedisCluster());
const producer = new JobProducer(producerConnection, prefix);
const logger = createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' });
const workerOptions = () => ({
  connection: createRedis(testRedisUrl(), 'worker', testRedisCluster()),
  redisPrefix: prefix,
  concurrency: 2,
  lockDuration: 5000,
  stalledInterval: 5000,
  maxStalledCount: 1,
  logger,
});

beforeAll(async () => {
  await command.config('SET', 'maxmemory-policy', 'noeviction').catch(() => undefined);
  // The producer's connection fails fast (no offline queue: "Cluster isn't ready" until it has the slot
  // map), so wait for it, as a process does before it takes requests.
  await whenReady(producerConnection, 10_000);
});
afterAll(async () => {
  await producer.close();
  await deleteKeys(command, `${prefix}*`);
  command.disconnect();
});

describe('job contracts', () => {
  it('the producer validates the payload against the declared schema before enqueueing', async () => {
    await expect(
      producer.enqueue('agent', 'turn', { run_id: 'not-a-uuid', tenant_id: randomUUID() }),
    ).rejects.toThrow();
    await expect(
      producer.enqueue('agent', 'nope' as 'turn', { run_id: randomUUID(), tenant_id: randomUUID() }),
    ).rejects.toThrow(/declares no job/);
    expect(await producer.queue('agent').getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('the worker factory demands a handler for every job of the queue', () => {
    expect(() =>
      createQueueWorker(
        'plans',
        { generate: async () => undefined, verify: async () => undefined } as never,
        {
          ...workerOptions(),
          autorun: false,
        },
      ),
    ).toThrow(/no handler for job finalize/);
  });

  it('an invalid payload (queued by other code) fails at once, without retry; a valid one is handled', async () => {
    const seen: string[] = [];
    const worker = createQueueWorker(
      'agent',
      { turn: async (p) => void seen.push(p.run_id) },
      workerOptions(),
    );
    const failed = new Promise<{ attemptsMade: number; failedReason: string }>((resolve) =>
      worker.on('failed', (job) => resolve(job!)),
    );
    // Bypass the producer, as an older or foreign producer would.
    await producer.queue('agent').add('turn', { run_id: 42 }, { attempts: 3 });
    const job = await failed;
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/invalid payload/);
    const runId = randomUUID();
    const done = new Promise((resolve) => worker.on('completed', resolve));
    await producer.enqueue('agent', 'turn', { run_id: runId, tenant_id: randomUUID() });
    await done;
    expect(seen).toEqual([runId]);
    await worker.close();
  });
});

describe('run event log', () => {
  const log = new RunEventLog(command, prefix, 120);

  it('numbers events 1, 2, 3… and refuses anything after the terminal event, which starts the expiry', async () => {
    const run = randomUUID();
    expect((await log.append(run, 'run.started', { attempt: 1 }))!.seq).toBe(1);
    expect((await log.append(run, 'message.delta', { text: 'a' }))!.seq).toBe(2);
    expect(await command.ttl(log.streamKey(run))).toBe(-1);
    const terminal = await log.append(run, 'run.completed', { reply: 'a' });
    expect(terminal).toMatchObject({ seq: 3, kind: 'run.completed', reply: 'a', run_id: run });
    expect(await log.append(run, 'run.failed', { detail: 'late' })).toBeNull();
    expect(await log.append(run, 'message.delta', { text: 'late' })).toBeNull();
    const ttl = await command.ttl(log.streamKey(run));
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    expect((await log.read(run, 0)).map((e) => [e.seq, e.kind])).toEqual([
      [1, 'run.started'],
      [2, 'message.delta'],
      [3, 'run.completed'],
    ]);
    expect((await log.read(run, 1)).map((e) => e.seq)).toEqual([2, 3]);
  });

  it('concurrent appends get distinct, dense numbers', async () => {
    const run = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => log.append(run, 'message.delta', { text: String(i) })),
    );
    expect(results.map((r) => r!.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });

  it('never reuses a number when the stream was lost: the floor from Postgres wins', async () => {
    const run = randomUUID();
    expect((await log.append(run, 'run.resumed', { attempt: 2, after_seq: 7 }, 7))!.seq).toBe(8);
  });
});
