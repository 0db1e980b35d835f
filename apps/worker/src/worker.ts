import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { Logger } from '@opsi/logger';

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redisUrl: string;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/**
 * Starts the worker pools named by configuration. The queues (agent, pulse, plans, reports) arrive with
 * the durable-runs work; until then the process connects, reports ready, and shuts down cleanly.
 */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  deps.logger.info('worker ready (no queues are defined yet)');
  return {
    async close() {
      deps.logger.info('worker stopped');
    },
  };
}
