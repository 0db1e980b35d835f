import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEngine, TurnEvent } from '@opsi/agent';
import type { RunEvent, RunEventData, RunEventKind } from '@opsi/contracts';
import { RunEventLog, RunStreamHub } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import {
  createTenantWithUser,
  createTestContext,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { executeRun, storedTerminalEvent, sweepRuns } from './runs';

// Redis restarted without persistence loses a run's stream. Numbering must never go back: every seq
// handed out after the loss is above every seq handed out before it, within one execution, across
// attempts, and for the sweeper's run.failed; and a subscriber whose stream vanished is told.

/** Records every event appended, in order, whatever happens to the stream afterwards. */
class RecordingLog extends RunEventLog {
  readonly appended: RunEvent[] = [];
  override async append<K extends RunEventKind>(
    runId: string,
    kind: K,
    data: RunEventData<K>,
    floor?: number,
    missingFloor?: number,
  ) {
    const event = await super.append(runId, kind, data, floor, missingFloor);
    if (event) this.appended.push(event);
    return event;
  }
}

let t: TestContext;
let a: TestMember;
const logger = createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' });

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
});
afterAll(() => t?.close());

async function insertRun() {
  const sessionId = randomUUID();
  await t.db
    .insertInto('agent_sessions')
    .values({ id: sessionId, tenant_id: a.tenant.id, created_by: a.user.id, name: 's' })
    .execute();
  const run = await t.db
    .insertInto('agent_runs')
    .values({ tenant_id: a.tenant.id, session_id: sessionId, prompt: 'p' })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  return run.id;
}

/** An engine that emits `deltas` deltas, running `between` after the first `at` of them. */
function engine(deltas: number, at: number, between: () => Promise<void>, crash = false): AgentEngine {
  return {
    name: 'test',
    async runTurn(_input, emit: (e: TurnEvent) => Promise<void>) {
      for (let i = 1; i <= deltas; i++) {
        await emit({ kind: 'message.delta', text: `d${i} ` });
        if (i === at) await between();
      }
      if (crash) throw new Error('worker died');
      return { reply: 'done' };
    },
  };
}

const ctx = (attempt: number) => ({ attempt, signal: new AbortController().signal, log: logger });
const seqs = (events: RunEvent[]) => events.map((e) => e.seq);
const strictlyIncreasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

describe('event numbering when Redis loses a run stream', () => {
  it('within one execution: numbering continues above what was handed out', async () => {
    const log = new RecordingLog(t.redis, t.redisPrefix, 600);
    const runId = await insertRun();
    const lose = () => t.redis.del(log.streamKey(runId)).then(() => undefined);
    const deps = {
      db: t.db,
      redis: t.redis,
      log,
      engine: engine(30, 10, lose),
      redisPrefix: t.redisPrefix,
      turnTimeoutMs: 10_000,
    };
    expect(await executeRun(deps, runId, ctx(1))).toEqual({ outcome: 'completed' });
    expect(log.appended.length).toBe(33);
    expect(strictlyIncreasing(seqs(log.appended))).toBe(true);
    // What is left in the stream continues where the lost part ended.
    const kept = await log.read(runId, 0);
    expect(kept[0]!.seq).toBe(12);
    expect(kept.at(-1)!.kind).toBe('run.completed');
    const row = await t.db
      .selectFrom('agent_runs')
      .select(['last_seq', 'status'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ last_seq: kept.at(-1)!.seq, status: 'completed' });
  });

  it('across attempts: a run resumed after its worker died and Redis lost the stream goes on above every seq', async () => {
    const log = new RecordingLog(t.redis, t.redisPrefix, 600);
    const runId = await insertRun();
    const deps = (e: AgentEngine) => ({
      db: t.db,
      redis: t.redis,
      log,
      engine: e,
      redisPrefix: t.redisPrefix,
      turnTimeoutMs: 10_000,
    });
    // The first attempt hands out 1..41 and dies (its job is retried); then Redis loses the stream.
    await expect(executeRun(deps(engine(40, 0, async () => {}, true)), runId, ctx(1))).rejects.toThrow(
      'worker died',
    );
    const first = seqs(log.appended);
    await t.redis.del(log.streamKey(runId));
    expect(await executeRun(deps(engine(5, 0, async () => {})), runId, ctx(2))).toEqual({
      outcome: 'completed',
    });
    const all = seqs(log.appended);
    expect(strictlyIncreasing(all)).toBe(true);
    expect(all.length).toBe(first.length + 8);
    const resumed = log.appended[first.length]!;
    expect(resumed.kind).toBe('run.resumed');
    expect(resumed.seq).toBeGreaterThan(Math.max(...first));
  });

  it("the sweeper's run.failed for a run whose stream is gone comes after every seq handed out", async () => {
    const log = new RecordingLog(t.redis, t.redisPrefix, 600);
    const runId = await insertRun();
    const deps = {
      db: t.db,
      redis: t.redis,
      log,
      engine: engine(20, 0, async () => {}, true),
      redisPrefix: t.redisPrefix,
      turnTimeoutMs: 10_000,
    };
    await expect(executeRun(deps, runId, ctx(1))).rejects.toThrow('worker died');
    const handedOut = Math.max(...seqs(log.appended));
    await t.redis.del(log.streamKey(runId));
    const swept = await sweepRuns({ db: t.db, log }, async () => ({ state: 'missing' }), { olderThanMs: 0 });
    expect(swept.closed).toBeGreaterThanOrEqual(1);
    const terminal = await storedTerminalEvent(t.db, runId);
    expect(terminal?.kind).toBe('run.failed');
    expect(terminal!.seq).toBeGreaterThan(handedOut);
  });
});

describe('a subscriber whose stream vanished', () => {
  it('is ended with the terminal event Postgres keeps, numbered after what it saw', async () => {
    const log = new RunEventLog(t.redis, t.redisPrefix, 600);
    const blocking = createRedis(testRedisUrl(), 'blocking');
    const hub = new RunStreamHub(log, blocking, t.redis, t.redisPrefix);
    const runId = await insertRun();
    try {
      for (let i = 0; i < 5; i++) await log.append(runId, 'message.delta', { text: 'x' });
      const received: RunEvent[] = [];
      let ended!: () => void;
      const done = new Promise<void>((r) => (ended = r));
      await hub.subscribe(runId, 0, {
        onEvents: (events) => void received.push(...events),
        onEnd: ended,
        onLost: () => storedTerminalEvent(t.db, runId),
      });
      expect(seqs(received)).toEqual([1, 2, 3, 4, 5]);
      // Redis loses the stream; meanwhile the run ended with a terminal event that only Postgres kept.
      await t.redis.del(log.streamKey(runId));
      const terminal = {
        seq: 7,
        run_id: runId,
        kind: 'run.failed',
        at: new Date().toISOString(),
        detail: 'x',
      };
      await t.db
        .updateTable('agent_runs')
        .set({ status: 'failed', terminal_event: JSON.stringify(terminal), last_seq: 7 })
        .where('id', '=', runId)
        .execute();
      await done;
      expect(received.map((e) => [e.seq, e.kind])).toEqual([
        [1, 'message.delta'],
        [2, 'message.delta'],
        [3, 'message.delta'],
        [4, 'message.delta'],
        [5, 'message.delta'],
        [7, 'run.failed'],
      ]);
    } finally {
      await hub.stop();
      blocking.disconnect();
    }
  });
});
