// Starts the floors of bench/floor as their own processes (the same way bench/runs starts the real API
// and worker: tsx, --expose-gc and the IPC agent preloaded, so they can be profiled and measured alike).
import { sql } from '@opsi/db';
import { startService, type Scratch, type Service } from '../runs/lib/env';

export interface Floor {
  api: Service;
  worker: Service;
  url: string;
  stop(): Promise<void>;
}

async function startPair(entry: string, env: Record<string, string>, nodeArgs: string[]): Promise<Floor> {
  const api = startService('floor-api', entry, { ...env, FLOOR_ROLE: 'api' }, nodeArgs);
  const worker = startService('floor-worker', entry, { ...env, FLOOR_ROLE: 'worker' }, nodeArgs);
  const [{ port }] = await Promise.all([api.waitFor<{ port: number }>('ready'), worker.waitFor('ready')]);
  return {
    api,
    worker,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await Promise.all([api.stop(5000), worker.stop(5000)]);
    },
  };
}

/**
 * The stream floor (bench/floor/stream.ts) on the scratch database and a Redis prefix of its own, with
 * a session of `tenantId` made for its runs; `concurrency` is its worker's (ours' agent concurrency).
 */
export async function startStreamFloor(
  s: Scratch,
  o: { tenantId: string; userId: string; concurrency: number; nodeArgs?: string[] },
): Promise<Floor> {
  const sessionId = crypto.randomUUID();
  await sql`insert into agent_sessions (id, tenant_id, created_by, name)
    values (${sessionId}, ${o.tenantId}, ${o.userId}, 'floor')`.execute(s.db);
  return startPair(
    'bench/floor/stream.ts',
    {
      DATABASE_URL: s.databaseUrl,
      REDIS_URL: s.redisUrl,
      FLOOR_PREFIX: `${s.redisPrefix}:floor`,
      FLOOR_SESSION_ID: sessionId,
      FLOOR_CONCURRENCY: String(o.concurrency),
    },
    o.nodeArgs ?? [],
  );
}

/**
 * The triage floor (bench/floor/triage.ts); `concurrency` is its worker's (ours' triage concurrency);
 * `coalesce`: concurrent requests go as one batch (group commit, as ours).
 */
export async function startTriageFloor(
  s: Scratch,
  o: { concurrency: number; pool: number; coalesce?: boolean; nodeArgs?: string[] },
): Promise<Floor> {
  return startPair(
    'bench/floor/triage.ts',
    {
      DATABASE_URL: s.databaseUrl,
      REDIS_URL: s.redisUrl,
      FLOOR_PREFIX: `${s.redisPrefix}:floor${o.coalesce ? '-gc' : ''}`,
      FLOOR_COALESCE: o.coalesce ? '1' : '0',
      FLOOR_CONCURRENCY: String(o.concurrency),
      DATABASE_POOL_MAX: String(o.pool),
    },
    o.nodeArgs ?? [],
  );
}
