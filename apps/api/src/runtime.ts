import type { Config } from '@opsi/config';
import { AgentBudget } from '@opsi/core';
import { JobProducer, RunEventLog, RunStreamHub } from '@opsi/jobs';
import type { Logger } from '@opsi/logger';
import { createRedis, type Redis } from '@opsi/redis';

/** The API's Redis side of agent runs: enqueue, event log, live delivery, budget. */
export interface RunServices {
  producer: JobProducer;
  log: RunEventLog;
  hub: RunStreamHub;
  budget: AgentBudget;
}

export interface ApiRuntime {
  /** The request-path command connection (also used by /readyz). */
  redis: Redis;
  runs: RunServices;
  close(): Promise<void>;
}

/**
 * Opens the API process's Redis connections, one per role: commands, the queue producer, and one
 * blocking connection that carries every live SSE stream of this process.
 */
export function createApiRuntime(config: Config, redisUrl: string, logger: Logger): ApiRuntime {
  const redis = createRedis(redisUrl, 'command');
  const producerConnection = createRedis(redisUrl, 'producer');
  const blocking = createRedis(redisUrl, 'blocking');
  for (const [role, client] of [
    ['command', redis],
    ['producer', producerConnection],
    ['blocking', blocking],
  ] as const) {
    client.on('error', (err) => logger.warn({ err, role }, 'redis connection error'));
  }
  const log = new RunEventLog(redis, config.REDIS_PREFIX, config.RUN_STREAM_TTL_SECONDS);
  const runs: RunServices = {
    producer: new JobProducer(producerConnection, config.REDIS_PREFIX),
    log,
    hub: new RunStreamHub(log, blocking, redis, config.REDIS_PREFIX, logger),
    budget: new AgentBudget(redis, config.REDIS_PREFIX),
  };
  return {
    redis,
    runs,
    async close() {
      await runs.hub.stop();
      await runs.producer.close();
      blocking.disconnect();
      producerConnection.disconnect();
      redis.disconnect();
    },
  };
}
