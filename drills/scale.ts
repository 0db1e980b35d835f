import { setMaxListeners } from 'node:events';
import { createParser } from 'eventsource-parser';
import { connectEnvironment, requestScan } from '@opsi/core';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { followRun, script, type FollowedRun } from '../test/support/stack';
import type { ServiceProcess } from '../test/support/processes';
import { retireWorker, sleep } from './lib/http';
import type { Drill, DrillContext, DrillRow, DrillTenant } from './lib/types';

// Worker processes scaled 1 → 4 → 1 while several tenants' agent turns and operator scans go on without
// pause: three workers are started beside the one, then three of the four are stopped with SIGTERM
// (graceful drain within WORKER_SHUTDOWN_GRACE_MS), mid-flood, in rounds. Correct: every turn ends
// with exactly one terminal event, its stream read back from the start is numbered 1..n with no gap and
// no repeat, holds one run.started and no run.resumed, the run took one attempt and wrote one assistant
// message; every scan requested completes and wrote one snapshot; no answer is a 5xx.

/**
 * The drill's workers: they serve turns, scans (and the resilience jobs a scan enqueues) and triage,
 * two turns at a time each, so that with 7 or more turns running at a SIGTERM every one of the three
 * leaving workers holds a turn (the one that stays holds at most 2): each drains work in flight.
 */
const FLEET = {
  WORKER_QUEUES: 'agent,pulse,triage',
  WORKER_CONCURRENCY_AGENT: '2',
  WORKER_SHUTDOWN_GRACE_MS: '8000',
};
const SURVIVOR_SLOTS = 2;
// A turn works 1.5 s: long beside a worker's own shutdown (half a second), so a worker that did not wait
// for its turns would leave them to be resumed elsewhere (run.resumed; with a grace of 1 ms it does).
const STEPS = [{ deltas: 3, text: 'a' }, { sleep: 1500 }, { deltas: 3, text: 'b' }];
const TERMINAL = ['run.completed', 'run.failed'];

interface ReadBack {
  seqs: number[];
  kinds: string[];
  status: number;
}

/** The run's whole stream read back from the start (attach with after_seq=0) once it has ended. */
async function readBack(base: string, token: string, sessionId: string): Promise<ReadBack> {
  const out: ReadBack = { seqs: [], kinds: [], status: -1 };
  const q = new URLSearchParams({ session_id: sessionId, after_seq: '0' });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const res = await fetch(`${base}/api/v1/stream/attach?${q}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    out.status = res.status;
    if (res.status !== 200) {
      await res.text();
      return out;
    }
    let ended = false;
    const parser = createParser({
      onEvent(m) {
        out.seqs.push(Number(m.id));
        out.kinds.push(m.event ?? 'message');
        if (TERMINAL.includes(m.event ?? '')) ended = true;
      },
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    while (!ended) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    await reader.cancel().catch(() => undefined);
  } catch {
    // bounded: what was read is judged
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** Agent turns from every tenant, `perTenant` at a time each, until stopped; each followed to its end. */
function turnFlood(ctx: DrillContext, tenants: DrillTenant[], perTenant: number) {
  const runs: Array<{ tenant: DrillTenant; run: FollowedRun; api: string }> = [];
  let stop = false;
  const loops = tenants.flatMap((tenant, t) =>
    Array.from({ length: perTenant }, async (_, i) => {
      for (let n = t + i; !stop && !ctx.signal.aborted; n++) {
        const api = ctx.stack.apis[n % ctx.stack.apis.length]!.url;
        const run = await followRun(api, tenant.tokens.read_write, script(STEPS), { boundMs: 120_000 });
        runs.push({ tenant, run, api });
      }
    }),
  );
  const all = Promise.all(loops);
  return {
    runs,
    async stop() {
      stop = true;
      await all;
    },
  };
}

/** Operator scans of each tenant, one after another (a tenant's scans never run at once), until stopped. */
function scanFlood(ctx: DrillContext, producer: JobProducer, tenants: DrillTenant[]) {
  const requested: Array<{ tenantId: string; scanId: string; reused: boolean }> = [];
  let stop = false;
  const db = ctx.stack.database.db;
  const all = Promise.all(
    tenants.map(async (tenant) => {
      while (!stop && !ctx.signal.aborted) {
        const scan = await requestScan(db, producer, tenant.id, 'operator', { reuseActive: true });
        requested.push({ tenantId: tenant.id, scanId: scan.id, reused: scan.reused });
        // Until it ends (the judgement below reads every scan's final state; this only paces).
        for (const deadline = Date.now() + 120_000; Date.now() < deadline && !ctx.signal.aborted;) {
          const row = await db
            .selectFrom('inventory_scans')
            .select('status')
            .where('id', '=', scan.id)
            .executeTakeFirstOrThrow();
          if (row.status === 'completed' || row.status === 'failed') break;
          await sleep(200);
        }
      }
    }),
  );
  return {
    requested,
    async stop() {
      stop = true;
      await all;
    },
  };
}

/** The drill's turns and scans in a worker's hands now (what a SIGTERM sent now must drain). */
async function openWork(ctx: DrillContext, turnTenants: DrillTenant[], scanTenants: DrillTenant[]) {
  const db = ctx.stack.database.db;
  const [turns, scans] = await Promise.all([
    db
      .selectFrom('agent_runs')
      .select(db.fn.countAll<number>().as('n'))
      .where(
        'tenant_id',
        'in',
        turnTenants.map((t) => t.id),
      )
      .where('status', '=', 'running')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('inventory_scans')
      .select(db.fn.countAll<number>().as('n'))
      .where(
        'tenant_id',
        'in',
        scanTenants.map((t) => t.id),
      )
      .where('status', '=', 'running')
      .executeTakeFirstOrThrow(),
  ]);
  return { turns: Number(turns.n), scans: Number(scans.n) };
}

interface ScanJob {
  queue: 'pulse' | 'triage';
  id: string;
  state: string;
  /** How many times a worker took the job (BullMQ's attemptsStarted; stalled takeovers included). */
  started: number;
  stalled: number;
}

/**
 * Waits (bounded) until every scan's jobs have ended, and answers them: the scan job, the resilience job
 * it enqueues and, for a completed scan, the triage job of the alerts it brought in (ids from the worker).
 */
async function scanJobsSettled(
  producer: JobProducer,
  requested: Array<{ scanId: string }>,
  boundMs: number,
): Promise<ScanJob[]> {
  const ids = [...new Set(requested.map((s) => s.scanId))].flatMap((id) => [
    { queue: 'pulse' as const, id: `scan-${id}` },
    { queue: 'pulse' as const, id: `resilience-${id}` },
    { queue: 'triage' as const, id: `scan-${id}` },
  ]);
  let jobs: ScanJob[] = [];
  await waitFor(async () => {
    jobs = await Promise.all(
      ids.map(async ({ queue, id }) => {
        const job = await producer.queue(queue).getJob(id);
        const state = job ? await job.getState() : 'missing';
        return { queue, id, state, started: job?.attemptsStarted ?? 0, stalled: job?.stalledCounter ?? 0 };
      }),
    );
    return jobs.every((j) => j.state === 'completed' || j.state === 'failed');
  }, boundMs);
  return jobs;
}

async function waitFor(what: () => Promise<boolean>, boundMs: number): Promise<boolean> {
  for (const deadline = Date.now() + boundMs; Date.now() < deadline;) {
    if (await what()) return true;
    await sleep(250);
  }
  return false;
}

export const drill: Drill = {
  name: 'scale',
  description: 'workers scaled 1 → 4 → 1 (SIGTERM) under a flood of turns and scans; each job done once',
  timeoutMs: 420_000,
  async run(ctx) {
    const { stack } = ctx;
    const db = stack.database.db;
    const rounds = ctx.scale(2, 1);
    const holdMs = ctx.scale(6000, 2000);
    const turnTenants = await Promise.all(Array.from({ length: ctx.scale(4, 2) }, () => ctx.newTenant()));
    const scanTenants = await Promise.all(Array.from({ length: ctx.scale(3, 2) }, () => ctx.newTenant()));
    for (const t of scanTenants) await connectEnvironment(db, t.id, { kind: 'demo', size: 'small', seed: 7 });
    /** Snapshots written so far, per scan tenant: each scan of the flood must add exactly one. */
    const snapshotsPerTenant = () =>
      db
        .selectFrom('inventory_snapshots')
        .select(['tenant_id', db.fn.countAll<number>().as('n')])
        .where(
          'tenant_id',
          'in',
          scanTenants.map((t) => t.id),
        )
        .groupBy('tenant_id')
        .execute();
    // More clients than the four workers' eight slots: turns queue behind them, a steady backlog.
    const perTenant = ctx.scale(4, 5);
    setMaxListeners(100, ctx.signal);
    const redis = createRedis(stack.env.REDIS_URL!, 'producer');
    const producer = new JobProducer(redis, stack.env.REDIS_PREFIX!);

    // Scale the stack's workers to one that serves turns and scans (the others drain on SIGTERM).
    const original = stack.workers.slice();
    const grace = Number(FLEET.WORKER_SHUTDOWN_GRACE_MS);
    let fleet: ServiceProcess[] = [await stack.startWorker(FLEET)];
    await Promise.all(original.map((w) => retireWorker(stack, w, 15_000)));
    const scaleDowns: number[] = [];
    const exitCodes: Array<number | null> = [];
    const inFlight: Array<{ turns: number; scans: number }> = [];
    const began = performance.now();
    const at = () => `${Math.round((performance.now() - began) / 1000)} s`;
    let turns: ReturnType<typeof turnFlood> | undefined;
    let scans: ReturnType<typeof scanFlood> | undefined;
    let baseline = new Map<string, number>();
    let scanJobs: ScanJob[];
    try {
      // Each scan tenant's first scan (which also records the demo's past) before the flood, so every
      // scan of the flood writes exactly one snapshot.
      for (const t of scanTenants) {
        const first = await requestScan(db, producer, t.id, 'operator');
        const done = await waitFor(async () => {
          const s = await db
            .selectFrom('inventory_scans')
            .select('status')
            .where('id', '=', first.id)
            .executeTakeFirstOrThrow();
          return s.status === 'completed' || s.status === 'failed';
        }, 120_000);
        if (!done) throw new Error(`the first scan of a tenant did not end within 120 s`);
      }
      const counted = await snapshotsPerTenant();
      baseline = new Map(counted.map((r) => [r.tenant_id, Number(r.n)]));

      ctx.log(`scale: ${at()}: first scans done; the flood starts on 1 worker`);
      turns = turnFlood(ctx, turnTenants, perTenant);
      scans = scanFlood(ctx, producer, scanTenants);
      await sleep(holdMs);
      for (let r = 0; r < rounds && !ctx.signal.aborted; r++) {
        const added = await Promise.all([1, 2, 3].map(() => stack.startWorker(FLEET)));
        fleet.push(...added);
        ctx.log(`scale: ${at()}: round ${r + 1}: 4 workers, ${turns.runs.length} turns done so far`);
        await sleep(holdMs);
        // Stop three of the four, the oldest included, while turns and scans are in flight on them.
        const leaving = fleet.slice(0, 3);
        fleet = fleet.slice(3);
        inFlight.push(await openWork(ctx, turnTenants, scanTenants));
        const t0 = performance.now();
        exitCodes.push(...(await Promise.all(leaving.map((w) => retireWorker(stack, w, grace + 15_000)))));
        scaleDowns.push(performance.now() - t0);
        ctx.log(
          `scale: ${at()}: round ${r + 1}: 1 worker; scale-down took ${Math.round(scaleDowns.at(-1)!)} ms`,
        );
        await sleep(holdMs);
      }
    } finally {
      await Promise.all([turns?.stop(), scans?.stop()]);
      ctx.log(`scale: ${at()}: flood stopped`);
      // Leave the stack as found: as many workers as before, serving what they served.
      const restored = await Promise.all(original.map(() => stack.startWorker()));
      // Let the scans' own jobs (resilience, triage) finish before the last pulse worker goes.
      scanJobs = await scanJobsSettled(producer, scans?.requested ?? [], 60_000);
      await Promise.all(fleet.map((w) => retireWorker(stack, w, grace + 15_000)));
      await producer.close();
      redis.disconnect();
      ctx.log(`scale: ${at()}: ${restored.length} workers restored`);
    }

    // Judge every turn: its stream as followed, then read back from the start, then its rows.
    const runs = turns!.runs;
    const requested = scans!.requested;
    const fiveXx = runs.filter((r) => r.run.statuses.some((s) => s >= 500)).length;
    const refused = runs.filter((r) => r.run.refused !== undefined).length;
    const followedOk = runs.filter(({ run }) => {
      const dense = run.seqs.every((s, i) => s === i + 1);
      return run.terminals === 1 && TERMINAL.includes(run.kinds.at(-1) ?? '') && dense;
    }).length;
    const back = await Promise.all(
      runs.map((r) =>
        r.run.sessionId
          ? readBack(r.api, r.tenant.tokens.read_write, r.run.sessionId)
          : Promise.resolve<ReadBack>({ seqs: [], kinds: [], status: -1 }),
      ),
    );
    const gapless = back.filter(
      (b) =>
        b.seqs.length > 0 &&
        b.seqs.every((s, i) => s === i + 1) &&
        b.kinds.filter((k) => TERMINAL.includes(k)).length === 1 &&
        TERMINAL.includes(b.kinds.at(-1) ?? ''),
    ).length;
    const startedTwice = back.filter((b) => b.kinds.filter((k) => k === 'run.started').length !== 1).length;
    const resumed = back.filter((b) => b.kinds.includes('run.resumed')).length;
    const backFiveXx = back.filter((b) => b.status >= 500).length;
    const runIds = runs.flatMap((r) => (r.run.runId ? [r.run.runId] : []));
    const rows = runIds.length
      ? await db
          .selectFrom('agent_runs')
          .select(['id', 'status', 'attempts'])
          .select((eb) =>
            eb
              .selectFrom('agent_messages')
              .select(eb.fn.countAll<number>().as('n'))
              .whereRef('agent_messages.run_id', '=', 'agent_runs.id')
              .where('agent_messages.role', '=', 'assistant')
              .as('replies'),
          )
          .where('id', 'in', runIds)
          .execute()
      : [];
    const completed = rows.filter((r) => r.status === 'completed').length;
    const once = rows.filter((r) => r.attempts === 1 && Number(r.replies) === 1).length;

    // Judge every scan requested: it completed, and wrote one snapshot (a scan run twice writes two).
    const scanIds = [...new Set(requested.map((s) => s.scanId))];
    const scanRows = scanIds.length
      ? await db
          .selectFrom('inventory_scans')
          .select(['id', 'status'])
          .select((eb) =>
            eb
              .selectFrom('inventory_snapshots')
              .select(eb.fn.countAll<number>().as('n'))
              .whereRef('inventory_snapshots.scan_id', '=', 'inventory_scans.id')
              .as('snapshots'),
          )
          .where('id', 'in', scanIds)
          .execute()
      : [];
    const scansCompleted = scanRows.filter((s) => s.status === 'completed').length;
    const scansOnce = scanRows.filter((s) => Number(s.snapshots) === 1).length;
    const after = await snapshotsPerTenant();
    const extraSnapshots = after.reduce((sum, r) => sum + Number(r.n) - (baseline.get(r.tenant_id) ?? 0), 0);
    const jobsOnce = scanJobs.filter((j) => j.state === 'completed' && j.started === 1 && j.stalled === 0);
    for (const j of scanJobs.filter((x) => !jobsOnce.includes(x)).slice(0, 5))
      ctx.log(`scale: ${j.queue} job ${j.id}: ${j.state}, taken ${j.started}x, stalled ${j.stalled}x`);
    const reusedScans = requested.filter((s) => s.reused).length;
    const graceful = exitCodes.filter((c) => c === 0).length;
    const slowest = Math.round(Math.max(...scaleDowns));
    const n = runs.length;

    const row = (measure: string, value: number | string, target: string, pass: boolean): DrillRow => ({
      drill: 'scale',
      measure,
      value,
      target,
      pass,
    });
    return [
      row(
        `turns followed: one terminal, seq 1..n (${turnTenants.length} tenants, ${rounds} round(s) 1→4→1)`,
        `${followedOk}/${n}`,
        `${n}/${n}, n > 0`,
        n > 0 && followedOk === n,
      ),
      row('turns read back from seq 1: gapless, one terminal', `${gapless}/${n}`, `${n}/${n}`, gapless === n),
      row('turns with other than one run.started', startedTwice, '0', startedTwice === 0),
      row(
        'runs completed with one attempt and one assistant message',
        `${once}/${n}`,
        `${n}/${n}`,
        once === n && rows.length === n,
      ),
      row('runs completed (not failed)', `${completed}/${n}`, 'info', true),
      row('turns resumed by another worker (run.resumed)', resumed, '0 (graceful drain)', resumed === 0),
      row(
        `scans requested that completed (${scanTenants.length} tenants)`,
        `${scansCompleted}/${scanIds.length}`,
        `${scanIds.length}/${scanIds.length}, > 0`,
        scanIds.length > 0 && scansCompleted === scanIds.length,
      ),
      row(
        'scans that wrote exactly one snapshot (none run twice)',
        `${scansOnce}/${scanIds.length}`,
        `${scanIds.length}/${scanIds.length}`,
        scansOnce === scanIds.length && extraSnapshots === scanIds.length,
      ),
      row(
        'scan, resilience and triage jobs of those scans completed, each taken once',
        `${jobsOnce.length}/${scanIds.length * 3}`,
        `${scanIds.length * 3}/${scanIds.length * 3}`,
        jobsOnce.length === scanIds.length * 3 && scanJobs.length === scanIds.length * 3,
      ),
      row('scan requests answered with a scan already active', reusedScans, '0', reusedScans === 0),
      row(
        '5xx answers (or turns refused)',
        fiveXx + backFiveXx + refused,
        '0',
        fiveXx + backFiveXx + refused === 0,
      ),
      row(
        'workers that exited 0 on SIGTERM',
        `${graceful}/${exitCodes.length}`,
        `${rounds * 3}/${rounds * 3}`,
        graceful === rounds * 3 && exitCodes.length === rounds * 3,
      ),
      row(
        'turns / scans running when SIGTERM was sent, per round',
        inFlight.map((f) => `${f.turns} / ${f.scans}`).join(', '),
        `turns > ${2 * 2 + SURVIVOR_SLOTS} (each leaving worker mid-turn)`,
        inFlight.length === rounds && inFlight.every((f) => f.turns > 2 * 2 + SURVIVOR_SLOTS),
      ),
      row(
        'scale-down 4 → 1 took, slowest round (ms)',
        slowest,
        `≤ ${grace + 5000} ms (grace ${grace} + 5 s)`,
        slowest <= grace + 5000,
      ),
    ];
  },
};
