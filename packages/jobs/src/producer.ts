import { Queue, type JobsOptions } from 'bullmq';
import { isClusterClient, type RedisClient } from '@opsi/redis';
import { fairSlot } from './fairness';
import { bullPrefix, jobDefinition, type JobName, type JobPayload, type QueueName } from './queues';

export interface ProducerOptions {
  /**
   * How many jobs of one tenant may wait in one queue before `admit` (or an enqueue with `admit`)
   * refuses with BacklogFull (QUEUE_TENANT_BACKLOG_MAX). 0: no bound.
   */
  tenantBacklogMax?: number;
}

export type EnqueueOptions = Pick<
  JobsOptions,
  'jobId' | 'delay' | 'priority' | 'deduplication' | 'attempts' | 'backoff'
> & {
  /** Refuse with BacklogFull when the tenant's backlog on this queue is at its bound (a request's job). */
  admit?: boolean;
};

/**
 * The typed producer: validates a payload against its declared schema before it is enqueued, and queues
 * every tenant's jobs fairly (fairness.ts): a job of a payload with a tenant_id gets the priority that
 * puts it in round-robin order with the other tenants' waiting jobs.
 */
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();
  readonly tenantBacklogMax: number;

  /** `connection` should have the producer role: no offline queue, so enqueue fails fast when Redis is down. */
  constructor(
    private readonly connection: RedisClient,
    private readonly redisPrefix: string,
    options: ProducerOptions = {},
  ) {
    this.tenantBacklogMax = options.tenantBacklogMax ?? 0;
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.connection,
        prefix: bullPrefix(this.redisPrefix, name, isClusterClient(this.connection)),
      });
      queue.on('error', () => undefined); // surfaced by the failing call itself
      this.queues.set(name, queue);
    }
    return queue;
  }

  async enqueue<Q extends QueueName, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: JobPayload<Q, J>,
    options: EnqueueOptions = {},
  ) {
    const definition = jobDefinition(queue, job);
    if (!definition) throw new Error(`queue ${queue} declares no job ${job}`);
    const data = definition.schema.parse(payload) as { tenant_id?: unknown };
    const { admit, ...jobOptions } = options;
    const q = this.queue(queue);
    if (jobOptions.priority === undefined && typeof data.tenant_id === 'string') {
      const limit = admit ? this.tenantBacklogMax : 0;
      jobOptions.priority = (await fairSlot(this.connection, q, data.tenant_id, limit)).priority;
    }
    return q.add(job, data, { ...definition.options, ...jobOptions });
  }

  /**
   * Admits a job of `tenantId` to `queue` before anything is written for the request: refuses with
   * BacklogFull when the tenant already has QUEUE_TENANT_BACKLOG_MAX jobs waiting there, and otherwise
   * reserves the job's fair place. Pass the answer to enqueue as `{ priority }`. A reservation that is
   * never used costs nothing but one place.
   */
  async admit(queue: QueueName, tenantId: string): Promise<{ priority: number }> {
    const slot = await fairSlot(this.connection, this.queue(queue), tenantId, this.tenantBacklogMax);
    return { priority: slot.priority };
  }

  /**
   * How many workers listen on a queue now (BullMQ names worker connections and reads CLIENT LIST), or
   * null where the server does not tell (some managed Redis refuse CLIENT LIST).
   */
  async workerCount(name: QueueName): Promise<number | null> {
    try {
      return await this.queue(name).getWorkersCount();
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
