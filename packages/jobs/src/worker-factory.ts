import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { isClusterClient, type RedisClient } from '@opsi/redis';
import type { Logger } from '@opsi/logger';
import { bullPrefix, jobDefinition, QUEUES, type JobName, type JobPayload, type QueueName } from './queues';

export interface JobContext {
  job: Job;
  /** The lock token, for job.moveToDelayed(…, token) and friends. */
  token: string | undefined;
  signal: AbortSignal;
  log: Logger;
}

export type JobHandler<Q extends QueueName, J extends JobName<Q>> = (
  payload: JobPayload<Q, J>,
  context: JobContext,
) => Promise<unknown>;

/** A handler for every job the queue declares: the compiler refuses a missing one. */
export type QueueHandlers<Q extends QueueName> = { [J in JobName<Q>]: JobHandler<Q, J> };

export interface QueueWorkerOptions {
  connection: RedisClient;
  redisPrefix: string;
  concurrency: number;
  lockDuration: number;
  stalledInterval: number;
  maxStalledCount: number;
  logger: Logger;
  autorun?: boolean;
}

/**
 * A BullMQ worker for one queue. The payload is parsed on consumption (jobs queued by older code exist);
 * an unknown job name or an invalid payload fails at once, without retry.
 */
export function createQueueWorker<Q extends QueueName>(
  queue: Q,
  handlers: QueueHandlers<Q>,
  o: QueueWorkerOptions,
) {
  for (const name of Object.keys(QUEUES[queue].jobs)) {
    if (typeof (handlers as Record<string, unknown>)[name] !== 'function') {
      throw new Error(`queue ${queue}: no handler for job ${name}`);
    }
  }
  const worker = new Worker(
    queue,
    async (job: Job, token?: string, signal?: AbortSignal) => {
      const log = o.logger.child({ queue, job: job.name, job_id: job.id, attempt: job.attemptsStarted });
      const definition = jobDefinition(queue, job.name);
      if (!definition) throw new UnrecoverableError(`unknown job ${queue}.${job.name}`);
      const parsed = definition.schema.safeParse(job.data);
      if (!parsed.success) {
        log.error({ issues: parsed.error.issues }, 'invalid job payload');
        throw new UnrecoverableError(
          `invalid payload for ${queue}.${job.name}: ${parsed.error.issues[0]?.message}`,
        );
      }
      const handler = (handlers as Record<string, JobHandler<Q, JobName<Q>>>)[job.name]!;
      return handler(parsed.data as JobPayload<Q, JobName<Q>>, {
        job,
        token,
        signal: signal ?? new AbortController().signal,
        log,
      });
    },
    {
      connection: o.connection,
      prefix: bullPrefix(o.redisPrefix, queue, isClusterClient(o.connection)),
      concurrency: o.concurrency,
      lockDuration: o.lockDuration,
      stalledInterval: o.stalledInterval,
      maxStalledCount: o.maxStalledCount,
      autorun: o.autorun ?? true,
    },
  );
  worker.on('error', (err) => o.logger.error({ err, queue }, 'worker error'));
  // Handlers throw errors whose messages are safe to log (no payload records, no secrets).
  worker.on('failed', (job, err) =>
    o.logger.warn(
      { queue, job: job?.name, job_id: job?.id, attempt: job?.attemptsMade, error: err.message },
      'job failed',
    ),
  );
  return worker;
}
