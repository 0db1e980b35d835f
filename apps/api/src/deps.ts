import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { Logger } from '@opsi/logger';
import type { RedisClient } from '@opsi/redis';
import type { Registry } from 'prom-client';
import type { RunServices } from './runtime';

/** Everything the API needs, built once by main.ts (or a test) and passed down. */
export interface ApiDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: RedisClient;
  runs: RunServices;
  revision: string;
  /** More Prometheus registries to serve on /metrics (the worker's, in single-process mode). */
  extraMetrics?: Registry[];
}
