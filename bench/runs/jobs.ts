// (c) no-op job throughput: JobProducer.enqueue + createQueueWorker vs bare Queue.add + Worker, same job
// options, same concurrency, same count, each round on a Redis prefix of its own.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { bullPrefix, createQueueWorker, JobProducer, QUEUES } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import { track } from './lib/env';
import { pool } from './lib/stats';

export interface JobRound {
  /** Jobs/s while enqueueing with `window` adds in flight (no worker running). */
  enqueueRate: number;
  /** Jobs/s while a worker at `concurrency` drains the filled queue. */
  drainRate: number;
  /** Jobs / (enqueue time + drain time). */
  overallRate: number;
}

export interface JobOptions {
  jobs: number;
  concurrency: number;
  /** Adds in flight while enqueueing. */
  window: number;
}

const WORKER_TIMING = { lockDuration: 15_000, stalledInterval: 5_000, maxStalledCount: 2 };

function payloads(n: number) {
  return Array.from({ length: n }, () => ({ run_id: randomUUID(), tenant_id: randomUUID() }));
}

async function drain(worker: Worker, n: number): Promise<number> {
  let completed = 0;
  const done = new Promise<void>((resolve, reject) => {
    worker.on('completed', () => {
      if (++completed === n) resolve();
    });
    worker.on('failed', (job, err) => reject(new Error(`job ${job?.id} failed: ${err.message}`)));
  });
  await worker.waitUntilReady();
  const started = performance.now();
  void worker.run();
  await done;
  return performance.now() - started;
}

/** Ours: the typed producer and the queue-worker factory with a no-op agent.turn handler. */
export async function jobsOurs(redisUrl: string, prefix: string, o: JobOptions): Promise<JobRound> {
  const data = payloads(o.jobs);
  const producerConnection = createRedis(redisUrl, 'producer');
  const workerConnection = createRedis(redisUrl, 'worker');
  const untrack = track(() => {
    producerConnection.disconnect();
    workerConnection.disconnect();
  });
  await Promise.all([once(producerConnection, 'ready'), once(workerConnection, 'ready')]);
  const producer = new JobProducer(producerConnection, prefix);
  await producer.queue('agent').waitUntilReady();
  const logger = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, { app: 'bench' });
  try {
    const started = performance.now();
    await pool(o.jobs, o.window, (i) => producer.enqueue('agent', 'turn', data[i]!));
    const enqueueMs = performance.now() - started;
    const worker = createQueueWorker(
      'agent',
      { turn: async () => undefined },
      {
        connection: workerConnection,
        redisPrefix: prefix,
        concurrency: o.concurrency,
        logger,
        autorun: false,
        ...WORKER_TIMING,
      },
    );
    const drainMs = await drain(worker, o.jobs);
    await worker.close();
    return rates(o.jobs, enqueueMs, drainMs);
  } finally {
    await producer.close();
    producerConnection.disconnect();
    workerConnection.disconnect();
    untrack();
  }
}

/** Raw: Queue.add with agent.turn's job options, and a Worker with a no-op processor. */
export async function jobsRaw(redisUrl: string, prefix: string, o: JobOptions): Promise<JobRound> {
  const data = payloads(o.jobs);
  const queueConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const untrack = track(() => {
    queueConnection.disconnect();
    workerConnection.disconnect();
  });
  const queue = new Queue('agent', { connection: queueConnection, prefix: bullPrefix(prefix) });
  await queue.waitUntilReady();
  const options = QUEUES.agent.jobs.turn.options;
  try {
    const started = performance.now();
    await pool(o.jobs, o.window, (i) => queue.add('turn', data[i]!, options));
    const enqueueMs = performance.now() - started;
    const worker = new Worker('agent', async () => undefined, {
      connection: workerConnection,
      prefix: bullPrefix(prefix),
      concurrency: o.concurrency,
      autorun: false,
      ...WORKER_TIMING,
    });
    const drainMs = await drain(worker, o.jobs);
    await worker.close();
    return rates(o.jobs, enqueueMs, drainMs);
  } finally {
    await queue.close();
    queueConnection.disconnect();
    workerConnection.disconnect();
    untrack();
  }
}

/** Raw addBulk (one round trip per chunk of 500), for reference: JobProducer has no bulk call. */
export async function enqueueBulkRaw(redisUrl: string, prefix: string, n: number): Promise<number> {
  const data = payloads(n);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const untrack = track(() => connection.disconnect());
  const queue = new Queue('agent', { connection, prefix: bullPrefix(prefix) });
  await queue.waitUntilReady();
  const options = QUEUES.agent.jobs.turn.options;
  try {
    const started = performance.now();
    for (let i = 0; i < n; i += 500)
      await queue.addBulk(data.slice(i, i + 500).map((d) => ({ name: 'turn', data: d, opts: options })));
    return n / ((performance.now() - started) / 1000);
  } finally {
    await queue.close();
    connection.disconnect();
    untrack();
  }
}

function rates(n: number, enqueueMs: number, drainMs: number): JobRound {
  return {
    enqueueRate: n / (enqueueMs / 1000),
    drainRate: n / (drainMs / 1000),
    overallRate: n / ((enqueueMs + drainMs) / 1000),
  };
}
