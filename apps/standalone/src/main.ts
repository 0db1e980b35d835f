import { createApiRuntime, resolveRevision, startApi } from '@opsi/api';
import { loadConfigOrExit } from '@opsi/config';
import {
  connectEnvironment,
  DEMO_EMAIL,
  DEMO_PASSWORD,
  ensureDemoTenant,
  findLiveUserByEmail,
  requestScan,
} from '@opsi/core';
import { EmbeddedDatabaseBusyError, migrateToLatest, openDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { startEmbeddedRedis } from '@opsi/redis';
import { startScheduler } from '@opsi/scheduler';
import { startWorker } from '@opsi/worker';

// `npm start`: the whole service in one process for a single machine. With DATABASE_URL / REDIS_URL
// unset it runs embedded Postgres (PGlite under DATA_DIR) and an in-process Redis-compatible server,
// both loaded only in that mode. It is the one app that composes the others.

const config = loadConfigOrExit();
const logger = createLogger(config, { app: 'standalone' });

const embeddedRedis = config.REDIS_URL ? undefined : await startEmbeddedRedis();
const redisUrl = config.REDIS_URL ?? embeddedRedis!.url;
if (embeddedRedis) {
  logger.warn(
    'REDIS_URL is not set: running an embedded, in-memory Redis-compatible server (js-redis-server). ' +
      'It is for trying the service: queue state and run streams vanish when the process stops, and it is slow under load.',
  );
}

let database;
try {
  database = await openDatabase(config, 'opsi-standalone');
} catch (e) {
  if (e instanceof EmbeddedDatabaseBusyError) {
    logger.fatal(e.message);
    await embeddedRedis?.close();
    process.exit(2);
  }
  throw e;
}
if (database.kind === 'pglite')
  logger.warn({ dir: config.DATA_DIR }, 'DATABASE_URL is not set: using embedded Postgres (PGlite)');

const applied = await migrateToLatest(database.db);
if (applied.length) logger.info({ applied }, 'migrations applied');

let demo: Awaited<ReturnType<typeof ensureDemoTenant>> | undefined;
if (config.DEMO_SEED) {
  const seeded = await database.db
    .selectFrom('service_meta')
    .select('key')
    .where('key', '=', 'demo_seeded')
    .executeTakeFirst();
  if (!seeded) {
    demo = await ensureDemoTenant(database.db);
    const connected = await database.db
      .selectFrom('cloud_connections')
      .select('id')
      .where('tenant_id', '=', demo.tenant.id)
      .executeTakeFirst();
    if (!connected) await connectEnvironment(database.db, demo.tenant.id, { kind: 'demo' });
    await database.db
      .insertInto('service_meta')
      .values({ key: 'demo_seeded', value: JSON.stringify({ at: new Date().toISOString() }) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    logger.info({ tenant: demo.tenant.slug }, 'demo tenant seeded');
  }
}

const revision = resolveRevision(config.REVISION);
// One process: the worker's metrics are served on the API's /metrics, not on a port of their own.
const worker = await startWorker({ config, logger, db: database.db, redisUrl, metricsPort: 0 });
const scheduler = await startScheduler({ config, logger, db: database.db, redisUrl });
const runtime = createApiRuntime(config, redisUrl, logger);
await runtime.connected();
// The first start scans the demo environment in the background: the in-process worker takes it. Queued
// before the API listens, so the banner below is written before the first request can be answered.
if (demo) await requestScan(database.db, runtime.runs.producer, demo.tenant.id, 'first start');
const demoUser = await findLiveUserByEmail(database.db, DEMO_EMAIL);
const api = await startApi({
  config,
  logger,
  db: database.db,
  redis: runtime.redis,
  runs: runtime.runs,
  revision,
  extraMetrics: [worker.registry],
});

const url = config.PUBLIC_URL ?? api.url;
const banner = [`  opsi is running at ${url}  (revision ${revision})`];
if (demoUser) banner.push(`  Sign in at ${url}/login as ${DEMO_EMAIL} / ${DEMO_PASSWORD}`);
if (database.kind === 'pglite' || embeddedRedis) {
  banner.push('  Trial mode: embedded services. Set DATABASE_URL and REDIS_URL for real ones (see README).');
}
process.stdout.write(`\n${banner.join('\n')}\n\n`);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  // Never hang: whatever has not closed after the bound is cut.
  const deadline = setTimeout(() => {
    logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, config.WORKER_SHUTDOWN_GRACE_MS + 15_000).unref(); // outlasts the worker's grace for active runs
  await api.close();
  await worker.close();
  await scheduler.close();
  await runtime.close();
  await database!.close();
  await embeddedRedis?.close();
  clearTimeout(deadline);
  process.exit(0);
}
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));
