import { expect } from 'vitest';
import { createTestContext, testRedisUrl, type TestContext } from './index';
import { freePort, runAdmin, startService, type ServiceProcess } from './processes';

/** The service as production runs it (API and worker as their own processes), for one test file. */
export interface SplitServices {
  /** The file's own database and Redis prefix. */
  t: TestContext;
  /** The environment the processes got (the API with `apiEnv` over it); operator commands run with it. */
  env: Record<string, string>;
  /** The API's base URL. */
  base: string;
  api: ServiceProcess;
  worker?: ServiceProcess;
  scheduler?: ServiceProcess;
  /** Starts one more worker on the same database and Redis (stopped by `stop`), with extra settings. */
  startWorker(extra?: Record<string, string>): Promise<ServiceProcess>;
  /** `npm run admin -- <args> --json` against the same database and Redis; expects exit 0, answers the JSON. */
  admin(args: string[], timeoutMs?: number): Promise<any>;
  /** Stops every process and drops the database and Redis keys. */
  stop(): Promise<void>;
}

/**
 * Starts the API (and by default a worker serving the default queues; a scheduler on request) as real
 * processes on a fresh test database and Redis prefix, with demo seeding off: the black-box and
 * end-to-end files all begin this way. `env` goes to every process; `apiEnv` to the API alone, over
 * `env`, where a setting given as undefined is left out so the API takes its default (e.g.
 * `{ DATABASE_POOL_MAX: undefined }`: the API with its default pool, the workers capped at 3).
 */
export async function startSplitServices(
  opts: {
    env?: Record<string, string>;
    apiEnv?: Record<string, string | undefined>;
    worker?: boolean;
    scheduler?: boolean;
  } = {},
): Promise<SplitServices> {
  const t = await createTestContext();
  const env: Record<string, string> = {
    DATABASE_URL: t.database.url,
    DATABASE_POOL_MAX: '3',
    REDIS_URL: testRedisUrl(),
    REDIS_CLUSTER: String(t.config.REDIS_CLUSTER),
    REDIS_PREFIX: t.redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
    ...opts.env,
  };
  const started: ServiceProcess[] = [];
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await t.close();
  };
  const startWorker = async (extra: Record<string, string> = {}) => {
    const metricsPort = await freePort();
    const worker = await startService(
      { ...env, ...extra, WORKER_METRICS_PORT: String(metricsPort) },
      { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
    );
    started.push(worker);
    return worker;
  };
  try {
    const api = await startService({ ...env, ...opts.apiEnv }, { entry: 'apps/api/src/main.ts' });
    started.push(api);
    const worker = opts.worker === false ? undefined : await startWorker();
    let scheduler: ServiceProcess | undefined;
    if (opts.scheduler) {
      scheduler = await startService(env, {
        entry: 'apps/scheduler/src/main.ts',
        readyUrl: `${api.url}/readyz`,
      });
      started.push(scheduler);
    }
    return {
      t,
      env,
      base: api.url,
      api,
      worker,
      scheduler,
      startWorker,
      async admin(args, timeoutMs = 180_000) {
        const r = await runAdmin(args, env, { timeoutMs });
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
        return r.json!;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
