import type { Config } from '@opsi/config';
import { AgentBudget } from '@opsi/core';
import { bullPrefix, JobProducer, QueueEvents, RunEventLog, RunStreamHub, TimelineLog } from '@opsi/jobs';
import type { Logger } from '@opsi/logger';
import { createRedis, whenReady, type RedisClient } from '@opsi/redis';

/** The API's Redis side of agent runs: enqueue, event log, live delivery, budget. */
export interface RunServices {
  producer: JobProducer;
  log: RunEventLog;
  hub: RunStreamHub;
  budget: AgentBudget;
  /** Incident timelines: the live log and its hub (the run hub's machinery on its own connection). */
  timeline: TimelineLog;
  timelineHub: RunStreamHub;
  /** Completion events of the triage queue, opened on first use, for POST /api/v1/triage/alerts. */
  triageEvents(): Promise<QueueEvents>;
}

export interface ApiRuntime {
  /** The request-path command connection (also used by /readyz). */
  redis: RedisClient;
  runs: RunServices;
  /** Waits (at most `timeoutMs`) until the command and producer connections are ready; false if not. */
  connected(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Opens the API process's Redis connections, one per role: commands, the queue producer, and one
 * blocking connection that carries every live SSE stream of this process (on a Redis Cluster, one per
 * stream shard in use: see RunStreamHub). With REDIS_CLUSTER each is an ioredis Cluster from the seed.
 */
export function createApiRuntime(config: Config, redisUrl: string, logger: Logger): ApiRuntime {
  const redis = createRedis(redisUrl, 'command', config.REDIS_CLUSTER);
  const producerConnection = createRedis(redisUrl, 'producer', config.REDIS_CLUSTER);
  const blocking = createRedis(redisUrl, 'blocking', config.REDIS_CLUSTER);
  for (const [role, client] of [
    ['command', redis],
    ['producer', producerConnection],
    ['blocking', blocking],
  ] as const) {
    client.on('error', (err) => logger.warn({ err, role }, 'redis connection error'));
  }
  const log = new RunEventLog(redis, config.REDIS_PREFIX, config.RUN_STREAM_TTL_SECONDS);
  const timeline = new TimelineLog(redis, config.REDIS_PREFIX);
  const timelineBlocking = createRedis(redisUrl, 'blocking', config.REDIS_CLUSTER);
  timelineBlocking.on('error', (err) => logger.warn({ err, role: 'blocking' }, 'redis connection error'));
  let triageEvents: Promise<QueueEvents> | undefined;
  let queueEvents: QueueEvents | undefined;
  let queueEventsConnection: RedisClient | undefined;
  const runs: RunServices = {
    timeline,
    timelineHub: new RunStreamHub(timeline, timelineBlocking, redis, config.REDIS_PREFIX, logger),
    triageEvents() {
      triageEvents ??= (async () => {
        queueEventsConnection = createRedis(redisUrl, 'blocking', config.REDIS_CLUSTER);
        queueEvents = new QueueEvents('triage', {
          connection: queueEventsConnection,
          prefix: bullPrefix(config.REDIS_PREFIX, 'triage', config.REDIS_CLUSTER),
        });
        queueEvents.on('error', (err) => logger.warn({ err }, 'triage queue events error'));
        await queueEvents.waitUntilReady();
        return queueEvents;
      })();
      return triageEvents;
    },
    producer: new JobProducer(producerConnection, config.REDIS_PREFIX, {
      tenantBacklogMax: config.QUEUE_TENANT_BACKLOG_MAX,
    }),
    log,
    hub: new RunStreamHub(log, blocking, redis, config.REDIS_PREFIX, logger),
    budget: new AgentBudget(redis, config.REDIS_PREFIX),
  };
  return {
    redis,
    runs,
    async connected(timeoutMs = 10_000) {
      const ready = await Promise.all([
        whenReady(redis, timeoutMs),
        whenReady(producerConnection, timeoutMs),
      ]);
      return ready.every(Boolean);
    },
    async close() {
      await runs.hub.stop();
      await runs.timelineHub.stop();
      if (queueEvents) {
        await queueEvents.close().catch(() => undefined);
        queueEventsConnection?.disconnect();
      }
      timelineBlocking.disconnect();
      await runs.producer.close();
      blocking.disconnect();
      producerConnection.disconnect();
      redis.disconnect();
    },
  };
}
