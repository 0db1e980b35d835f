import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '@opsi/config';
import type { Database } from './types';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

// pg hands back int8/numeric as strings and dates as local-midnight Dates: parse them once, here.
const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;
const parseNumber = (v: string) => Number(v);

function pgTypes(): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (oid === INT8 || oid === NUMERIC) return parseNumber;
      if (oid === DATE) return (v: string) => v;
      return pg.types.getTypeParser(oid, format);
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

/** A Kysely client over a pg pool for a Postgres server. */
export function createPostgresDatabase(
  url: string,
  opts: { max?: number; applicationName?: string; connectionTimeoutMillis?: number } = {},
) {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'opsi',
    types: pgTypes(),
    // 0 (pg's default) waits for a connection forever; a request path sets a bound.
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 0,
  });
  // A connection that breaks (Postgres restarted, the backend terminated, the network dropped) emits
  // 'error'; unheard, it crashes the process. The pool listens only while a client is idle: a client
  // checked out (Kysely holds one per query or transaction) has no listener, so every client gets its
  // own for life. Its query has already failed with the same error, and the pool discards a client
  // that is no longer queryable when it is released, so there is nothing more to do.
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres' as const, close: () => db.destroy() } satisfies DatabaseHandle;
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${dir} is in use by process ${pid} (the running service). ` +
        `Stop it first, or set DATABASE_URL to use a Postgres server that many processes can share.`,
    );
    this.name = 'EmbeddedDatabaseBusyError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Embedded Postgres (PGlite, file-backed under `dir`) through the same Kysely query compiler.
 * PGlite has a single owner: a lock file refuses a second process instead of corrupting the files.
 */
export async function createEmbeddedDatabase(dir: string): Promise<DatabaseHandle> {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const lockPath = join(root, 'pglite.lock');
  try {
    const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as { pid: number };
    if (holder.pid !== process.pid && isAlive(holder.pid))
      throw new EmbeddedDatabaseBusyError(root, holder.pid);
  } catch (e) {
    if (e instanceof EmbeddedDatabaseBusyError) throw e;
    // No lock, or a lock left by a process that is gone: ours to take.
  }
  writeFileSync(lockPath, JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
  // Loaded only in this mode: the WebAssembly build is large and servers never need it.
  const [{ PGlite }, { PGliteDialect }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ]);
  const client = await PGlite.create(join(root, 'pg'), {
    // PGlite ships contrib extensions as modules to load: the findings' similarity clustering needs pg_trgm.
    extensions: { pg_trgm },
    parsers: { [INT8]: parseNumber, [NUMERIC]: parseNumber, [DATE]: (v: string) => v },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
  let closed = false;
  return {
    db,
    kind: 'pglite',
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      rmSync(lockPath, { force: true });
    },
  };
}

/** The database the configuration names: a Postgres server, or PGlite under DATA_DIR when none is set. */
export function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX' | 'DATA_DIR'>,
  applicationName?: string,
  opts: { connectionTimeoutMillis?: number } = {},
): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) {
    return Promise.resolve(
      createPostgresDatabase(config.DATABASE_URL, {
        max: config.DATABASE_POOL_MAX,
        ...(applicationName ? { applicationName } : {}),
        ...opts,
      }),
    );
  }
  return createEmbeddedDatabase(config.DATA_DIR);
}
