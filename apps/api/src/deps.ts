import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { Logger } from '@opsi/logger';
import type { Redis } from '@opsi/redis';

/** Everything the API needs, built once by main.ts (or a test) and passed down. */
export interface ApiDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  revision: string;
}
