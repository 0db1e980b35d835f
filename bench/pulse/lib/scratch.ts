import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresDatabase, type Db } from '@opsi/db';
import { prepareTemplateDatabase, testServerUrl } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';

/**
 * Scratch databases are named opsi_bench_pulse_<unix seconds>_<hex>: never the test suite's opsi_t_
 * prefix, whose global setup drops idle test databases (a suite may start while we run), and never
 * bench/runs' opsi_bench_<seconds>_ pattern, whose stale sweep parses the part after the prefix.
 */
const PREFIX = 'opsi_bench_pulse_';

export function redisUrl(): string {
  return process.env.REDIS_URL || 'redis://127.0.0.1:6379';
}

export function serverUrl(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface Scratch {
  name: string;
  url: string;
  db: Db;
  redis: Redis;
  redisUrl: string;
  /** Every Redis key the API writes for us starts with this. */
  redisPrefix: string;
  /** Closes the pool and Redis, drops the database and sweeps the keys; safe to call twice. */
  close(): Promise<void>;
}

/**
 * A migrated scratch database, cloned from the test suite's template (built once if missing), and a
 * Redis prefix of our own.
 */
export async function createScratch(max = 5): Promise<Scratch> {
  const template = await prepareTemplateDatabase();
  const name = `${PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (admin) => {
    // Databases left by a run of this benchmark that was killed more than an hour ago.
    const stale = await admin.query<{ datname: string }>(
      'select datname from pg_database where datname like $1',
      [`${PREFIX}%`],
    );
    const hourAgo = Date.now() / 1000 - 3600;
    for (const { datname } of stale.rows) {
      const at = Number(datname.slice(PREFIX.length).split('_')[0]);
      if (Number.isFinite(at) && at < hourAgo)
        await admin.query(`drop database if exists "${datname}" with (force)`);
    }
    await admin.query(`create database "${name}" template "${template}"`);
  });
  const url = serverUrl(name);
  const handle = createPostgresDatabase(url, { max, applicationName: 'opsi-bench-pulse' });
  const redis = createRedis(redisUrl(), 'command');
  const redisPrefix = `opsi_bench_pulse_${randomBytes(5).toString('hex')}`;
  let closed = false;
  return {
    name,
    url,
    db: handle.db,
    redis,
    redisUrl: redisUrl(),
    redisPrefix,
    async close() {
      if (closed) return;
      closed = true;
      await handle.close().catch(() => undefined);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
          if (keys.length) await redis.unlink(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
        await withAdmin((admin) => admin.query(`drop database if exists "${name}" with (force)`));
      }
    },
  };
}
