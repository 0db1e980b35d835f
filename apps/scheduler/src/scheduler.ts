import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import { JobProducer } from '@opsi/jobs';
import type { Logger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import { reconcileSchedules } from './reconcile';

export interface SchedulerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redisUrl: string;
}

export interface RunningScheduler {
  /** Runs one reconciliation now (also what the timer does). */
  reconcile(): ReturnType<typeof reconcileSchedules>;
  close(): Promise<void>;
}

/**
 * Keeps per-tenant job schedulers (nightly scan in 01:00-05:00, morning report at 07:00, tenant time) in step
 * with the tenants table: at start, then every SCHEDULER_INTERVAL_MS.
 */
export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  const producer = new JobProducer(
    createRedis(deps.redisUrl, 'producer', deps.config.REDIS_CLUSTER),
    deps.config.REDIS_PREFIX,
  );
  const reconcile = async () => {
    const result = await reconcileSchedules(deps.db, producer);
    if (result.upserted.length || result.removed.length) deps.logger.info(result, 'schedules reconciled');
    return result;
  };
  let running: Promise<unknown> = reconcile().catch((err) => deps.logger.error({ err }, 'reconcile failed'));
  const timer = setInterval(() => {
    running = running.then(reconcile).catch((err) => deps.logger.error({ err }, 'reconcile failed'));
  }, deps.config.SCHEDULER_INTERVAL_MS);
  timer.unref();
  deps.logger.info({ interval_ms: deps.config.SCHEDULER_INTERVAL_MS }, 'scheduler ready');
  return {
    reconcile,
    async close() {
      clearInterval(timer);
      await running;
      await producer.close();
      deps.logger.info('scheduler stopped');
    },
  };
}
