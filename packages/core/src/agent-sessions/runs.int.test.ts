import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedEngine, type AgentEngine, type TurnInput } from '@opsi/agent';
import { RunEventLog } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import {
  createTenantWithUser,
  createTestContext,
  script,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { cancelKey, claimRun, executeRun, RUN_FAILED_UNAVAILABLE, sweepRuns } from './runs';

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

describe('claimRun (the read and the running mark in one statement)', () => {
  const row = (id: string) =>
    t.db
      .selectFrom('agent_runs')
      .select(['status', 'attempts', 'started_at', 'seq_reserved'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('marks a queued run running and answers the row as it was, with the reservation made', async () => {
    const runId = await insertRun('claim me');
    const first = await claimRun(t.db, runId, 1, 0);
    expect(first).toMatchObject({
      id: runId,
      tenant_id: a.tenant.id,
      prompt: 'claim me',
      status: 'queued',
      last_seq: 0,
      seq_reserved: 0,
      reserved_to: 100,
      session_incident_id: null,
    });
    const after = await row(runId);
    expect(after).toMatchObject({ status: 'running', attempts: 1, seq_reserved: 100 });
    expect(after.started_at).not.toBeNull();
    // A second attempt (the first worker died) sees it running, reserves above the first block and keeps
    // the first start time.
    const second = await claimRun(t.db, runId, 2, 0);
    expect(second).toMatchObject({ status: 'running', seq_reserved: 100, reserved_to: 200 });
    expect(await row(runId)).toMatchObject({ attempts: 2, seq_reserved: 200, started_at: after.started_at });
    // The stream's last seq, when above every floor Postgres knows, is the floor.
    expect(await claimRun(t.db, runId, 3, 250)).toMatchObject({ reserved_to: 350 });
    // Leave no open run behind for the sweeper's tests below.
    await t.db.updateTable('agent_runs').set({ status: 'failed' }).where('id', '=', runId).execute();
  });

  it('answers nothing for a run that ended or is gone, and changes nothing', async () => {
    const runId = await insertRun('done');
    await t.db
      .updateTable('agent_runs')
      .set({ status: 'completed', seq_reserved: 7 })
      .where('id', '=', runId)
      .execute();
    expect(await claimRun(t.db, runId, 2, 0)).toBeUndefined();
    expect(await row(runId)).toMatchObject({
      status: 'completed',
      attempts: 0,
      started_at: null,
      seq_reserved: 7,
    });
    expect(await claimRun(t.db, randomUUID(), 1, 0)).toBeUndefined();
  });

  it('a cancelled run is not marked started', async () => {
    const runId = await insertRun(script([{ delta: 'never' }]));
    await t.redis.set(cancelKey(t.redisPrefix, runId), '1');
    expect(await executeRun(deps(), runId, ctx())).toEqual({ outcome: 'cancelled' });
    expect(await row(runId)).toMatchObject({ status: 'failed', started_at: null });
  });
});

describe('executeRun, the reply and the session', () => {
  it("a turn in a session bound to an incident sees the incident (read with the run's row)", async () => {
    const incident = await t.db
      .insertInto('incidents')
      .values({ tenant_id: a.tenant.id, title: 'Bound session', created_by: 'test' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const runId = await insertRun('what is going on?');
    const run = await t.db
      .selectFrom('agent_runs')
      .select('session_id')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    await t.db
      .updateTable('agent_sessions')
      .set({ incident_id: incident.id })
      .where('id', '=', run.session_id)
      .execute();
    let seen: TurnInput['incident'];
    const engine: AgentEngine = {
      name: 'capture',
      async runTurn(input) {
        seen = input.incident;
        return { reply: 'ok' };
      },
    } as AgentEngine;
    expect(await executeRun({ ...deps(), engine }, runId, ctx())).toEqual({ outcome: 'completed' });
    expect(seen).toMatchObject({ id: incident.id, investigation: false });
  });

  it("the turn sees the session's earlier messages, oldest first, and the tenant's newest active learnings", async () => {
    const b = await createTenantWithUser(t);
    const other = await createTenantWithUser(t);
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    const sessionId = randomUUID();
    const otherSession = randomUUID();
    await t.db
      .insertInto('agent_sessions')
      .values([
        { id: sessionId, tenant_id: b.tenant.id, created_by: b.user.id, name: 's' },
        { id: otherSession, tenant_id: b.tenant.id, created_by: b.user.id, name: 'other' },
      ])
      .execute();
    const earlier = await t.db
      .insertInto('agent_runs')
      .values({
        tenant_id: b.tenant.id,
        session_id: sessionId,
        prompt: 'q1',
        status: 'completed',
        created_at: at(10),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const runId = (
      await t.db
        .insertInto('agent_runs')
        .values({ tenant_id: b.tenant.id, session_id: sessionId, prompt: 'q2', created_at: at(5) })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const message = (
      session: string,
      run: string | null,
      role: 'user' | 'assistant',
      content: string,
      ago: number,
    ) => ({
      tenant_id: b.tenant.id,
      session_id: session,
      run_id: run,
      role,
      content,
      created_at: at(ago),
    });
    await t.db
      .insertInto('agent_messages')
      .values([
        message(sessionId, earlier.id, 'assistant', 'a1', 8),
        message(sessionId, earlier.id, 'user', 'q1', 9),
        message(otherSession, null, 'user', 'elsewhere', 7),
        message(sessionId, runId, 'user', 'q2', 4),
      ])
      .execute();
    const learning = (
      tenantId: string,
      fact: string,
      ago: number,
      status: 'active' | 'archived' = 'active',
      service: string | null = null,
    ) => ({
      tenant_id: tenantId,
      fact,
      service,
      status,
      created_by: 'test',
      created_at: at(ago),
    });
    await t.db
      .insertInto('learnings')
      .values([
        learning(b.tenant.id, 'oldest', 30),
        learning(b.tenant.id, 'newest', 1, 'active', 'billing'),
        learning(b.tenant.id, 'archived', 2, 'archived'),
        learning(b.tenant.id, 'middle', 20),
        learning(other.tenant.id, 'not theirs', 1),
      ])
      .execute();
    let seen: TurnInput | undefined;
    const engine = {
      name: 'capture',
      async runTurn(input: TurnInput) {
        seen = input;
        return { reply: 'ok' };
      },
    } as AgentEngine;
    expect(await executeRun({ ...deps(), engine }, runId, ctx())).toEqual({ outcome: 'completed' });
    expect(seen!.prompt).toBe('q2');
    expect(seen!.history).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
    ]);
    expect(seen!.learnings).toEqual([
      { id: expect.any(String), fact: 'newest', service: 'billing' },
      { id: expect.any(String), fact: 'middle', service: null },
      { id: expect.any(String), fact: 'oldest', service: null },
    ]);
  });

  it('a session deleted during the turn: the reply has nowhere to go, and the run still ends', async () => {
    const runId = await insertRun('x');
    const run = await t.db
      .selectFrom('agent_runs')
      .select('session_id')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    const engine: AgentEngine = {
      name: 'deleting',
      async runTurn() {
        await t.db.deleteFrom('agent_sessions').where('id', '=', run.session_id).execute();
        return { reply: 'too late' };
      },
    } as AgentEngine;
    expect(await executeRun({ ...deps(), engine }, runId, ctx())).toEqual({ outcome: 'completed' });
    expect((await log.read(runId, 0)).map((e) => e.kind)).toEqual([
      'run.started',
      'message.completed',
      'run.completed',
    ]);
    const left = await t.db.selectFrom('agent_messages').select('id').where('run_id', '=', runId).execute();
    expect(left).toEqual([]);
  });

  it('the reply is stored once and message.completed is checkpointed with it', async () => {
    const runId = await insertRun(script([{ delta: 'one' }, { delta: ' two' }]));
    let seqAtEnd: number | undefined;
    const scripted = new ScriptedEngine();
    const engine: AgentEngine = {
      name: 'observing',
      runTurn: (input, emit) => scripted.runTurn(input, emit),
    } as AgentEngine;
    // Stop the run between message.completed and run.completed: the row must already say how far it got.
    const failingLog = Object.create(log) as RunEventLog;
    failingLog.append = async (id, kind, data, floor, missingFloor) => {
      if (kind === 'run.completed') {
        seqAtEnd = (
          await t.db
            .selectFrom('agent_runs')
            .select('last_seq')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).last_seq;
        throw new Error('worker died');
      }
      return log.append(id, kind, data, floor, missingFloor);
    };
    await expect(executeRun({ ...deps(), engine, log: failingLog }, runId, ctx())).rejects.toThrow(
      'worker died',
    );
    const events = await log.read(runId, 0);
    expect(events.map((e) => e.kind)).toEqual([
      'run.started',
      'message.delta',
      'message.delta',
      'message.completed',
    ]);
    expect(seqAtEnd).toBe(4);
    // The retry resumes, answers again and stores one reply.
    expect(await executeRun(deps(), runId, ctx(2))).toEqual({ outcome: 'completed' });
    const replies = await t.db
      .selectFrom('agent_messages')
      .select('content')
      .where('run_id', '=', runId)
      .where('role', '=', 'assistant')
      .execute();
    expect(replies).toEqual([{ content: 'one two' }]);
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
    // The sweep's cutoff is Date.now() in whole milliseconds and created_at has microseconds: a run made
    // in the same millisecond as the sweep would be newer than the cutoff (this flaked on a fast run).
    await t.db
      .updateTable('agent_runs')
      .set({ created_at: sql`now() - interval '1 second'` })
      .where('id', 'in', [...runs, other])
      .execute();
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
