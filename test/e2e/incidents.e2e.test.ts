import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';
import { call, createTenantWithUser, mintTestToken, readSse, script, type SseEvent } from '../support/index';
import { freePort, startService, type ServiceProcess } from '../support/processes';

// Incident investigations end to end, with real processes: the API on its own and agent workers on their
// own (the scripted engine plays the script an incident's title carries). A client follows the incident's
// timeline over SSE while the investigation runs, and one worker is SIGKILLed in the middle of it.

const REDIS_URL = 'redis://127.0.0.1:6379';
let database: TestDatabase;
let redis: Redis;
const redisPrefix = `opsi_e2e_${randomBytes(5).toString('hex')}`;
let api: ServiceProcess | undefined;
const workers: ServiceProcess[] = [];
let token = '';

async function startWorker(): Promise<ServiceProcess> {
  const metricsPort = await freePort();
  const worker = await startService(
    {
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '3',
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      NODE_ENV: 'test',
      AGENT_ENGINE: 'scripted',
      WORKER_QUEUES: 'agent,triage',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      RUN_SWEEP_INTERVAL_MS: '2000',
      WORKER_METRICS_PORT: String(metricsPort),
    },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
  workers.push(worker);
  return worker;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, boundMs = 60_000) {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createRedis(REDIS_URL, 'command');
  const member = await createTenantWithUser({ db: database.db });
  token = (await mintTestToken({ db: database.db }, member, 'read_write')).token;
  api = await startService(
    { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redisPrefix, NODE_ENV: 'test' },
    { entry: 'apps/api/src/main.ts' },
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...workers, ...(api ? [api] : [])].map((p) => p.stop(10_000).catch(() => undefined)));
  if (redis) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  }
  await database?.close();
});

/** Follows an incident's timeline until `done` says so; resolves with what it saw. */
function follow(incidentId: string, done: (events: SseEvent[]) => boolean) {
  let opened!: () => void;
  const ready = new Promise<void>((r) => (opened = r));
  const reading = readSse(`${api!.url}/api/v1/incidents/${incidentId}/timeline/stream`, {
    token,
    onOpen: () => opened(),
    stopAfter: done,
    timeoutMs: 90_000,
  });
  reading.catch(() => undefined);
  return { ready, reading };
}

describe('an investigation with real worker processes', () => {
  it('its timeline events arrive on the SSE stream in order', async () => {
    await startWorker();
    const title = script([
      { delta: 'Looked at the alerts. ' },
      { sleep: 300 },
      { delta: 'Nothing changed.' },
    ]);
    const incident = (await call(api!.url, 'POST', '/api/v1/incidents', { token, body: { title } })).body;
    const live = follow(incident.id, (events) => events.some((e) => e.event.startsWith('investigation_c')));
    await live.ready;
    const started = await call(api!.url, 'POST', `/api/v1/incidents/${incident.id}/agent-investigate`, {
      token,
    });
    expect(started.status).toBe(202);
    const seen = await live.reading;
    expect(seen.events.map((e) => e.event)).toEqual([
      'created',
      'investigation_started',
      'investigation_completed',
    ]);
    const ids = seen.events.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(seen.events[2]!.data).toMatchObject({
      body: 'Looked at the alerts. Nothing changed.',
      actor: 'agent',
      data: { run_id: started.body.run_id, session_id: started.body.session_id },
    });
    // The run itself streams like any agent run.
    const run = await readSse(
      `${api!.url}/api/v1/stream/attach?session_id=${started.body.session_id}&after_seq=0`,
      { token },
    );
    expect(run.events.at(-1)).toMatchObject({ event: 'run.completed' });
  });

  it('a SIGKILLed worker’s investigation is taken over and completes once', async () => {
    const title = script([{ delta: 'Part one. ' }, { sleep: 4000 }, { delta: 'Part two.' }]);
    const incident = (await call(api!.url, 'POST', '/api/v1/incidents', { token, body: { title } })).body;
    const live = follow(incident.id, (events) => events.some((e) => e.event.startsWith('investigation_c')));
    await live.ready;
    // One worker alive: it takes the job.
    for (const w of workers) await w.stop(10_000);
    const doomed = await startWorker();
    const started = await call(api!.url, 'POST', `/api/v1/incidents/${incident.id}/agent-investigate`, {
      token,
    });
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await until('the run to be running', async () => {
      const row = await database.db
        .selectFrom('agent_runs')
        .select('status')
        .where('id', '=', runId)
        .executeTakeFirst();
      return row?.status === 'running' ? true : undefined;
    });
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await startWorker();
    const seen = await live.reading;
    expect(seen.events.map((e) => e.event)).toEqual([
      'created',
      'investigation_started',
      'investigation_completed',
    ]);
    expect(seen.events[2]!.data.body).toBe('Part one. Part two.');
    const row = await database.db
      .selectFrom('agent_runs')
      .select(['status', 'attempts'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('completed');
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    const run = await readSse(
      `${api!.url}/api/v1/stream/attach?session_id=${started.body.session_id}&after_seq=0`,
      {
        token,
      },
    );
    const kinds = run.events.map((e) => e.event);
    expect(kinds).toContain('run.resumed');
    expect(kinds.filter((k) => k === 'run.completed' || k === 'run.failed')).toEqual(['run.completed']);
    // Exactly one of each investigation event, however many attempts ran.
    const stored = await database.db
      .selectFrom('incident_events')
      .select('kind')
      .where('incident_id', '=', incident.id)
      .orderBy('id')
      .execute();
    expect(stored.map((e) => e.kind)).toEqual([
      'created',
      'investigation_started',
      'investigation_completed',
    ]);
  });
});
