import { loadConfigOrExit } from '@opsi/config';
import { openDatabase } from '@opsi/db';
import { createLogger } from '@opsi/logger';
import { startScheduler } from './scheduler';

const config = loadConfigOrExit();
const logger = createLogger(config, { app: 'scheduler' });
if (!config.DATABASE_URL || !config.REDIS_URL) {
  logger.fatal(
    'apps/scheduler needs DATABASE_URL and REDIS_URL; on one machine without them, run `npm start`',
  );
  process.exit(2);
}
const database = await openDatabase(config, 'opsi-scheduler');
const scheduler = await startScheduler({ config, logger, db: database.db, redisUrl: config.REDIS_URL });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    await scheduler.close();
    await database.close();
    process.exit(0);
  });
}
