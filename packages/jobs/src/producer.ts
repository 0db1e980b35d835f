import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { bullPrefix, jobDefinition, type JobName, type JobPayload, type QueueName } from './queues';

/** The typed producer: validates a payload against its declared schema before it is enqueued. */
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();

  /** `connection` should have the producer role: no offline queue, so enqueue fails fast when Redis is down. */
  constructor(
    private readonly connection: Redis,
    private readonly redisPrefix: string,
  ) {}

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: bullPrefix(this.redisPrefix) });
      queue.on('error', () => undefined); // surfaced by the failing call itself
      this.queues.set(name, queue);
    }
    return queue;
  }

  async enqueue<Q extends QueueName, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: JobPayload<Q, J>,
    options: Pick<
      JobsOptions,
      'jobId' | 'delay' | 'priority' | 'deduplication' | 'attempts' | 'backoff'
    > = {},
  ) {
    const definition = jobDefinition(queue, job);
    if (!definition) throw new Error(`queue ${queue} declares no job ${job}`);
    const data = definition.schema.parse(payload);
    return this.queue(queue).add(job, data, { ...definition.options, ...options });
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
