import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { Logger } from '@opsi/logger';

export interface SchedulerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redisUrl: string;
}

export interface RunningScheduler {
  close(): Promise<void>;
}

/**
 * Keeps per-tenant job schedulers (nightly scan, morning report) in step with the tenants table. The
 * schedules arrive with the durable-runs work; until then the process starts and stops cleanly.
 */
export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  deps.logger.info('scheduler ready (no schedules are defined yet)');
  return {
    async close() {
      deps.logger.info('scheduler stopped');
    },
  };
}
