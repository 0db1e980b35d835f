import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  readSse,
  script,
  until,
  type ServiceProcess,
  type SseEvent,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Incident investigations end to end, with real processes: the API on its own and agent workers on their
// own (the scripted engine plays the script an incident's title carries). A client follows the incident's
// timeline over SSE while the investigation runs, and one worker is SIGKILLed in the middle of it.

let svc: SplitServices;
/** Every worker started, so a test can stop the ones still alive. */
const workers: ServiceProcess[] = [];
let token = '';

async function startWorker(): Promise<ServiceProcess> {
  const worker = await svc.startWorker({
    AGENT_ENGINE: 'scripted',
    WORKER_QUEUES: 'agent,triage',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
    RUN_SWEEP_INTERVAL_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  // No worker yet: each test starts its own. The API keeps its default database pool.
  svc = await startSplitServices({ worker: false, apiEnv: { DATABASE_POOL_MAX: undefined } });
  const member = await createTenantWithUser(svc.t);
  token = (await mintTestToken(svc.t, member, 'read_write')).token;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

/** Follows an incident's timeline until `done` says so; resolves with what it saw. */
function follow(incidentId: string, done: (events: SseEvent[]) => boolean) {
  let opened!: () => void;
  const ready = new Promise<void>((r) => (opened = r));
  const reading = readSse(`${svc.base}/api/v1/incidents/${incidentId}/timeline/stream`, {
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
    const incident = (await call(svc.base, 'POST', '/api/v1/incidents', { token, body: { title } })).body;
    const live = follow(incident.id, (events) => events.some((e) => e.event.startsWith('investigation_c')));
    await live.ready;
    const started = await call(svc.base, 'POST', `/api/v1/incidents/${incident.id}/agent-investigate`, {
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
      `${svc.base}/api/v1/stream/attach?session_id=${started.body.session_id}&after_seq=0`,
      { token },
    );
    expect(run.events.at(-1)).toMatchObject({ event: 'run.completed' });
  });

  it('a SIGKILLed worker’s investigation is taken over and completes once', async () => {
    const title = script([{ delta: 'Part one. ' }, { sleep: 4000 }, { delta: 'Part two.' }]);
    const incident = (await call(svc.base, 'POST', '/api/v1/incidents', { token, body: { title } })).body;
    const live = follow(incident.id, (events) => events.some((e) => e.event.startsWith('investigation_c')));
    await live.ready;
    // One worker alive: it takes the job.
    for (const w of workers) await w.stop(10_000);
    const doomed = await startWorker();
    const started = await call(svc.base, 'POST', `/api/v1/incidents/${incident.id}/agent-investigate`, {
      token,
    });
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await until('the run to be running', async () => {
      const row = await svc.t.db
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
    const row = await svc.t.db
      .selectFrom('agent_runs')
      .select(['status', 'attempts'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('completed');
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    const run = await readSse(
      `${svc.base}/api/v1/stream/attach?session_id=${started.body.session_id}&after_seq=0`,
      {
        token,
      },
    );
    const kinds = run.events.map((e) => e.event);
    expect(kinds).toContain('run.resumed');
    expect(kinds.filter((k) => k === 'run.completed' || k === 'run.failed')).toEqual(['run.completed']);
    // Exactly one of each investigation event, however many attempts ran.
    const stored = await svc.t.db
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
