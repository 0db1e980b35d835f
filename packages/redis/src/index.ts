import { Redis, type RedisOptions } from 'ioredis';

export { Redis } from 'ioredis';

/**
 * What a connection is for. Settings follow BullMQ's production guide:
 * - `command`: request-path commands (budgets, stream reads and appends); fails fast when Redis is down,
 *   so an API request answers 503 instead of hanging; auto-pipelined.
 * - `producer`: BullMQ Queue connections; fail fast (no offline queue) for the same reason.
 * - `worker`: BullMQ Worker and blocking connections; retries forever (`maxRetriesPerRequest: null`),
 *   because a worker should ride out a Redis restart rather than crash.
 * - `blocking`: XREAD BLOCK readers; like `worker`, and never shared with other commands.
 */
export type RedisRole = 'command' | 'producer' | 'worker' | 'blocking';

export function redisOptions(role: RedisRole): RedisOptions {
  const base: RedisOptions = {
    lazyConnect: false,
    connectionName: `opsi-${role}`,
    retryStrategy: (times) => Math.min(1000 * 2 ** Math.min(times, 5), 20_000),
  };
  switch (role) {
    case 'command':
      // Auto-pipelining: commands issued in the same turn of the event loop (a worker's cancel-flag and
      // last-event reads, concurrent requests' budget and stream calls) go out in one socket write. A
      // loopback write costs both sides a syscall and a wake-up: bench/runs (docs/performance.md).
      return {
        ...base,
        maxRetriesPerRequest: 2,
        enableOfflineQueue: true,
        connectTimeout: 5000,
        enableAutoPipelining: true,
      };
    case 'producer':
      return { ...base, maxRetriesPerRequest: 2, enableOfflineQueue: false, connectTimeout: 5000 };
    case 'worker':
    case 'blocking':
      return { ...base, maxRetriesPerRequest: null, enableOfflineQueue: true };
  }
}

/** A Redis connection configured for its role. */
export function createRedis(url: string, role: RedisRole): Redis {
  const client = new Redis(url, redisOptions(role));
  // Without a listener ioredis prints unhandled 'error' events; callers attach their logger too.
  client.on('error', () => undefined);
  return client;
}

/** Builds key names under the configured prefix (hash-tag it, e.g. `{opsi}`, for Redis Cluster). */
export function keyspace(prefix: string) {
  return (...parts: Array<string | number>) => [prefix, ...parts].join(':');
}

export interface EmbeddedRedis {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the in-process Redis-compatible server used when REDIS_URL is unset. js-redis-server is young,
 * in-memory and slow under load: it is loaded only here, in single-machine trial mode, and never in tests
 * or production.
 */
export async function startEmbeddedRedis(): Promise<EmbeddedRedis> {
  const { createRedisMock } = await import('js-redis-server');
  const server = await createRedisMock({ port: 0 });
  const address = server.addresses()[0] as { host: string; port: number };
  return {
    url: `redis://${address.host}:${address.port}`,
    async close() {
      // close() waits for every client to hang up; bound it so a stuck client never blocks shutdown.
      await Promise.race([server.close(), new Promise((r) => setTimeout(r, 1000).unref())]);
    },
  };
}
