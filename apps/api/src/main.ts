import { loadConfigOrExit } from '@opsi/config';
import { openDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { resolveRevision } from './revision';
import { createApiRuntime } from './runtime';
import { startApi } from './server';

// The API process on its own (many machines). It needs shared services: the embedded ones have a single
// owner and live only in `npm start`.
const config = loadConfigOrExit();
const logger = createLogger(config, { app: 'api' });
if (!config.DATABASE_URL || !config.REDIS_URL) {
  logger.fatal('apps/api needs DATABASE_URL and REDIS_URL; on one machine without them, run `npm start`');
  process.exit(2);
}
// A request waits at most this long for a database connection, then answers 503 (errors.ts).
const database = await openDatabase(config, 'opsi-api', { connectionTimeoutMillis: 10_000 });
const runtime = createApiRuntime(config, config.REDIS_URL, logger);
// Fail-fast connections refuse commands until connected (a Cluster: until it has the slot map).
if (!(await runtime.connected()))
  logger.warn('redis not ready after 10 s; starting anyway (/readyz says 503)');
const api = await startApi({
  config,
  logger,
  db: database.db,
  redis: runtime.redis,
  runs: runtime.runs,
  revision: resolveRevision(config.REVISION),
});
logger.info({ url: api.url }, 'api listening');

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping');
    await api.close();
    await runtime.close();
    await database.close();
    process.exit(0);
  });
}
