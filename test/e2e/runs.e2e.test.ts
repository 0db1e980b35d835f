import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  readSse,
  script,
  seqs,
  until,
  type ServiceProcess,
  type SseEvent,
  type SseResult,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Agent runs end to end, with real processes: the API on its own, agent workers on their own (the
// scripted engine plays `script:` prompts), a database cloned from the migrated template and a Redis
// prefix of this file's own. The client side speaks plain HTTP and SSE. Tests run in order: the worker
// set changes as workers are killed, drained and started.

const TERMINAL = ['run.completed', 'run.failed'];
const SHUTDOWN_GRACE_MS = 20_000;

let svc: SplitServices;
/** Every worker started, so a test can find the ones still alive. */
const workers: ServiceProcess[] = [];
let token = '';

/** Runs seen to their end by a client: the last seq the client saw, checked against the rows. */
const finished = new Map<string, { lastSeq: number; kind: string }>();

const base = () => svc.base;
const streamUrl = (params: Record<string, string>) =>
  `${base()}/api/v1/stream?${new URLSearchParams(params)}`;
const attachUrl = (params: Record<string, string>) =>
  `${base()}/api/v1/stream/attach?${new URLSearchParams(params)}`;

async function startWorker(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const worker = await svc.startWorker({
    // info: the SIGTERM test reads the worker's "worker stopping" and "worker stopped" lines.
    LOG_LEVEL: 'info',
    AGENT_ENGINE: 'scripted',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
    RUN_SWEEP_INTERVAL_MS: '2000',
    WORKER_SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
    ...env,
  });
  workers.push(worker);
  return worker;
}

const alive = (p: ServiceProcess) => p.child.exitCode === null && p.child.signalCode === null;

/** A promise awaited later: a failure before then must not surface as an unhandled rejection. */
function background<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

function runRow(runId: string) {
  return svc.t.db
    .selectFrom('agent_runs')
    .select(['id', 'status', 'last_seq', 'attempts', 'session_id'])
    .where('id', '=', runId)
    .executeTakeFirstOrThrow();
}

/** Waits until the run's row is closed (completed or failed). */
function rowFinished(runId: string) {
  return until(`run ${runId} to finish`, async () => {
    const row = await runRow(runId);
    return row.status === 'completed' || row.status === 'failed' ? row : undefined;
  });
}

/** Each event: id is data.seq, event is data.kind, the common fields are there. */
function expectWellFormed(events: SseEvent[]) {
  for (const e of events) {
    expect(e.data.seq).toBe(e.id);
    expect(e.data.kind).toBe(e.event);
    expect(typeof e.data.run_id).toBe('string');
    expect(Date.parse(e.data.at)).not.toBeNaN();
  }
}

/** A whole run as one client saw it: 1..n without gap or duplicate, one terminal event, last. */
function expectWholeRun(events: SseEvent[]) {
  expectWellFormed(events);
  expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]!.event).toBe('run.started');
  expect(events.filter((e) => TERMINAL.includes(e.event))).toHaveLength(1);
  expect(TERMINAL).toContain(events.at(-1)!.event);
  expect(new Set(events.map((e) => e.data.run_id)).size).toBe(1);
  const last = events.at(-1)!;
  finished.set(last.data.run_id, { lastSeq: last.id, kind: last.event });
}

function expectStreamHead(res: SseResult) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
}

beforeAll(async () => {
  // The worker is this file's own (startWorker, above); the API keeps its default database pool.
  svc = await startSplitServices({ worker: false, apiEnv: { DATABASE_POOL_MAX: undefined } });
  const member = await createTenantWithUser(svc.t);
  token = (await mintTestToken(svc.t, member, 'read_write')).token;
  await startWorker();
});

afterAll(async () => {
  await svc?.stop();
});

describe('POST /api/v1/ask', () => {
  it('answers {reply, session_id} once a worker has run the turn', async () => {
    const res = await call(base(), 'POST', '/api/v1/ask', {
      token,
      body: { prompt: script([{ delta: 'Hello ' }, { delta: 'world' }]) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ reply: 'Hello world', session_id: expect.any(String) });
    // The same run, as an attaching client replays it.
    const replay = await readSse(attachUrl({ session_id: res.body.session_id }), { token });
    expectStreamHead(replay);
    expectWholeRun(replay.events);
    expect(replay.events.at(-1)).toMatchObject({ event: 'run.completed', data: { reply: 'Hello world' } });
    expect(replay.events[0]!.data.run_id).toBe(res.headers.get('x-run-id'));
  });

  it('a failed run answers 502 {detail}', async () => {
    const res = await call(base(), 'POST', '/api/v1/ask', {
      token,
      body: { prompt: script([{ delta: 'x' }, { fail: 'model exploded' }]) },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'The agent run failed: model exploded' });
  });
});

describe('GET /api/v1/stream', () => {
  it('delivers 1..n without gap, ending in exactly one terminal event', async () => {
    const res = await readSse(
      streamUrl({
        prompt: script([
          { delta: 'a' },
          { tool: 'lookup', input: { q: 1 }, output: '3 rows' },
          { deltas: 3 },
          { delta: 'b' },
        ]),
      }),
      { token },
    );
    expectStreamHead(res);
    expect(res.aborted).toBe(false);
    expect(res.headers.get('x-session-id')).toBeTruthy();
    expectWholeRun(res.events);
    expect(res.events.map((e) => e.event)).toEqual([
      'run.started',
      'message.delta',
      'tool.started',
      'tool.finished',
      'message.delta',
      'message.delta',
      'message.delta',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(res.events[0]!.data.attempt).toBe(1);
    expect(res.events.at(-1)!.data.reply).toBe('achunk 1 chunk 2 chunk 3 b');
    expect(res.events[0]!.data.run_id).toBe(res.headers.get('x-run-id'));
  });

  it('a failing run ends with one run.failed', async () => {
    const res = await readSse(streamUrl({ prompt: script([{ delta: 'a' }, { fail: 'tool timed out' }]) }), {
      token,
    });
    expectWholeRun(res.events);
    expect(res.events.at(-1)).toMatchObject({ event: 'run.failed', data: { detail: 'tool timed out' } });
  });
});

describe('re-attaching after a dropped connection', () => {
  /** Starts a run and hangs up once `k` events have arrived (more may have come in the same chunk). */
  async function dropAfter(steps: unknown[], k: number) {
    const first = await readSse(streamUrl({ prompt: script(steps) }), {
      token,
      stopAfter: (events) => events.length >= k,
    });
    expectStreamHead(first);
    expect(first.aborted).toBe(true);
    expectWellFormed(first.events);
    const lastSeen = first.events.at(-1)!.id;
    expect(seqs(first.events)).toEqual(first.events.map((_, i) => i + 1));
    return {
      first: first.events,
      lastSeen,
      sessionId: first.headers.get('x-session-id')!,
      runId: first.headers.get('x-run-id')!,
    };
  }

  it('after the run ended: after_seq=k and Last-Event-ID: k each get k+1… exactly once', async () => {
    const {
      first,
      lastSeen: k,
      sessionId,
      runId,
    } = await dropAfter([{ deltas: 3 }, { sleep: 1000 }, { deltas: 3 }], 4);
    expect(TERMINAL).not.toContain(first.at(-1)!.event);
    await rowFinished(runId);
    const whole = await readSse(attachUrl({ session_id: sessionId, after_seq: '0' }), { token });
    expectWholeRun(whole.events);
    expect(whole.events.map((e) => e.data).slice(0, k)).toEqual(first.map((e) => e.data));
    const bySeq = await readSse(attachUrl({ session_id: sessionId, after_seq: String(k) }), { token });
    const byHeader = await readSse(attachUrl({ session_id: sessionId }), {
      token,
      headers: { 'last-event-id': String(k) },
    });
    for (const rest of [bySeq, byHeader]) {
      expectStreamHead(rest);
      expect(rest.aborted).toBe(false);
      expectWholeRun([...first, ...rest.events]);
      expect(rest.events.map((e) => e.data)).toEqual(whole.events.slice(k).map((e) => e.data));
    }
  });

  it('while the run goes on: after_seq=k and Last-Event-ID: k each get k+1… exactly once', async () => {
    const {
      first,
      lastSeen: k,
      sessionId,
      runId,
    } = await dropAfter([{ deltas: 3 }, { sleep: 3000 }, { deltas: 3 }, { sleep: 500 }, { delta: 'end' }], 4);
    // Each attach's response head came while the run was still going (its row is closed only after
    // its terminal event), so each was served replay-then-live.
    const statusAtOpen: Array<Promise<string>> = [];
    const onOpen = () => void statusAtOpen.push(runRow(runId).then((r) => r.status));
    const [bySeq, byHeader] = await Promise.all([
      readSse(attachUrl({ session_id: sessionId, after_seq: String(k) }), { token, onOpen }),
      readSse(attachUrl({ session_id: sessionId }), {
        token,
        onOpen,
        headers: { 'last-event-id': String(k) },
      }),
    ]);
    expect(await Promise.all(statusAtOpen)).toEqual(['running', 'running']);
    for (const rest of [bySeq, byHeader]) {
      expectStreamHead(rest);
      expect(rest.aborted).toBe(false);
      expect(rest.events[0]!.id).toBe(k + 1);
      expectWholeRun([...first, ...rest.events]);
      expect(rest.events.at(-1)).toMatchObject({ event: 'run.completed' });
      expect(rest.events.at(-1)!.data.reply).toContain('end');
    }
    expect(bySeq.events.map((e) => e.data)).toEqual(byHeader.events.map((e) => e.data));
  });
});

describe('worker failures', () => {
  it('a worker killed mid-run: another takes the run over and the client sees it through, once', async () => {
    const live = workers.filter(alive);
    expect(live).toHaveLength(1); // the one worker that will hold the run
    const holder = live[0]!;
    let killed: Promise<unknown> | undefined;
    const seen: SseEvent[] = [];
    // The client stays attached through the kill and the takeover.
    const streaming = background(
      readSse(streamUrl({ prompt: script([{ deltas: 3 }, { sleep: 3000 }, { deltas: 3 }]) }), {
        token,
        timeoutMs: 90_000,
        onEvent(e) {
          seen.push(e);
          // run.started and three deltas are out: the worker now sleeps inside the turn.
          if (e.id === 4 && !killed) {
            holder.child.kill('SIGKILL');
            killed = holder.exited;
          }
        },
      }),
    );
    await until('the run to reach its sleep', () => killed);
    await killed;
    expect(holder.child.signalCode).toBe('SIGKILL');
    expect(seen.filter((e) => TERMINAL.includes(e.event))).toEqual([]);
    await startWorker();

    const res = await streaming;
    expectStreamHead(res);
    expectWholeRun(res.events);
    expect(new Set(seqs(res.events)).size).toBe(res.events.length);
    const resumed = res.events.filter((e) => e.event === 'run.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.data).toMatchObject({ attempt: 2, after_seq: 4 });
    expect(resumed[0]!.id).toBe(5);
    expect(res.events.at(-1)!.event).toBe('run.completed');

    // A client attaching afterwards sees the very same sequence.
    const runId = res.events[0]!.data.run_id as string;
    const row = await rowFinished(runId);
    expect(row.attempts).toBe(2);
    const replay = await readSse(attachUrl({ session_id: row.session_id, after_seq: '0' }), { token });
    expect(replay.events.map((e) => e.data)).toEqual(res.events.map((e) => e.data));
  });

  it('SIGTERM: the worker finishes its run, takes no new one, and exits 0 within the grace period', async () => {
    const live = workers.filter(alive);
    expect(live).toHaveLength(1);
    const draining = live[0]!;
    let signalled = false;
    const running = background(
      readSse(streamUrl({ prompt: script([{ delta: 'a' }, { sleep: 1500 }, { delta: 'b' }]) }), {
        token,
        onEvent(e) {
          if (e.event === 'message.delta' && !signalled) {
            signalled = true;
            draining.child.kill('SIGTERM');
          }
        },
      }),
    );
    await until('SIGTERM to be handled', () =>
      draining.output().includes('"msg":"worker stopping"') ? true : undefined,
    );

    // A run started after SIGTERM waits for another worker.
    const sessionId = `after-sigterm-${randomBytes(4).toString('hex')}`;
    const lateEvents: SseEvent[] = [];
    let lateRunId = '';
    const late = background(
      readSse(streamUrl({ prompt: script([{ delta: 'late' }]), session_id: sessionId }), {
        token,
        onOpen: (r) => (lateRunId = r.headers.get('x-run-id') ?? ''),
        onEvent: (e) => lateEvents.push(e),
      }),
    );

    await until('the late run to be queued', () => lateRunId || undefined);
    await until(
      'the draining worker to exit',
      () => (alive(draining) ? undefined : true),
      SHUTDOWN_GRACE_MS + 10_000,
    );
    expect(await draining.exited).toBe(0);
    expect(draining.output()).not.toContain('outlived the grace period');
    expect(draining.output()).toContain('"msg":"worker stopped"');

    const first = await running;
    expectWholeRun(first.events);
    expect(first.events.map((e) => e.event)).not.toContain('run.resumed');
    expect(first.events.at(-1)).toMatchObject({ event: 'run.completed', data: { reply: 'ab' } });

    expect(lateEvents).toEqual([]);
    expect((await runRow(lateRunId)).status).toBe('queued');

    await startWorker();
    const second = await late;
    expectWholeRun(second.events);
    expect(second.events[0]!.data.attempt).toBe(1);
    expect(second.events.map((e) => e.event)).not.toContain('run.resumed');
    expect(second.events.at(-1)).toMatchObject({ event: 'run.completed', data: { reply: 'late' } });
  });

  it('SIGTERM with a turn longer than the grace: the worker hands it back and exits mid-turn; another resumes it', async () => {
    // Only a worker with a short grace is left to take the turn.
    const short = await startWorker({ WORKER_SHUTDOWN_GRACE_MS: '1000' });
    for (const w of workers.filter((p) => alive(p) && p !== short)) {
      w.child.kill('SIGTERM');
      expect(await w.exited).toBe(0);
    }
    let signalled = false;
    let runId = '';
    const running = background(
      readSse(streamUrl({ prompt: script([{ delta: 'a' }, { sleep: 8000 }, { delta: 'b' }]) }), {
        token,
        onOpen: (r) => (runId = r.headers.get('x-run-id') ?? ''),
        onEvent(e) {
          if (e.event === 'message.delta' && !signalled) {
            signalled = true;
            short.child.kill('SIGTERM');
          }
        },
      }),
    );
    expect(await short.exited).toBe(0);
    // It left before the turn's end: the turn was handed back, not run to its end.
    expect(short.output()).toContain('outlived the grace period');
    expect((await runRow(runId)).status).toBe('running');

    await startWorker();
    const res = await running;
    expectWholeRun(res.events);
    const resumed = res.events.filter((e) => e.event === 'run.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.data).toMatchObject({ attempt: 2 });
    expect(res.events.at(-1)!.event).toBe('run.completed');
    expect((await rowFinished(runId)).attempts).toBe(2);
  });
});

describe('agent_runs rows', () => {
  it('each finished run has its final status and last_seq = the last streamed seq', async () => {
    expect(finished.size).toBeGreaterThanOrEqual(7);
    for (const [runId, { lastSeq, kind }] of finished) {
      const row = await rowFinished(runId);
      expect({ runId, status: row.status, last_seq: row.last_seq }).toEqual({
        runId,
        status: kind === 'run.completed' ? 'completed' : 'failed',
        last_seq: lastSeq,
      });
    }
    expect([...finished.values()].some((r) => r.kind === 'run.failed')).toBe(true);
  });
});
