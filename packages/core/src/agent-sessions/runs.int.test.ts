import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedEngine } from '@opsi/agent';
import { RunEventLog } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import {
  createTenantWithUser,
  createTestContext,
  script,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { cancelKey, executeRun, RUN_FAILED_UNAVAILABLE, sweepRuns } from './runs';

let t: TestContext;
let log: RunEventLog;
let a: TestMember;
const logger = createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' });

beforeAll(async () => {
  t = await createTestContext();
  log = new RunEventLog(t.redis, t.redisPrefix, 600);
  a = await createTenantWithUser(t);
});
afterAll(() => t?.close());

async function insertRun(prompt: string) {
  const sessionId = randomUUID();
  await t.db
    .insertInto('agent_sessions')
    .values({ id: sessionId, tenant_id: a.tenant.id, created_by: a.user.id, name: 's' })
    .execute();
  const run = await t.db
    .insertInto('agent_runs')
    .values({ tenant_id: a.tenant.id, session_id: sessionId, prompt })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  await t.db
    .insertInto('agent_messages')
    .values({ tenant_id: a.tenant.id, session_id: sessionId, run_id: run.id, role: 'user', content: prompt })
    .execute();
  return run.id;
}

const deps = () => ({
  db: t.db,
  redis: t.redis,
  log,
  engine: new ScriptedEngine(),
  redisPrefix: t.redisPrefix,
  turnTimeoutMs: 10_000,
});
const ctx = (attempt = 1, signal = new AbortController().signal) => ({ attempt, signal, log: logger });

describe('executeRun', () => {
  it('a run taken over after its worker died continues the sequence with run.resumed and ends once', async () => {
    const runId = await insertRun(script([{ delta: 'hello' }]));
    // What the dead worker left: run.started and a partial delta.
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'message.delta', { text: 'hel' });
    await t.db.updateTable('agent_runs').set({ status: 'running' }).where('id', '=', runId).execute();
    expect(await executeRun(deps(), runId, ctx(2))).toEqual({ outcome: 'completed' });
    const events = await log.read(runId, 0);
    expect(events.map((e) => e.kind)).toEqual([
      'run.started',
      'message.delta',
      'run.resumed',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events[2]).toMatchObject({ attempt: 2, after_seq: 2 });
    const row = await t.db
      .selectFrom('agent_runs')
      .selectAll()
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'completed', reply: 'hello', last_seq: 6, attempts: 2 });
    // Executing it again (a duplicate delivery) changes nothing.
    expect(await executeRun(deps(), runId, ctx(3))).toEqual({ outcome: 'already-ended' });
    expect((await log.read(runId, 0)).length).toBe(6);
    const replies = await t.db
      .selectFrom('agent_messages')
      .select('content')
      .where('run_id', '=', runId)
      .where('role', '=', 'assistant')
      .execute();
    expect(replies).toEqual([{ content: 'hello' }]);
  });

  it('a terminal event that reached the stream but not the row is copied to the row', async () => {
    const runId = await insertRun('x');
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'run.completed', { reply: 'done' });
    expect(await executeRun(deps(), runId, ctx(2))).toEqual({ outcome: 'already-ended' });
    const row = await t.db
      .selectFrom('agent_runs')
      .select(['status', 'reply', 'last_seq'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'completed', reply: 'done', last_seq: 2 });
  });

  it('a cancel flag set before the job started ends the run with run.failed', async () => {
    const runId = await insertRun(script([{ delta: 'never' }]));
    await t.redis.set(cancelKey(t.redisPrefix, runId), '1');
    expect(await executeRun(deps(), runId, ctx())).toEqual({ outcome: 'cancelled' });
    expect((await log.read(runId, 0)).map((e) => e.kind)).toEqual(['run.failed']);
  });

  it('an abort while the turn runs ends it with the cancellation detail; the deadline with its own', async () => {
    const cancelled = await insertRun(script([{ hang: true }]));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('session deleted')), 100);
    expect(await executeRun(deps(), cancelled, ctx(1, controller.signal))).toEqual({ outcome: 'failed' });
    expect((await log.last(cancelled))!.detail).toBe('Run cancelled: its session was deleted.');
    const slow = await insertRun(script([{ hang: true }]));
    expect(await executeRun({ ...deps(), turnTimeoutMs: 200 }, slow, ctx())).toEqual({ outcome: 'failed' });
    expect((await log.last(slow))!.detail).toMatch(/deadline/);
  });

  it('a run whose row is gone (session deleted) is left alone', async () => {
    expect(await executeRun(deps(), randomUUID(), ctx())).toEqual({ outcome: 'gone' });
  });
});

describe('sweepRuns', () => {
  it('closes runs whose job is gone or failed, leaves live ones, and copies stream terminals to rows', async () => {
    const lost = await insertRun('lost');
    const failed = await insertRun('failed');
    const live = await insertRun('live');
    const halfDone = await insertRun('half');
    await log.append(halfDone, 'run.started', { attempt: 1 });
    await log.append(halfDone, 'run.completed', { reply: 'ok' });
    const states: Record<string, { state: 'missing' | 'failed' | 'active'; failedReason?: string }> = {
      [lost]: { state: 'missing' },
      [failed]: { state: 'failed', failedReason: 'job stalled more than allowable limit' },
      [live]: { state: 'active' },
      [halfDone]: { state: 'active' },
    };
    const result = await sweepRuns({ db: t.db, log }, async (id) => states[id] ?? { state: 'active' }, {
      olderThanMs: 0,
    });
    expect(result.closed).toBe(3);
    const rows = await t.db
      .selectFrom('agent_runs')
      .select(['id', 'status', 'error'])
      .where('id', 'in', [lost, failed, live, halfDone])
      .execute();
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[lost]).toMatchObject({ status: 'failed', error: 'The run was lost: its job is gone.' });
    expect(byId[failed]).toMatchObject({
      status: 'failed',
      error: 'The run failed: job stalled more than allowable limit.',
    });
    expect(byId[live]!.status).toBe('queued');
    expect(byId[halfDone]!.status).toBe('completed');
    expect((await log.last(lost))!.kind).toBe('run.failed');
    // A second sweep finds nothing more to do.
    expect((await sweepRuns({ db: t.db, log }, async (id) => states[id]!, { olderThanMs: 0 })).closed).toBe(
      0,
    );
  });
});

describe('sweepRuns and outages', () => {
  // Found by `npm run drills` (restarts): a run whose attempts all failed during a Postgres restart was
  // closed with the raw socket error ("connect ECONNREFUSED 127.0.0.1:<port>"), and /ask answered 502.
  it('a job that failed because the database or Redis was unreachable ends with the outage detail, no address', async () => {
    const reasons = [
      'connect ECONNREFUSED 127.0.0.1:33925',
      'Connection terminated unexpectedly',
      'terminating connection due to administrator command',
      'Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.',
    ];
    const runs = await Promise.all(reasons.map((_, i) => insertRun(`outage-${i}`)));
    const other = await insertRun('outage-other');
    const states = new Map<string, { state: 'failed'; failedReason: string }>(
      runs.map((id, i) => [id, { state: 'failed', failedReason: reasons[i]! }]),
    );
    states.set(other, { state: 'failed', failedReason: 'model exploded' });
    await sweepRuns({ db: t.db, log }, async (id) => states.get(id) ?? { state: 'active' as const }, {
      olderThanMs: 0,
    });
    for (const id of runs) {
      expect(await log.last(id)).toMatchObject({ kind: 'run.failed', detail: RUN_FAILED_UNAVAILABLE });
    }
    expect((await log.last(other))!.detail).toBe('The run failed: model exploded.');
  });
});

describe('sweepRuns and investigations', () => {
  it('an investigation whose job is gone ends on its incident timeline too, once', async () => {
    const incident = await t.db
      .insertInto('incidents')
      .values({ tenant_id: a.tenant.id, title: 'Lost investigation', created_by: 'test' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const runId = await insertRun('Investigate incident');
    await t.db
      .updateTable('agent_runs')
      .set({ incident_id: incident.id, purpose: 'investigation' })
      .where('id', '=', runId)
      .execute();
    const sweep = () =>
      sweepRuns(
        { db: t.db, log },
        async (id) => (id === runId ? { state: 'missing' } : { state: 'active' }),
        {
          olderThanMs: 0,
        },
      );
    await sweep();
    await sweep();
    const events = await t.db
      .selectFrom('incident_events')
      .select(['kind', 'body', 'actor', 'run_id'])
      .where('incident_id', '=', incident.id)
      .execute();
    expect(events).toEqual([
      {
        kind: 'investigation_failed',
        body: 'The investigation failed: The run was lost: its job is gone.',
        actor: 'agent',
        run_id: runId,
      },
    ]);
  });
});
