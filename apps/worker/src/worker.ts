import { createServer, type Server } from 'node:http';
import { createEngine, createPlanDrafter } from '@opsi/agent';
import type { Config } from '@opsi/config';
import {
  attemptDelivery,
  outboundPolicyFor,
  cancelChannel,
  domainBus,
  abandonFinalize,
  executeFinalizePlan,
  executeGeneratePlan,
  executeReinvestigation,
  executeRun,
  executeVerifyStep,
  type PlanDrafter,
  processAlertBatch,
  requestScan,
  runMorningReportJob,
  runResilience,
  triageInventoryAlerts,
  runScan,
  ScanBusy,
  secretBoxFor,
  sweepRuns,
  type JobState,
} from '@opsi/core';
import type { Db } from '@opsi/db';
import {
  createQueueWorker,
  DelayedError,
  JobProducer,
  RunEventLog,
  TimelineLog,
  type JobContext,
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

/** Another scan of the tenant is running: come back later rather than fail or run alongside. */
async function retryLaterIfBusy(e: unknown, ctx: JobContext): Promise<never> {
  if (!(e instanceof ScanBusy)) throw e;
  await ctx.job.moveToDelayed(Date.now() + 15_000, ctx.token);
  throw new DelayedError();
}

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
  // Incidents triage opens are delivered to notifiers subscribed to incident.opened.
  const triageDeps = {
    db: deps.db,
    timeline,
    dedupeWindowMinutes: config.TRIAGE_DEDUPE_WINDOW_MINUTES,
    correlationWindowMinutes: config.TRIAGE_CORRELATION_WINDOW_MINUTES,
    notify: { producer, policy: delivery },
  };
  // Handlers per queue: every declared queue has them.
  const handlers: { [Q in QueueName]?: QueueHandlers<Q> } = {
    pulse: {
      scan: async (payload, ctx) => {
        // A scheduled scan carries no scan id: record one, and keep it in the job so a retry reuses it.
        let scanId = payload.scan_id;
        if (!scanId) {
          scanId = (await requestScan(deps.db, null, payload.tenant_id, 'schedule')).id;
          await ctx.job.updateData({ ...payload, scan_id: scanId });
        }
        let scan;
        try {
          scan = await runScan(deps.db, scanId);
        } catch (e) {
          return retryLaterIfBusy(e, ctx);
        }
        // Resilience, notifications and triage react on the domain bus (packages/core/src/wiring.ts).
        await domainBus.emit('scan.ended', {
          db: deps.db,
          producer,
          delivery,
          tenantId: payload.tenant_id,
          scanId: scan.id,
          status: scan.status,
        });
        return { scan_id: scan.id, status: scan.status };
      },
      resilience: async (payload) => {
        const run = await runResilience(deps.db, payload.tenant_id, { scanId: payload.scan_id });
        return { run_id: run.id, findings: run.findings, risks: run.risks, stats: run.stats };
      },
      reinvestigate: async (payload, ctx) => {
        try {
          return await executeReinvestigation(deps.db, payload.tenant_id, payload.finding_id);
        } catch (e) {
          return retryLaterIfBusy(e, ctx);
        }
      },
    },
    plans: {
      generate: (payload) =>
        executeGeneratePlan(
          { db: deps.db, drafter, generationTimeoutMs: config.PLAN_GENERATION_TIMEOUT_MS },
          payload.tenant_id,
          payload.plan_id,
        ),
      verify: async (payload, ctx) => {
        const tries = payload.tries ?? 0;
        const result = await executeVerifyStep({ db: deps.db }, payload, {
          tries,
          retries: config.PLAN_VERIFY_RETRIES,
        });
        if (result.outcome !== 'retry') return result;
        // Not reflected by the cloud yet: check again shortly; the step stays `verifying`.
        await ctx.job.updateData({ ...payload, tries: tries + 1 });
        await ctx.job.moveToDelayed(Date.now() + config.PLAN_VERIFY_RETRY_DELAY_MS, ctx.token);
        throw new DelayedError();
      },
      finalize: async (payload, ctx) => {
        try {
          return await executeFinalizePlan({ db: deps.db }, payload);
        } catch (e) {
          // The last attempt gives the plan back (ready, with the reason): finalize can be asked again.
          if (ctx.job.attemptsMade + 1 >= (ctx.job.opts.attempts ?? 1))
            await abandonFinalize(deps.db, payload.tenant_id, payload.plan_id, (e as Error).message);
          throw e;
        }
      },
    },
    reports: {
      morning: async (payload, ctx) => {
        // A scheduled job names no period end: record one, so a retry writes the same period's report.
        let periodTo = payload.period_to;
        if (!periodTo) {
          periodTo = new Date().toISOString();
          await ctx.job.updateData({ ...payload, period_to: periodTo });
        }
        return runMorningReportJob(
          deps.db,
          producer,
          {
            tenantId: payload.tenant_id,
            periodTo: new Date(periodTo),
            requestedBy: payload.requested_by ?? 'schedule',
          },
          delivery,
        );
      },
      deliver: (payload, ctx) =>
        attemptDelivery(deps.db, secretBoxFor(config), payload.delivery_id, {
          tenantId: payload.tenant_id,
          lastAttempt: ctx.job.attemptsStarted >= (ctx.job.opts.attempts ?? 1),
          timeoutMs: config.NOTIFY_TIMEOUT_MS,
          publicUrl: config.publicUrl,
          outbound: outboundPolicyFor(config),
        }),
    },
    triage: {
      alerts: (payload) =>
        processAlertBatch(triageDeps, payload.tenant_id, payload.batch_id, payload.inbox_ids),
      scan: (payload) => triageInventoryAlerts(triageDeps, payload.tenant_id),
    },
    agent: {
      turn: (payload, ctx) =>
        executeRun(
          {
            db: deps.db,
            redis: command,
            log,
            engine,
            redisPrefix: prefix,
            turnTimeoutMs: config.AGENT_TURN_TIMEOUT_MS,
            timeline,
          },
          payload.run_id,
          { attempt: ctx.job.attemptsStarted, signal: ctx.signal, log: ctx.log },
        ),
    },
  };
  const workers: Worker[] = [];
  for (const queue of config.WORKER_QUEUES) {
    const queueHandlers = handlers[queue];
    if (!queueHandlers) {
      throw new Error(`WORKER_QUEUES names ${queue}, whose jobs have no handlers in this version`);
    }
    workers.push(
      createQueueWorker(queue, queueHandlers as never, {
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
