// Where the time of (a) and (b) goes, measured piece by piece in one process (no HTTP, no worker), on
// a scratch database and Redis prefix like main.ts. Diagnostic: `npx tsx bench/runs/breakdown.ts`.
//   (a) the steps of GET /api/v1/stream before its response head: token lookup, budget, the run's
//       Postgres transaction (also with synchronous_commit off, to isolate the WAL flush), the enqueue,
//       and startRun as a whole; plus round-trip floors for Postgres and Redis.
//   (b) a 10,000-event replay taken apart: XRANGE pages alone, RunEventLog.read (XRANGE + parseRunEntry),
//       and that plus the SSE frames the API writes (sseFrame + join).
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { sql } from 'kysely';
import { AgentBudget, authenticateToken, startRun, type Auth } from '@opsi/core';
import { JobProducer, RunEventLog, parseRunEntry, type StreamEntry } from '@opsi/jobs';
import type { RunEvent } from '@opsi/contracts';
import { createRedis } from '@opsi/redis';
import { createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { CpuMeter, type CpuSnapshot } from './lib/cpu';
import { createScratch } from './lib/env';
import { median, percentile } from './lib/stats';

const N = 200;
const WARMUP = 20;
/** Each list of steps is measured this many times over, in turn, so that a change in the machine's
 *  load (other work on it) weighs on every step alike; samples and CPU are pooled across passes. */
const PASSES = 3;
const EVENTS = 10_000;

let meter: CpuMeter | undefined;

interface Step {
  label: string;
  fn: (i: number) => Promise<unknown>;
  samples: number[];
  cpu: Record<string, number>;
}

async function runSteps(steps: Step[]) {
  let i = 0;
  for (let pass = 0; pass < PASSES; pass++) {
    for (const step of steps) {
      let before: CpuSnapshot | undefined;
      for (let k = 0; k < WARMUP + N; k++) {
        if (k === WARMUP) before = await meter?.snapshot();
        const started = performance.now();
        await step.fn(i++);
        if (k >= WARMUP) step.samples.push(performance.now() - started);
      }
      const cpu = before && meter ? await meter.since(before) : {};
      for (const [k, v] of Object.entries(cpu)) step.cpu[k] = (step.cpu[k] ?? 0) + v;
    }
  }
  for (const step of steps) {
    const n = step.samples.length;
    const cpuText = Object.entries(step.cpu)
      .map(([k, v]) => `${k} ${((1000 * v) / n).toFixed(0)}`)
      .join(', ');
    console.log(
      `  ${step.label.padEnd(62)} p50 ${percentile(step.samples, 50).toFixed(3).padStart(6)} ms  p99 ${percentile(step.samples, 99).toFixed(3).padStart(6)} ms  CPU µs/op: ${cpuText}`,
    );
  }
}

const steps: Step[] = [];
function time(label: string, fn: (i: number) => Promise<unknown>) {
  steps.push({ label, fn, samples: [], cpu: {} });
}

/** The frame sse.ts writes, for the same event (copied so the breakdown needs no app import). */
const sseFrame = (e: RunEvent) => `id: ${e.seq}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;

const scratch = await createScratch();
try {
  const { db, redisPrefix } = scratch;
  const member = await createTenantWithUser(scratch, { budget: 1_000_000 });
  const { token } = await mintTestToken(scratch, member, 'read_write');
  const command = createRedis(scratch.redisUrl, 'command');
  const producerConnection = createRedis(scratch.redisUrl, 'producer');
  await once(producerConnection, 'ready');
  const log = new RunEventLog(command, redisPrefix, 3600);
  const budget = new AgentBudget(command, redisPrefix);
  const producer = new JobProducer(producerConnection, redisPrefix);
  await producer.queue('agent').waitUntilReady();
  const authResult = await authenticateToken(db, token);
  if (!authResult.ok) throw new Error('token');
  const auth: Auth = authResult.auth;
  const database = new URL(scratch.databaseUrl).pathname.slice(1);
  const redisPid = Number(/process_id:(\d+)/.exec(await command.info('server'))?.[1]);
  meter = new CpuMeter(async () => ({
    client: [process.pid],
    Postgres: (
      await sql<{ pid: number }>`select pid from pg_stat_activity where datname = ${database}`.execute(db)
    ).rows.map((r) => r.pid),
    // The local Redis server (shared with anything else using it).
    Redis:
      ['127.0.0.1', 'localhost'].includes(new URL(scratch.redisUrl).hostname) && redisPid ? [redisPid] : [],
  }));

  console.log(
    `(a) steps before the response head of GET /api/v1/stream, ${PASSES} passes of ${N} sequential each (no HTTP):`,
  );
  time('Postgres round trip (select 1)', () => sql`select 1`.execute(db));
  time('Redis round trip (PING)', () => command.ping());
  time('authenticateToken (Postgres)', () => authenticateToken(db, token));
  time('AgentBudget.spend (Redis Lua)', () => budget.spend(auth.token.id, 1_000_000));
  // The statements of startRun's transaction, as it issues them.
  const runTransaction = (syncOff: boolean) =>
    db.transaction().execute(async (tx) => {
      if (syncOff) await sql`set local synchronous_commit = off`.execute(tx);
      const sessionId = randomUUID();
      await tx
        .insertInto('agent_sessions')
        .values({ id: sessionId, tenant_id: auth.tenant.id, created_by: auth.user.id, name: 'hi' })
        .onConflict((oc) => oc.column('id').doUpdateSet({ updated_at: new Date() }))
        .execute();
      await tx
        .selectFrom('agent_sessions')
        .select('tenant_id')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const run = await tx
        .insertInto('agent_runs')
        .values({
          tenant_id: auth.tenant.id,
          session_id: sessionId,
          token_id: auth.token.id,
          prompt: 'hi',
          selected_tools: null,
        })
        .returning(['id', 'session_id'])
        .executeTakeFirstOrThrow();
      await tx
        .insertInto('agent_messages')
        .values({
          tenant_id: auth.tenant.id,
          session_id: sessionId,
          run_id: run.id,
          role: 'user',
          content: 'hi',
        })
        .execute();
    });
  time("startRun's transaction (6 round trips, commit)", () => runTransaction(false));
  time('  same, synchronous_commit = off (no WAL flush wait)', () => runTransaction(true));
  // Not the product's code: the same rows written by one statement (no BEGIN/COMMIT, no separate
  // owner check: a session of another tenant yields no run row). For the round-trip count only.
  const oneStatement = () => {
    const sessionId = randomUUID();
    return sql`
      with s as (
        insert into agent_sessions (id, tenant_id, created_by, name)
        values (${sessionId}, ${auth.tenant.id}, ${auth.user.id}, 'hi')
        on conflict (id) do update set updated_at = now() where agent_sessions.tenant_id = ${auth.tenant.id}
        returning id
      ), r as (
        insert into agent_runs (tenant_id, session_id, token_id, prompt)
        select ${auth.tenant.id}, s.id, ${auth.token.id}, 'hi' from s
        returning id, session_id
      ), m as (
        insert into agent_messages (tenant_id, session_id, run_id, role, content)
        select ${auth.tenant.id}, r.session_id, r.id, 'user', 'hi' from r
      )
      select id, session_id from r`.execute(db);
  };
  time('  (alternative: the same rows in one statement, 1 round trip)', oneStatement);
  time('JobProducer.enqueue agent.turn (BullMQ addJob)', () =>
    producer.enqueue(
      'agent',
      'turn',
      { run_id: randomUUID(), tenant_id: auth.tenant.id },
      { jobId: randomUUID() },
    ),
  );
  const deps = { db, redis: command, log, producer, budget, redisPrefix };
  time('startRun as a whole (budget + transaction + enqueue)', (i) =>
    startRun(deps, auth, { prompt: `hi ${i}` }),
  );

  await runSteps(steps);

  console.log(`\n(b) replay of ${EVENTS} events taken apart, median of 9 interleaved (no HTTP):`);
  const runId = randomUUID();
  await log.append(runId, 'run.started', { attempt: 1 });
  for (let i = 1; i <= EVENTS; i++) await log.append(runId, 'message.delta', { text: `chunk ${i} ` });
  await log.append(runId, 'run.completed', { reply: 'x'.repeat(100) });
  const key = log.streamKey(runId);
  const total = EVENTS + 2;
  const variants: Array<{ label: string; fn: () => Promise<number>; rates: number[] }> = [];
  const rate = (label: string, fn: () => Promise<number>) => variants.push({ label, fn, rates: [] });
  const pages = async (onPage: (entries: StreamEntry[]) => void) => {
    let cursor = '-';
    let n = 0;
    for (;;) {
      const entries = (await command.xrange(key, cursor, '+', 'COUNT', 1000)) as StreamEntry[];
      onPage(entries);
      n += entries.length;
      if (entries.length < 1000) return n;
      cursor = `(${entries[entries.length - 1]![0]}`;
    }
  };
  rate('XRANGE pages of 1000 (ioredis, strings)', () => pages(() => undefined));
  rate('  + parseRunEntry (= RunEventLog.read)', () =>
    pages((entries) => entries.forEach((e) => parseRunEntry(runId, e))),
  );
  let sink = 0;
  rate('  + sseFrame and join per batch (what streamRun writes)', () =>
    pages((entries) => {
      sink += entries.map((e) => sseFrame(parseRunEntry(runId, e))).join('').length;
    }),
  );
  // Not the product's code: parseRunEntry with Object.assign onto the parsed object instead of an object
  // spread (same keys in the same order, so the same frames; checked below).
  const parseAssign = ([id, fields]: StreamEntry): RunEvent => {
    let kind = '';
    let at = '';
    let data = '{}';
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      if (name === 'k') kind = fields[i + 1]!;
      else if (name === 'a') at = fields[i + 1]!;
      else if (name === 'd') data = fields[i + 1]!;
    }
    const seq = Number(id.slice(0, id.indexOf('-')));
    return Object.assign(JSON.parse(data) as object, {
      seq,
      run_id: runId,
      kind: kind as RunEvent['kind'],
      at,
    });
  };
  rate('  (alternative: parseRunEntry with Object.assign, not spread; + sseFrame)', () =>
    pages((entries) => {
      sink += entries.map((e) => sseFrame(parseAssign(e))).join('').length;
    }),
  );
  // Not the product's code: the same frame built by splicing the stored JSON instead of parse + stringify
  // (fields are stored k, a, d, t). Checked byte for byte against the product's frames first.
  const splice = ([id, f]: StreamEntry) => {
    const seq = id.slice(0, id.indexOf('-'));
    const d = f[5]!;
    const head = d === '{}' ? '{' : `${d.slice(0, -1)},`;
    return `id: ${seq}\nevent: ${f[1]}\ndata: ${head}"seq":${seq},"run_id":"${runId}","kind":"${f[1]}","at":"${f[3]}"}\n\n`;
  };
  const all = (await command.xrange(key, '-', '+')) as StreamEntry[];
  const productFrames = all.map((e) => sseFrame(parseRunEntry(runId, e))).join('');
  if (all.map((e) => sseFrame(parseAssign(e))).join('') !== productFrames)
    throw new Error('Object.assign frames differ from the product frames');
  if (all.map(splice).join('') !== productFrames)
    throw new Error('spliced frames differ from the product frames');
  rate('  (alternative: frame spliced from the stored JSON, no parse)', () =>
    pages((entries) => {
      sink += entries.map(splice).join('').length;
    }),
  );
  // Interleaved repetitions (the first discarded), median per variant.
  for (let r = 0; r < 10; r++) {
    for (const v of variants) {
      const started = performance.now();
      const n = await v.fn();
      const ms = performance.now() - started;
      if (n !== total) throw new Error(`${v.label}: ${n} of ${total}`);
      if (r > 0) v.rates.push(n / (ms / 1000));
    }
  }
  for (const v of variants) {
    const value = median(v.rates);
    console.log(
      `  ${v.label.padEnd(74)} ${value.toFixed(0).padStart(9)} ev/s  (${(1e6 / value).toFixed(1)} µs/event)`,
    );
  }
  if (sink < 0) console.log(sink);

  await producer.close();
  producerConnection.disconnect();
  command.disconnect();
} finally {
  await scratch.close();
}
process.exit(0);
