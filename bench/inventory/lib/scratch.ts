import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresDatabase, type Db } from '@opsi/db';
import { prepareTemplateDatabase, testServerUrl } from '@opsi/db/testing';

/**
 * Scratch databases are named opsi_bench_inv_<unix seconds>_<hex>: never the test suite's opsi_t_ prefix,
 * whose global setup drops test databases it finds idle (a suite may start while we run).
 */
const PREFIX = 'opsi_bench_inv_';

export function serverUrl(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
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
  /** Closes the pool and drops the database; safe to call twice. */
  close(): Promise<void>;
}

const open = new Set<Scratch>();

/** Every scratch database still open (for cleanup on an interrupt). */
export function openScratches(): Scratch[] {
  return [...open];
}

/**
 * A migrated scratch database, cloned from the test suite's template (built once if missing), with a
 * pool of `max` connections.
 */
export async function createScratch(max = 1): Promise<Scratch> {
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
      if (at < hourAgo) await admin.query(`drop database if exists "${datname}" with (force)`);
    }
    await admin.query(`create database "${name}" template "${template}"`);
  });
  const url = serverUrl(name);
  const handle = createPostgresDatabase(url, { max, applicationName: 'opsi-bench-inventory' });
  let closed = false;
  const scratch: Scratch = {
    name,
    url,
    db: handle.db,
    async close() {
      if (closed) return;
      closed = true;
      open.delete(scratch);
      await handle.close().catch(() => undefined);
      await withAdmin((admin) => admin.query(`drop database if exists "${name}" with (force)`));
    },
  };
  open.add(scratch);
  return scratch;
}
