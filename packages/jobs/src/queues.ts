import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import { QUEUE_NAMES as NAMES, type QueueName as Name } from '@opsi/contracts';

const TenantId = z.uuid();

/** Completed jobs are kept a day (count-capped), failed ones a week, so Redis never fills up. */
const RETENTION: Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'> = {
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

function job<S extends z.ZodType>(schema: S, options: JobsOptions) {
  return { schema, options: { ...RETENTION, ...options } };
}

/**
 * Every queue, declared once: its job names, a payload schema per job (ids, never records or secrets),
 * and the retry policy of each job kind. Producer and worker both read this.
 */
export const QUEUES = {
  agent: {
    jobs: {
      // A thrown infrastructure error retries, and the retry resumes the same run (run.resumed). Model
      // and tool failures do not throw: they end the run with run.failed.
      turn: job(z.object({ run_id: z.uuid(), tenant_id: TenantId }), {
        attempts: 3,
        backoff: { type: 'exponential', delay: 1000 },
      }),
    },
  },
  pulse: {
    jobs: {
      scan: job(z.object({ tenant_id: TenantId, scan_id: z.uuid().optional() }), {
        attempts: 3,
        backoff: { type: 'exponential', delay: 30_000 },
      }),
      reinvestigate: job(z.object({ tenant_id: TenantId, finding_id: z.uuid() }), {
        attempts: 3,
        backoff: { type: 'exponential', delay: 5_000 },
      }),
      // The resilience engine over the graph of the inventory a scan just wrote (enqueued by the scan
      // job once it completes, job id `resilience-<scan_id>`). On the pulse queue: it reads what the
      // scan wrote, shares its pool sizing (memory bound per job, see docs/operations.md), and a tenant's
      // next scan cannot start before the pool has taken it.
      resilience: job(z.object({ tenant_id: TenantId, scan_id: z.uuid().optional() }), {
        attempts: 2,
        backoff: { type: 'exponential', delay: 10_000 },
      }),
    },
  },
  plans: {
    jobs: {
      // Generation failures do not throw: the plan shows `failed` with the reason (retryable by the user).
      generate: job(z.object({ tenant_id: TenantId, plan_id: z.string().min(1) }), { attempts: 2 }),
      // `tries` counts re-checks of a change the cloud has not reflected yet; `user_id` is who asked.
      verify: job(
        z.object({
          tenant_id: TenantId,
          plan_id: z.string().min(1),
          seq: z.number().int().min(1),
          user_id: z.uuid().optional(),
          tries: z.number().int().min(0).optional(),
        }),
        { attempts: 1 },
      ),
      finalize: job(
        z.object({ tenant_id: TenantId, plan_id: z.string().min(1), user_id: z.uuid().optional() }),
        { attempts: 2, backoff: { type: 'exponential', delay: 5_000 } },
      ),
    },
  },
  triage: {
    jobs: {
      // A batch of alerts posted to /api/v1/triage/alerts (concurrent requests of a tenant coalesced),
      // waiting in triage_inbox under one batch id; the payload lists the inbox ids. Each is decided once.
      alerts: job(
        z.object({
          tenant_id: TenantId,
          batch_id: z.uuid(),
          inbox_ids: z.array(z.number().int().positive()).max(10_000).optional(),
        }),
        { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
      ),
      // The alert events a scan brought into the inventory that were not triaged yet.
      scan: job(z.object({ tenant_id: TenantId, scan_id: z.uuid().optional() }), {
        attempts: 3,
        backoff: { type: 'exponential', delay: 5_000 },
      }),
    },
  },
  reports: {
    jobs: {
      // A scheduled job carries only the tenant: the first attempt records period_to in the job, so a
      // retry writes the same period's report (unique per tenant and period end).
      morning: job(
        z.object({
          tenant_id: TenantId,
          period_to: z.iso.datetime({ offset: true }).optional(),
          requested_by: z.string().min(1).max(200).optional(),
        }),
        { attempts: 3, backoff: { type: 'exponential', delay: 60_000 } },
      ),
      // One notifier delivery; attempts and backoff come from NOTIFY_ATTEMPTS / NOTIFY_BACKOFF_MS at enqueue.
      deliver: job(z.object({ tenant_id: TenantId, delivery_id: z.uuid() }), {
        attempts: 5,
        backoff: { type: 'exponential', delay: 30_000 },
      }),
    },
  },
} as const;

// The catalog declares exactly the vocabulary's queues.
export type QueueName = keyof typeof QUEUES;
true satisfies [QueueName] extends [Name] ? ([Name] extends [QueueName] ? true : false) : false;
export type JobName<Q extends QueueName> = keyof (typeof QUEUES)[Q]['jobs'] & string;
type JobDef<Q extends QueueName, J extends JobName<Q>> = (typeof QUEUES)[Q]['jobs'][J];
export type JobPayload<Q extends QueueName, J extends JobName<Q>> =
  JobDef<Q, J> extends { schema: infer S extends z.ZodType } ? z.infer<S> : never;

export const QUEUE_NAMES: readonly QueueName[] = NAMES;

/** The definition of one job, or undefined for a name the queue does not declare. */
export function jobDefinition(
  queue: QueueName,
  name: string,
): { schema: z.ZodType; options: JobsOptions } | undefined {
  const jobs = QUEUES[queue].jobs as Record<string, { schema: z.ZodType; options: JobsOptions }>;
  return Object.hasOwn(jobs, name) ? jobs[name] : undefined;
}

/**
 * BullMQ's key prefix under ours: `<REDIS_PREFIX>:bull` on a single Redis. On a Redis Cluster each
 * queue's prefix carries the queue's own hash tag, `<REDIS_PREFIX>:bull:{<queue>}`, as BullMQ's cluster
 * guide requires (its scripts touch many keys of one queue): every key of a queue, our fair-queuing hash
 * included, shares the queue's slot, and different queues sit in different slots.
 */
export function bullPrefix(redisPrefix: string, queue?: string, cluster = false): string {
  if (!cluster) return `${redisPrefix}:bull`;
  if (!queue) throw new Error('bullPrefix: a queue name is needed on a Redis Cluster');
  return `${redisPrefix}:bull:{${queue}}`;
}
