import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '@opsi/config';
import { createPostgresDatabase, type DatabaseHandle } from './client';
import { migrateToLatest } from './migrate';
import { migrations } from './migrations/index';

const TEST_DB_PREFIX = 'opsi_t_';
/** Templates of other migration sets kept on the server, for concurrent runs of other checkouts. */
const KEPT_TEMPLATES = 8;

/** The Postgres server tests use: DATABASE_URL, or this machine's local Postgres. */
export function testServerUrl(): string {
  return loadConfig(process.env).DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/**
 * Where the harness creates, clones and drops databases: Postgres itself. Under `npm run
 * test:pgbouncer`, DATABASE_URL (every connection of the code under test, the template's migrations
 * included) is PgBouncer, and OPSI_TEST_ADMIN_DATABASE_URL the server behind it: a database with one of
 * PgBouncer's idle server connections open cannot be cloned or dropped.
 */
export function adminServerUrl(): string {
  return process.env.OPSI_TEST_ADMIN_DATABASE_URL || testServerUrl();
}

function urlFor(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

/** The template's name changes whenever the migrations do, so a stale template is never cloned. */
export function templateDatabaseName(): string {
  const digest = createHash('sha256').update(Object.keys(migrations).join('\n')).digest('hex').slice(0, 12);
  return `opsi_tpl_${digest}`;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminServerUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Seconds since the epoch at which a test database was created, from its name. */
function createdAt(datname: string): number {
  return Number(/^opsi_t_(\d+)_/.exec(datname)?.[1] ?? 0);
}

/**
 * Global setup: builds the migrated template once and drops databases that earlier runs left behind.
 * Another test run may be using this server at the same time, so a test database is dropped only
 * when it is old and nobody is connected to it, or very old; another template only when unused.
 */
export async function prepareTemplateDatabase(): Promise<string> {
  const template = templateDatabaseName();
  await withAdmin(async (admin) => {
    // Newest first (oids grow with creation), so the templates kept are the most recent ones.
    const candidates = await admin.query<{ datname: string; connections: number }>(
      `select d.datname, (select count(*)::int from pg_stat_activity a where a.datname = d.datname) as connections
         from pg_database d where d.datname like $1 or (d.datname like 'opsi_tpl_%' and d.datname <> $2)
        order by d.oid desc`,
      [`${TEST_DB_PREFIX}%`, template],
    );
    const now = Date.now() / 1000;
    let otherTemplates = 0;
    for (const { datname, connections } of candidates.rows) {
      if (datname.startsWith('opsi_tpl_')) {
        // Another run's template (or its build in progress). Checkouts with other migrations (branches,
        // worktrees) may be testing against this server right now and clone theirs at any moment, so
        // the newest few stay; older ones go when nobody uses them.
        if (datname.includes('_build_') || ++otherTemplates <= KEPT_TEMPLATES) continue;
        if (connections === 0) {
          await admin.query(`drop database if exists "${datname}"`).catch(() => undefined);
        }
        continue;
      }
      const age = now - createdAt(datname);
      if ((connections === 0 && age > 15 * 60) || age > 6 * 3600) {
        await admin.query(`drop database if exists "${datname}" with (force)`);
      }
    }
    const exists = await admin.query('select 1 from pg_database where datname = $1', [template]);
    if (exists.rowCount) return;
    const building = `${template}_build_${randomBytes(3).toString('hex')}`;
    await admin.query(`create database "${building}"`);
    const handle = createPostgresDatabase(urlFor(building), { max: 1 });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    // A pooler in between (test:pgbouncer) may still hold a server connection to it: a database can be
    // renamed, and later cloned, only with none open.
    await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [building],
    );
    // Renamed only once complete, so a crash mid-build never leaves a half-migrated template. Another
    // run may have built the same template meanwhile: then ours is dropped.
    try {
      await admin.query(`alter database "${building}" rename to "${template}"`);
    } catch (e) {
      await admin.query(`drop database if exists "${building}" with (force)`);
      const built = await admin.query('select 1 from pg_database where datname = $1', [template]);
      if (!built.rowCount) throw e;
    }
  });
  return template;
}

export interface TestDatabase extends DatabaseHandle {
  name: string;
  url: string;
}

/** A fresh database cloned from the migrated template: one per test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${TEST_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.query(`create database "${name}" template "${templateDatabaseName()}"`));
  const url = urlFor(name);
  const handle = createPostgresDatabase(url, { max: 5, applicationName: 'opsi-test' });
  return {
    ...handle,
    name,
    url,
    async close() {
      await handle.close();
      await withAdmin((admin) => admin.query(`drop database if exists "${name}" with (force)`));
    },
  };
}
