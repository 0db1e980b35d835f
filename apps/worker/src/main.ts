import { ConfigError, loadConfig } from '@opsi/config';
import { openDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { startWorker } from './worker';

let config;
try {
  config = loadConfig();
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(2);
}
const logger = createLogger(config, { app: 'worker' });
if (!config.DATABASE_URL || !config.REDIS_URL) {
  logger.fatal('apps/worker needs DATABASE_URL and REDIS_URL; on one machine without them, run `npm start`');
  process.exit(2);
}
const database = await openDatabase(config, 'opsi-worker');
const worker = await startWorker({ config, logger, db: database.db, redisUrl: config.REDIS_URL });

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker stopping');
    await worker.close();
    await database.close();
    process.exit(0);
  });
}
