import { once } from 'node:events';
import { createParser } from 'eventsource-parser';
import { createPostgresDatabase, migrateToLatest, type DatabaseHandle } from '@opsi/db';
import { createTenantWithUser, mintTestToken } from './index';
import { startDrillPostgres, startDrillRedis, type DrillPostgres, type DrillRedis } from './drills';
import { freePort, startService, type ServiceProcess } from './processes';

// The service as production runs it (API, worker and scheduler as separate processes) against a
// Postgres and a Redis of the drill's own, which the drill stops and starts. Used by the CI-scale
// drills (test/drills) and by `npm run drills` (drills/), which starts two APIs and two workers.

export interface Stack {
  pg: DrillPostgres;
  redis: DrillRedis;
  database: DatabaseHandle;
  /** The first API (apis[0]). */
  api: ServiceProcess;
  /** The first worker (workers[0]). */
  worker: ServiceProcess;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  scheduler: ServiceProcess;
  /** The environment every service process was started with (DATABASE_URL, REDIS_URL, ...). */
  env: Record<string, string>;
  /** Starts one more worker like the others (e.g. to replace one the drill killed). */
  startWorker(extra?: Record<string, string>): Promise<ServiceProcess>;
  /** `npm start`'s single process (API, worker and scheduler in one), on the same servers. */
  standalone?: ServiceProcess;
  processes: ServiceProcess[];
  token: string;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Also start `npm start`'s single process beside the split ones. */
  standalone?: boolean;
  /** How many API processes (default 1). */
  apis?: number;
  /** How many worker processes (default 1). */
  workers?: number;
  /** Queues the workers take (default `agent`). */
  workerQueues?: string;
  /** Extra environment for every service process. */
  env?: Record<string, string>;
  /** Redis with an append-only file (appendfsync always), so a restart keeps its data. */
  redisAof?: boolean;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const pg = await startDrillPostgres();
  const redis = await startDrillRedis({ aof: opts.redisAof });
  const database = createPostgresDatabase(pg.url(), { max: 3 });
  await migrateToLatest(database.db);
  const member = await createTenantWithUser({ db: database.db }, { budget: 10_000 });
  const { token } = await mintTestToken({ db: database.db }, member, 'read_write');
  const common: Record<string, string> = {
    DATABASE_URL: pg.url(),
    DATABASE_POOL_MAX: '5',
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'opsi_drill',
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    AGENT_ENGINE: 'scripted',
    ...opts.env,
  };
  const startWorker = async (extra: Record<string, string> = {}) => {
    const metricsPort = await freePort();
    return startService(
      {
        ...common,
        WORKER_QUEUES: opts.workerQueues ?? 'agent',
        WORKER_LOCK_DURATION_MS: '2000',
        WORKER_STALLED_INTERVAL_MS: '1000',
        RUN_SWEEP_INTERVAL_MS: '1000',
        WORKER_SHUTDOWN_GRACE_MS: '2000',
        ...extra,
        WORKER_METRICS_PORT: String(metricsPort),
      },
      { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
    );
  };
  // Every process started is tracked, so a stack that fails half-way (one process not ready within its
  // bound on a loaded machine) stops what did start instead of leaving it running.
  const started: ServiceProcess[] = [];
  const track = async (p: Promise<ServiceProcess>) => {
    const service = await p;
    started.push(service);
    return service;
  };
  let apis: ServiceProcess[];
  let workers: ServiceProcess[];
  let scheduler: ServiceProcess;
  try {
    const all = await Promise.allSettled([
      Promise.all(
        Array.from({ length: opts.apis ?? 1 }, () =>
          track(startService(common, { entry: 'apps/api/src/main.ts' })),
        ),
      ),
      Promise.all(Array.from({ length: opts.workers ?? 1 }, () => track(startWorker()))),
      track(startScheduler(common)),
    ]);
    const failed = all.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    [apis, workers, scheduler] = all.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
      ServiceProcess[],
      ServiceProcess[],
      ServiceProcess,
    ];
  } catch (e) {
    await Promise.all(started.map((p) => p.stop(5000)));
    await database.close().catch(() => undefined);
    await redis.destroy();
    await pg.destroy();
    throw e;
  }
  const api = apis[0]!;
  const worker = workers[0]!;
  const standalone = opts.standalone
    ? await startService(
        { ...common, REDIS_PREFIX: 'opsi_drill_one', DEMO_SEED: 'false' },
        { entry: 'apps/standalone/src/main.ts' },
      )
    : undefined;
  const processes = [...apis, ...workers, scheduler, ...(standalone ? [standalone] : [])];
  return {
    pg,
    redis,
    database,
    api,
    worker,
    apis,
    workers,
    scheduler,
    env: common,
    async startWorker(extra) {
      const started = await startWorker(extra);
      workers.push(started);
      processes.push(started);
      return started;
    },
    ...(standalone ? { standalone } : {}),
    processes,
    token,
    async close() {
      await Promise.all([...processes].map((p) => p.stop(5000)));
      await database.close().catch(() => undefined);
      await redis.destroy();
      await pg.destroy();
    },
  };
}

/** The scheduler serves nothing: it is ready once it has logged so. */
async function startScheduler(env: Record<string, string>): Promise<ServiceProcess> {
  // startService waits for an HTTP answer; the scheduler has none, so it is pointed at a URL that
  // answers 200 as soon as the process has started: its own readiness is its log line.
  // Port 0: the kernel picks a free port while the probe holds it (no window for another test to take it).
  const { createServer } = await import('node:http');
  const probe = createServer((_, res) => res.end('ok')).listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  try {
    const scheduler = await startService(
      { ...env, LOG_LEVEL: 'info', SCHEDULER_INTERVAL_MS: '2000' },
      { entry: 'apps/scheduler/src/main.ts', readyUrl: `http://127.0.0.1:${port}/` },
    );
    for (let i = 0; !scheduler.output().includes('scheduler ready'); i++) {
      if (i > 600) throw new Error(`scheduler not ready:\n${scheduler.output()}`);
      if (!isAlive(scheduler)) throw new Error(`scheduler exited:\n${scheduler.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return scheduler;
  } finally {
    probe.close();
  }
}

export const isAlive = (p: ServiceProcess) => p.child.exitCode === null && p.child.signalCode === null;

export interface FollowedRun {
  sessionId?: string;
  runId?: string;
  /** Every event received, over every connection, in order. */
  seqs: number[];
  kinds: string[];
  /** The events' data, in the same order. */
  data: Array<Record<string, unknown>>;
  /** Statuses of every request made (the first stream, then each re-attach). */
  statuses: number[];
  connections: number;
  terminals: number;
  /** Set when the first request was refused (e.g. 503 during an outage): there is no run to follow. */
  refused?: number;
}

/**
 * Follows a run as an EventSource client does: reads its stream; when the stream ends without a terminal
 * event, re-attaches with Last-Event-ID; when refused with 503, waits and tries again; until the terminal
 * event or the bound.
 */
export async function followRun(
  base: string,
  token: string,
  prompt: string,
  opts: { boundMs?: number; onFirstEvent?: () => void } = {},
) {
  const boundMs = opts.boundMs ?? 90_000;
  const out: FollowedRun = { seqs: [], kinds: [], data: [], statuses: [], connections: 0, terminals: 0 };
  const deadline = Date.now() + boundMs;
  let url = `${base}/api/v1/stream?${new URLSearchParams({ prompt })}`;
  while (Date.now() < deadline) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
    if (out.seqs.length) headers['last-event-id'] = String(out.seqs.at(-1));
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(deadline - Date.now()) });
    } catch {
      await new Promise((r) => setTimeout(r, 300));
      continue;
    }
    out.statuses.push(res.status);
    if (res.status !== 200) {
      await res.text().catch(() => undefined);
      if (!out.sessionId) {
        out.refused = res.status;
        return out;
      }
      await new Promise((r) => setTimeout(r, 300));
      continue;
    }
    out.connections++;
    out.sessionId ??= res.headers.get('x-session-id') ?? undefined;
    out.runId ??= res.headers.get('x-run-id') ?? undefined;
    const parser = createParser({
      onEvent(message) {
        if (out.seqs.length === 0) opts.onFirstEvent?.();
        out.seqs.push(Number(message.id));
        out.kinds.push(message.event ?? 'message');
        out.data.push(JSON.parse(message.data) as Record<string, unknown>);
        if (message.event === 'run.completed' || message.event === 'run.failed') out.terminals++;
      },
    });
    try {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      // the connection broke: re-attach
    }
    if (out.terminals > 0) return out;
    url = `${base}/api/v1/stream/attach?${new URLSearchParams({ session_id: out.sessionId! })}`;
    await new Promise((r) => setTimeout(r, 200));
  }
  return out;
}

/**
 * Whether a client could tell it missed events: the reply it assembled from deltas (after the last
 * run.resumed, where a client discards its partial text) is the run's reply, or the numbering has a
 * gap. Events renumbered from a floor that went back are filtered as duplicates, and lost silently.
 */
export function lossIsVisible(run: FollowedRun): boolean {
  const end = run.kinds.lastIndexOf('run.completed');
  if (end < 0) return true; // a failed run has no reply to compare
  const dense = run.seqs.every((s, i) => i === 0 || s === run.seqs[i - 1]! + 1);
  const from = run.kinds.lastIndexOf('run.resumed') + 1;
  let text = '';
  for (let i = from; i < end; i++) if (run.kinds[i] === 'message.delta') text += String(run.data[i]!.text);
  return text === String(run.data[end]!.reply) || !dense;
}

/** A `script:` prompt for the scripted engine. */
export function script(steps: unknown[]): string {
  return `script:${JSON.stringify(steps)}`;
}
