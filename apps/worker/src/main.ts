import { loadConfigOrExit } from '@opsi/config';
import { openDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { startWorker } from './worker';

const config = loadConfigOrExit();
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
    // Jobs handed back past the grace may still hold a connection for a statement: do not wait on them.
    await Promise.race([database.close(), new Promise((r) => setTimeout(r, 5000).unref())]);
    process.exit(0);
  });
}
