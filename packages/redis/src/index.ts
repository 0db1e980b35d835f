// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- cluster-key-slot ships no types: every program that compiles this file (each package's own tsc) must see them
/// <reference path="./cluster-key-slot.d.ts" />
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export { Cluster, Redis } from 'ioredis';

/** A connection to a single Redis, or to a Redis Cluster (REDIS_CLUSTER=true). */
export type RedisClient = Redis | Cluster;

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

/**
 * The options of a Cluster connection for a role, from the seed node's URL: the role's settings apply
 * to every node's connection (`redisOptions`, where BullMQ also looks for `maxRetriesPerRequest`), and
 * the role's retry and offline-queue policy to the cluster as a whole. The seed's credentials and TLS
 * (`rediss://`) apply to every node the cluster announces.
 */
export function clusterOptions(role: RedisRole, seedUrl: string): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...node } = redisOptions(role);
  const seed = new URL(seedUrl);
  const tls = seed.protocol === 'rediss:';
  return {
    lazyConnect,
    enableOfflineQueue,
    clusterRetryStrategy: retryStrategy,
    slotsRefreshTimeout: 2000,
    redisOptions: {
      ...node,
      ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
      ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
      ...(tls ? { tls: {} } : {}),
    },
    // With TLS (ElastiCache in-transit encryption, Memorystore), nodes are announced by names their
    // certificates hold: keep the name instead of resolving it to an address (ioredis's advice).
    ...(tls
      ? { dnsLookup: (address: string, done: (e: null, a: string) => void) => done(null, address) }
      : {}),
  };
}

/** A Redis connection configured for its role. */
export function createRedis(url: string, role: RedisRole): Redis;
/**
 * With `cluster` (REDIS_CLUSTER=true), `url` names a seed node of a Redis Cluster and the connection is
 * an ioredis Cluster: it reads the slot map from the seed and routes each command to the node that
 * owns its keys' slot (BullMQ accepts it as a connection).
 */
export function createRedis(url: string, role: RedisRole, cluster: boolean): RedisClient;
export function createRedis(url: string, role: RedisRole, cluster = false): RedisClient {
  let client: RedisClient;
  if (cluster) {
    const seed = new URL(url);
    client = new Cluster(
      [{ host: seed.hostname, port: Number(seed.port || 6379) }],
      clusterOptions(role, url),
    );
  } else {
    client = new Redis(url, redisOptions(role));
  }
  // Without a listener ioredis prints unhandled 'error' events; callers attach their logger too.
  client.on('error', () => undefined);
  return client;
}

/**
 * Resolves true once the connection is ready (a Cluster: once it has the slot map and its nodes), false
 * after `timeoutMs`. A fail-fast role (no offline queue) refuses commands until then, so a process waits
 * for it before it takes work; it starts anyway past the timeout (readiness then reports the outage).
 */
export async function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    client.on('ready', onReady);
  });
}

/** Whether a connection is to a Redis Cluster. */
export function isClusterClient(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/**
 * The connections to every master: the cluster's masters, or the one server. Commands that are not
 * about keys (SCAN, INFO, PING, CLIENT LIST) must go to each master of a cluster to cover it all.
 */
export function masters(client: RedisClient): Redis[] {
  return isClusterClient(client) ? client.nodes('master') : [client];
}

/** The Redis Cluster hash slot of a key (0..16383), honouring its `{hash tag}`. */
export function keySlot(key: string): number {
  return calculateSlot(key);
}

/**
 * What decides a key's slot: the content of its hash tag (the first `{…}` with something inside, as
 * Redis Cluster reads it), or the whole key. Keys with the same answer share a slot.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return key.slice(open + 1, close);
  }
  return key;
}

/**
 * How many hash tags event streams (runs, incident timelines) are spread over on a cluster. A stream
 * hub reads each tag's streams with one blocking XREAD on a connection of its own (a multi-key XREAD
 * must stay in one slot), so this bounds a hub's connections while spreading the streams over 16 slots
 * (on an even 3-master split: 4, 8 and 4 of them per master). Changing it renames the streams of runs in
 * flight: change it only with nothing running.
 */
export const STREAM_SHARDS = 16;

/**
 * The hash tag of an event stream on a cluster, `{stream-<n>}` with n = slot(id) mod STREAM_SHARDS; the
 * stream's key and the hub's wake-up key for it carry it. Empty (no tag) on a single Redis, where key
 * names stay as they always were.
 */
export function streamTag(client: RedisClient, id: string): string {
  return isClusterClient(client) ? `{stream-${calculateSlot(id) % STREAM_SHARDS}}:` : '';
}

/**
 * Answers when Redis answers, throws otherwise. On a cluster: the cluster says its state is `ok` (every
 * slot served) and every master answers PING.
 */
export async function pingRedis(client: RedisClient): Promise<void> {
  if (!isClusterClient(client)) {
    await client.ping();
    return;
  }
  const info = String(await client.cluster('INFO'));
  if (!/^cluster_state:ok/m.test(info)) throw new Error('Redis Cluster state is not ok');
  const nodes = client.nodes('master');
  if (nodes.length === 0) throw new Error('Redis Cluster has no master');
  await Promise.all(nodes.map((n) => n.ping()));
}

/**
 * Deletes every key matching `pattern` on every master (a SCAN of a cluster node sees only that node's
 * keys). One UNLINK per key, pipelined on the node that holds it: the keys of a page may sit in
 * different slots, and a multi-key UNLINK across slots is a CROSSSLOT error.
 */
export async function deleteKeys(client: RedisClient, pattern: string): Promise<number> {
  let deleted = 0;
  for (const node of masters(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length) {
        const pipeline = node.pipeline();
        for (const key of keys) pipeline.unlink(key);
        await pipeline.exec();
        deleted += keys.length;
      }
      cursor = next;
    } while (cursor !== '0');
  }
  return deleted;
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
