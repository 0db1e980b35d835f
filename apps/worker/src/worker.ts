import { createServer, type Server } from 'node:http';
import { createEngine, createPlanDrafter } from '@opsi/agent';
import type { Config } from '@opsi/config';
import {
  agentJobs,
  cancelChannel,
  graphJobs,
  integrationJobs,
  inventoryJobs,
  planJobs,
  pulseJobs,
  reportJobs,
  sweepRuns,
  triageJobs,
  type JobState,
  type PlanDrafter,
} from '@opsi/core';
import type { Db } from '@opsi/db';
import {
  createQueueWorker,
  JobProducer,
  RunEventLog,
  TimelineLog,
  type QueueHandlers,
  type QueueName,
  type Worker,
} from '@opsi/jobs';
import type { Logger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import type { Registry } from 'prom-client';
import { createQueueMetrics } from './metrics';

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redisUrl: string;
  /** Serve /metrics and /healthz on this port (0: not at all, e.g. when the API serves the metrics). */
  metricsPort?: number;
}

export interface RunningWorker {
  registry: Registry;
  workers: Worker[];
  /** Stops taking jobs, lets active ones finish within WORKER_SHUTDOWN_GRACE_MS, then hands the rest back. */
  close(): Promise<void>;
}

const CONCURRENCY: Record<QueueName, keyof Config> = {
  agent: 'WORKER_CONCURRENCY_AGENT',
  pulse: 'WORKER_CONCURRENCY_PULSE',
  plans: 'WORKER_CONCURRENCY_PLANS',
  reports: 'WORKER_CONCURRENCY_REPORTS',
  triage: 'WORKER_CONCURRENCY_TRIAGE',
};

/** Starts one BullMQ worker per queue named in WORKER_QUEUES, each with its configured concurrency. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger } = deps;
  const prefix = config.REDIS_PREFIX;
  const connection = createRedis(deps.redisUrl, 'worker', config.REDIS_CLUSTER);
  const command = createRedis(deps.redisUrl, 'command', config.REDIS_CLUSTER);
  const producer = new JobProducer(createRedis(deps.redisUrl, 'producer', config.REDIS_CLUSTER), prefix);
  const log = new RunEventLog(command, prefix, config.RUN_STREAM_TTL_SECONDS);
  const timeline = new TimelineLog(command, prefix);
  const engine = createEngine({
    engine: config.AGENT_ENGINE,
    model: config.AGENT_MODEL,
    baseUrl: config.AGENT_BASE_URL,
    apiKey: config.AGENT_API_KEY,
    maxSteps: config.AGENT_MAX_STEPS,
    maxRetries: config.AGENT_MAX_RETRIES,
  });

  // A hosted AGENT_ENGINE also drafts plan steps; its drafts are validated like the built-in ones.
  const drafter = createPlanDrafter({
    engine: config.AGENT_ENGINE,
    model: config.AGENT_MODEL,
    baseUrl: config.AGENT_BASE_URL,
    apiKey: config.AGENT_API_KEY,
    maxRetries: config.AGENT_MAX_RETRIES,
  }) as PlanDrafter | undefined;

  const delivery = {
    attempts: config.NOTIFY_ATTEMPTS,
    backoffMs: config.NOTIFY_BACKOFF_MS,
    timeoutMs: config.NOTIFY_TIMEOUT_MS,
  };
  // Each domain brings its queue handlers (its jobs.ts); this process only hands them what they need.
  const jobDeps = { db: deps.db, config, producer, command, log, timeline, engine, drafter, delivery };
  const handlers: { [Q in QueueName]: QueueHandlers<Q> } = {
    pulse: { ...inventoryJobs(jobDeps).pulse, ...graphJobs(jobDeps).pulse, ...pulseJobs(jobDeps).pulse },
    plans: planJobs(jobDeps).plans,
    reports: { ...reportJobs(jobDeps).reports, ...integrationJobs(jobDeps).reports },
    triage: triageJobs(jobDeps).triage,
    agent: agentJobs(jobDeps).agent,
  };
  const workers: Worker[] = [];
  for (const queue of config.WORKER_QUEUES) {
    workers.push(
      createQueueWorker(queue, handlers[queue] as never, {
        connection,
        redisPrefix: prefix,
        concurrency: Number(config[CONCURRENCY[queue]]),
        lockDuration: config.WORKER_LOCK_DURATION_MS,
        stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
        maxStalledCount: config.WORKER_MAX_STALLED_COUNT,
        logger,
      }),
    );
  }
  const agentWorker = workers.find((w) => w.name === 'agent');

  // A deleted session cancels its run wherever it runs: the worker holding the job aborts it.
  const subscriber = agentWorker ? createRedis(deps.redisUrl, 'worker', config.REDIS_CLUSTER) : undefined;
  if (subscriber && agentWorker) {
    await subscriber.subscribe(cancelChannel(prefix));
    subscriber.on('message', (_channel, runId: string) => {
      if (agentWorker.cancelJob(runId, 'session deleted')) logger.info({ run_id: runId }, 'run cancelled');
    });
  }

  // The sweeper closes runs whose job is gone. Every agent worker runs it; it is safe concurrently.
  let sweeping: NodeJS.Timeout | undefined;
  if (agentWorker) {
    const queue = producer.queue('agent');
    const jobOf = async (runId: string) => {
      const job = await queue.getJob(runId);
      if (!job) return { state: 'missing' as JobState };
      return { state: (await job.getState()) as JobState, failedReason: job.failedReason };
    };
    // A run younger than a lock period may legitimately have no job state yet.
    const olderThanMs = Math.max(config.WORKER_LOCK_DURATION_MS * 2, 10_000);
    sweeping = setInterval(() => {
      sweepRuns({ db: deps.db, log, timeline }, jobOf, { olderThanMs })
        .then((r) => r.closed && logger.warn(r, 'sweeper closed lost runs'))
        .catch((err) => logger.error({ err }, 'sweep failed'));
    }, config.RUN_SWEEP_INTERVAL_MS);
    sweeping.unref();
  }

  const registry = createQueueMetrics(
    config.WORKER_QUEUES.map((q) => producer.queue(q)),
    workers,
    { defaultMetrics: (deps.metricsPort ?? config.WORKER_METRICS_PORT) > 0 },
  );
  let server: Server | undefined;
  const metricsPort = deps.metricsPort ?? config.WORKER_METRICS_PORT;
  if (metricsPort > 0) {
    server = createServer(async (req, res) => {
      if (req.url === '/metrics') {
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(await registry.metrics());
      } else if (req.url === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
      } else {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"detail":"Not found."}');
      }
    });
    await new Promise<void>((resolve) => server!.listen(metricsPort, config.HOST, resolve));
  }
  logger.info(
    {
      queues: config.WORKER_QUEUES,
      concurrency: Object.fromEntries(workers.map((w) => [w.name, w.opts.concurrency])),
    },
    'worker ready',
  );

  return {
    registry,
    workers,
    async close() {
      clearInterval(sweeping);
      const grace = config.WORKER_SHUTDOWN_GRACE_MS;
      await Promise.all(
        workers.map(async (worker) => {
          // worker.close() waits for active jobs and has no timeout of its own: bound it. Past the grace
          // the jobs are handed back by leaving them: BullMQ answers a second close(true) with the close
          // already under way (which waits for them), so nothing is awaited further; the process exits,
          // the jobs' locks expire, and another worker takes them over as stalled, as after a SIGKILL
          // (a run resumes after its last seq).
          let timer: NodeJS.Timeout | undefined;
          const outcome = await Promise.race([
            worker.close().then(() => 'drained' as const),
            new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), grace))),
          ]);
          clearTimeout(timer);
          if (outcome === 'timeout')
            logger.warn(
              { queue: worker.name, grace_ms: grace },
              'active jobs outlived the grace period; handing them back',
            );
        }),
      );
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      await producer.close();
      subscriber?.disconnect();
      connection.disconnect();
      command.disconnect();
      logger.info('worker stopped');
    },
  };
}
