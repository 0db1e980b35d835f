// The run-pipeline benchmark: our API, worker and job layer side by side with the bare libraries under
// them, in one run, on a scratch database and a Redis prefix of its own. `npm run bench:runs`; see
// docs/performance.md for what each number means. Options (all optional):
//   --latency=300 --warmup=30     (a) measured requests per side (split over --turn-rounds), warm-up
//   --counts                      (a): also Postgres transactions and Redis commands per turn, each side
//                                 (50 more turns each, with 11 s waits for Postgres's counters)
//   --turn-rounds=4               (a) and (e): rounds per side, ours and the floor (bench/floor/stream.ts)
//                                 alternating which goes first; the table shows medians of rounds
//   --events=10000 --replays=9    (b) events in the replayed run, timed replays per side
//   --jobs=5000 --concurrency=50 --window=50 --rounds=5   (c) jobs per round, worker concurrency,
//                                 adds in flight while enqueueing, rounds per side (alternating)
//   --connections=500             (d) idle SSE connections held open
//   --streams=10 --per-stream=30  (e) streams in flight at once, measured requests per stream (after
//                                 --warmup ÷ 10 each)
//   --agent-concurrency=8         WORKER_CONCURRENCY_AGENT of our worker and the raw one's concurrency
//   --only=a,b,c,d,e              run some parts only
//   --cpu-prof=dir                node --cpu-prof on ours' and the floor's API and worker (whole life,
//                                 written to dir/ours and dir/floor when they exit; no inspector involved)
//   --profile[=dir]               also take V8 CPU profiles of the API and worker during (a) and (b),
//                                 and print where their time goes (slows them: a diagnostic run)
//   --json=path                   also write every number as JSON
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { jobsOurs, jobsRaw, enqueueBulkRaw, type JobRound } from './jobs';
import {
  healthzLatency,
  latencyOurs,
  latencyOursConcurrent,
  latencyRaw,
  latencyRawConcurrent,
  type LatencySample,
} from './latency';
import { cpuMeterFor, cpuText } from './lib/cpu';
import {
  createScratch,
  liveServices,
  startApiAndWorker,
  startService,
  stopInProcess,
  type Scratch,
  type Service,
} from './lib/env';
import { renderProfile, summarizeProfile } from './lib/profile';
import { median, passes, percentile, renderTable, sleep, type Row } from './lib/stats';
import { createOpenSessions, measureIdleConnections, type MemoryResult } from './memory';
import { attachOnce, createLongRun, xrangeOnce } from './replay';
import { startStreamFloor } from '../floor/start';
import { serverCounts } from './lib/counts';

function option(name: string, fallback: number): number;
function option(name: string, fallback: string | undefined): string | undefined;
function option(name: string, fallback: number | string | undefined) {
  const arg = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!arg) return fallback;
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : '';
  if (typeof fallback === 'number') {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number`);
    return n;
  }
  return value;
}

const o = {
  latency: option('latency', 300),
  warmup: option('warmup', 30),
  events: option('events', 10_000),
  replays: option('replays', 9),
  jobs: option('jobs', 5000),
  concurrency: option('concurrency', 50),
  window: option('window', 50),
  rounds: option('rounds', 5),
  connections: option('connections', 500),
  streams: option('streams', 10),
  perStream: option('per-stream', 30),
  turnRounds: option('turn-rounds', 4),
  counts: process.argv.includes('--counts'),
  only: new Set((option('only', 'a,b,c,d,e') ?? 'a,b,c,d,e').split(',')),
  profile: process.argv.some((a) => a === '--profile' || a.startsWith('--profile='))
    ? option('profile', '') || join(os.tmpdir(), `opsi-bench-profiles-${process.pid}`)
    : undefined,
  json: option('json', undefined),
};

/** The product's worker concurrency for agent turns (WORKER_CONCURRENCY_AGENT's default), both sides. */
const AGENT_CONCURRENCY = option('agent-concurrency', 8);
const KiB = 1024;

const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const ms = (v: number) => `${v.toFixed(2)} ms`;

let scratch: Scratch | undefined;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    stopInProcess();
    await Promise.allSettled(liveServices().map((s) => s.stop(5000)));
    await scratch?.close();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** --cpu-prof=dir: V8 CPU profiles of a side's API and worker, whole life, written there when they exit. */
function cpuProfArgs(side: string): string[] {
  const dir = option('cpu-prof', undefined);
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, side)}`] : [];
}

/** Per process group, the median over rounds of CPU ms per turn. */
function medianCpu(list: Array<{ cpu?: Record<string, number> }>): Record<string, number> | undefined {
  const withCpu = list.filter((x) => x.cpu);
  if (!withCpu.length) return undefined;
  return Object.fromEntries(
    Object.keys(withCpu[0]!.cpu!).map((k) => [k, median(withCpu.map((x) => x.cpu![k] ?? 0))]),
  );
}

async function profiled<T>(services: Service[], label: string, fn: () => Promise<T>): Promise<T> {
  if (!o.profile || !services.length) return fn();
  mkdirSync(o.profile, { recursive: true });
  await Promise.all(services.map((s) => s.request({ type: 'profile-start' })));
  try {
    return await fn();
  } finally {
    for (const s of services) {
      const path = join(o.profile, `${label}-${s.name}.cpuprofile`);
      await s.request({ type: 'profile-stop', path });
      console.log(renderProfile(`profile ${label} / ${s.name} (${path})`, summarizeProfile(path)));
    }
  }
}

async function main() {
  const rows: Row[] = [];
  const details: string[] = [];
  const results: Record<string, unknown> = {
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()}`,
    },
    options: { ...o, only: [...o.only] },
  };
  const loadAtStart = os.loadavg();
  log(
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );

  scratch = await createScratch();
  const s = scratch;
  log(`scratch database ${new URL(s.databaseUrl).pathname.slice(1)}, Redis prefix ${s.redisPrefix}`);
  const member = await createTenantWithUser(s, { budget: 1_000_000 });
  const { token } = await mintTestToken(s, member, 'read_write');

  const {
    api,
    worker,
    url: apiUrl,
  } = await startApiAndWorker(
    s,
    {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      AGENT_ENGINE: 'scripted',
      WORKER_QUEUES: 'agent',
      WORKER_CONCURRENCY_AGENT: String(AGENT_CONCURRENCY),
      WORKER_SHUTDOWN_GRACE_MS: '2000',
    },
    cpuProfArgs('ours'),
  );
  log(`API (apps/api/src/main.ts) at ${apiUrl}, worker (apps/worker/src/main.ts), AGENT_ENGINE=scripted`);

  // The stream floor (bench/floor/stream.ts): the contract's path at its minimum, its own API and worker
  // processes, same database, same Redis, same token, same worker concurrency.
  const floor =
    o.only.has('a') || o.only.has('e')
      ? await startStreamFloor(s, {
          tenantId: member.tenant.id,
          userId: member.user.id,
          concurrency: AGENT_CONCURRENCY,
          nodeArgs: cpuProfArgs('floor'),
        })
      : undefined;
  if (floor)
    log(`floor (bench/floor/stream.ts) at ${floor.url}, its bare worker at concurrency ${AGENT_CONCURRENCY}`);
  const p = (v: number[]) => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))}`;
  const p50s = (list: LatencySample[]) => list.map((x) => percentile(x.firstEvent, 50));
  const cpuSum = (x: LatencySample) => Object.values(x.cpu ?? {}).reduce((a, b) => a + b, 0);
  const pooled = (list: LatencySample[]): LatencySample => ({
    firstEvent: list.flatMap((x) => x.firstEvent),
    head: list.flatMap((x) => x.head),
    total: list.flatMap((x) => x.total),
    cpu: medianCpu(list),
  });
  const roundsText = (list: LatencySample[]) => p50s(list).map(ms).join(', ');

  // (a) ------------------------------------------------------------------------------------------------
  if (o.only.has('a') && floor) {
    const per = Math.ceil(o.latency / o.turnRounds);
    log(
      `(a) enqueue -> first event: ${o.warmup} warm-up, then ${o.turnRounds} rounds of ${per} sequential requests per side (ours, floor), alternating which goes first`,
    );
    const meterFor = cpuMeterFor(s);
    const oursMeter = meterFor({ API: [api.child.pid!], worker: [worker.child.pid!] });
    const floorMeter = meterFor({ API: [floor.api.child.pid!], worker: [floor.worker.child.pid!] });
    await latencyOurs(apiUrl, token, { n: 0, warmup: o.warmup });
    await latencyOurs(floor.url, token, { n: 0, warmup: o.warmup });
    const oursRounds: LatencySample[] = [];
    const floorRounds: LatencySample[] = [];
    for (let r = 0; r < o.turnRounds; r++) {
      const runOurs = async () =>
        oursRounds.push(
          await profiled(r === 0 ? [api, worker] : [], 'a-ours', () =>
            latencyOurs(apiUrl, token, { n: per, warmup: 0, meter: oursMeter }),
          ),
        );
      const runFloor = async () =>
        floorRounds.push(
          await profiled(r === 0 ? [floor.api, floor.worker] : [], 'a-floor', () =>
            latencyOurs(floor.url, token, { n: per, warmup: 0, meter: floorMeter }),
          ),
        );
      if (r % 2 === 0) await runOurs().then(runFloor);
      else await runFloor().then(runOurs);
    }
    if (o.counts) {
      // Postgres publishes a backend's counters when it goes idle, at most once a second and at the
      // latest 10 s later: wait that out around a batch of turns so the counts are exact.
      for (const [name, url] of [
        ['ours', apiUrl],
        ['floor', floor.url],
      ] as const) {
        await sleep(11_000);
        const before = await serverCounts(s);
        await latencyOurs(url, token, { n: 50, warmup: 0 });
        // Redis's counter is read at once (it is server-wide: idle polling would add to it); Postgres's
        // once its backends have published theirs.
        const { commands } = await serverCounts(s, before);
        await sleep(11_000);
        const { statements } = await serverCounts(s, before);
        details.push(
          `    per turn, ${name}: ${(statements / 50).toFixed(2)} Postgres transactions, ${(commands / 50).toFixed(2)} Redis commands (50 turns; commands inside Lua included; Redis is shared with other users)`,
        );
      }
    }
    const raw = await latencyRaw(s, {
      n: o.latency,
      warmup: o.warmup,
      concurrency: AGENT_CONCURRENCY,
      meterFor: (pid) => meterFor({ worker: [pid] }),
    });
    const gapN = Math.min(100, o.latency);
    log(`(a) again, ${gapN} requests with a 20 ms pause between them; then GET /healthz`);
    const spaced = await latencyOurs(apiUrl, token, { n: gapN, warmup: 5, gapMs: 20 });
    const healthz = await healthzLatency(apiUrl, o.latency);
    const ours = pooled(oursRounds);
    const fl = pooled(floorRounds);
    const afterHead = ours.firstEvent.map((v, i) => v - ours.head[i]!);
    const floorAfterHead = fl.firstEvent.map((v, i) => v - fl.head[i]!);
    rows.push(
      {
        id: '(a)',
        metric: `first SSE event p50 vs floor (median of ${o.turnRounds} rounds)`,
        unit: 'ms',
        ours: median(p50s(oursRounds)),
        raw: median(p50s(floorRounds)),
        targets: [{ kind: 'ratio', direction: 'lower', value: 1.5 }],
        digits: 2,
      },
      {
        id: '(a)',
        metric: `CPU per turn, all processes, vs floor (median of ${o.turnRounds})`,
        unit: 'ms',
        ours: median(oursRounds.map(cpuSum)),
        raw: median(floorRounds.map(cpuSum)),
        targets: [{ kind: 'ratio', direction: 'lower', value: 1.5 }],
        digits: 2,
      },
      {
        id: '(a)',
        metric: 'first SSE event p50, absolute (earlier target)',
        unit: 'ms',
        ours: percentile(ours.firstEvent, 50),
        raw: undefined,
        targets: [{ kind: 'abs', direction: 'lower', value: 5 }],
        digits: 2,
      },
      {
        id: '(a)',
        metric: 'first SSE event p99 vs floor, pooled',
        unit: 'ms',
        ours: percentile(ours.firstEvent, 99),
        raw: percentile(fl.firstEvent, 99),
        targets: [{ kind: 'abs', direction: 'lower', value: 25 }],
        digits: 2,
      },
      {
        id: '(a)',
        metric: 'first SSE event p50 vs raw BullMQ hop (information)',
        unit: 'ms',
        ours: percentile(ours.firstEvent, 50),
        raw: percentile(raw.firstEvent, 50),
        digits: 2,
      },
    );
    details.push(
      `(a) first event p50 per round: ours ${roundsText(oursRounds)}; floor ${roundsText(floorRounds)} (round 1 ours first, then alternating)`,
      `    CPU ms per turn per round (all processes): ours ${oursRounds.map((x) => cpuSum(x).toFixed(2)).join(', ')}; floor ${floorRounds.map((x) => cpuSum(x).toFixed(2)).join(', ')}`,
      `    ours, split at the response head (p50 / p99, pooled):`,
      `    request -> head (auth, budget, run row, enqueue):   ${p(ours.head)}  floor ${p(fl.head)}`,
      `    head -> first event (worker pickup .. SSE frame):   ${p(afterHead)}  floor ${p(floorAfterHead)}`,
      `    request -> stream closed (run.completed):           ${p(ours.total)}  floor ${p(fl.total)}`,
      `    first event with a 20 ms pause between requests:    ${p(spaced.firstEvent)} (head ${p(spaced.head)})`,
      `    GET /healthz on the same API (HTTP + Koa floor):     ${p(healthz)}`,
      `    CPU ms per turn, ours (median of rounds):  ${cpuText(ours.cpu)}`,
      `    CPU ms per turn, floor (median of rounds): ${cpuText(fl.cpu)}`,
      `    raw BullMQ hop (information): first event ${p(raw.firstEvent)}; CPU ${cpuText(raw.cpu)}`,
    );
    results.a = { ours: oursRounds, floor: floorRounds, raw, spaced, healthz };
  }

  // (e) ------------------------------------------------------------------------------------------------
  if (o.only.has('e') && floor) {
    const warmup = Math.max(1, Math.ceil(o.warmup / 10));
    log(
      `(e) enqueue -> first event with ${o.streams} streams at once: ${o.turnRounds} rounds per side (ours, floor, alternating which goes first), each ${warmup} + ${o.perStream} requests per stream; the raw hop twice`,
    );
    const meterFor = cpuMeterFor(s);
    const options = { n: o.perStream, warmup, streams: o.streams };
    const oursMeter = meterFor({ API: [api.child.pid!], worker: [worker.child.pid!] });
    const floorMeter = meterFor({ API: [floor.api.child.pid!], worker: [floor.worker.child.pid!] });
    const runRaw = () =>
      latencyRawConcurrent(s, {
        ...options,
        concurrency: AGENT_CONCURRENCY,
        meterFor: (pid) => meterFor({ worker: [pid] }),
      });
    const oursRounds: LatencySample[] = [];
    const floorRounds: LatencySample[] = [];
    const rawRounds: LatencySample[] = [];
    for (let r = 0; r < o.turnRounds; r++) {
      const runOurs = async () =>
        oursRounds.push(
          await profiled(r === 0 ? [api, worker] : [], 'e-ours', () =>
            latencyOursConcurrent(apiUrl, token, { ...options, meter: oursMeter }),
          ),
        );
      const runFloor = async () =>
        floorRounds.push(
          await profiled(r === 0 ? [floor.api, floor.worker] : [], 'e-floor', () =>
            latencyOursConcurrent(floor.url, token, { ...options, meter: floorMeter }),
          ),
        );
      if (r % 2 === 0) await runOurs().then(runFloor);
      else await runFloor().then(runOurs);
      if (r === 0 || r === o.turnRounds - 1) rawRounds.push(await runRaw());
    }
    const ours = pooled(oursRounds);
    const fl = pooled(floorRounds);
    const raw = pooled(rawRounds);
    rows.push(
      {
        id: '(e)',
        metric: `first SSE event p50, ${o.streams} streams at once, vs floor (median of ${o.turnRounds})`,
        unit: 'ms',
        ours: median(p50s(oursRounds)),
        raw: median(p50s(floorRounds)),
        targets: [{ kind: 'ratio', direction: 'lower', value: 1.5 }],
        digits: 2,
      },
      {
        id: '(e)',
        metric: `  same, p99 pooled, vs floor`,
        unit: 'ms',
        ours: percentile(ours.firstEvent, 99),
        raw: percentile(fl.firstEvent, 99),
        digits: 2,
      },
      {
        id: '(e)',
        metric: `CPU per turn, ${o.streams} streams at once, vs floor (median)`,
        unit: 'ms',
        ours: median(oursRounds.map(cpuSum)),
        raw: median(floorRounds.map(cpuSum)),
        targets: [{ kind: 'ratio', direction: 'lower', value: 1.5 }],
        digits: 2,
      },
      {
        id: '(e)',
        metric: `first SSE event p50 vs raw BullMQ hop (information)`,
        unit: 'ms',
        ours: percentile(ours.firstEvent, 50),
        raw: percentile(raw.firstEvent, 50),
        digits: 2,
      },
    );
    const afterHead = ours.firstEvent.map((v, i) => v - ours.head[i]!);
    const floorAfterHead = fl.firstEvent.map((v, i) => v - fl.head[i]!);
    details.push(
      `(e) ${o.streams} streams at once, first event p50 per round: ours ${roundsText(oursRounds)}; floor ${roundsText(floorRounds)}; raw hop ${roundsText(rawRounds)}`,
      `    CPU ms per turn per round (all processes): ours ${oursRounds.map((x) => cpuSum(x).toFixed(2)).join(', ')}; floor ${floorRounds.map((x) => cpuSum(x).toFixed(2)).join(', ')}`,
      `    request -> head (auth, budget, run row, enqueue):   ${p(ours.head)}  floor ${p(fl.head)}`,
      `    head -> first event (worker pickup .. SSE frame):   ${p(afterHead)}  floor ${p(floorAfterHead)}`,
      `    request -> stream closed (run.completed):           ${p(ours.total)}  floor ${p(fl.total)}`,
      `    CPU ms per turn, ours (median of rounds):  ${cpuText(ours.cpu)}`,
      `    CPU ms per turn, floor (median of rounds): ${cpuText(fl.cpu)}`,
      `    CPU ms per request, raw hop (information):  ${cpuText(raw.cpu)}`,
    );
    results.e = { ours: oursRounds, floor: floorRounds, raw: rawRounds };
  }
  await floor?.stop();
  // (b) ------------------------------------------------------------------------------------------------
  if (o.only.has('b')) {
    log(`(b) attach replay: making a finished run of ${o.events} deltas`);
    const run = await createLongRun(apiUrl, token, o.events);
    const key = `${s.redisPrefix}:run:${run.runId}:events`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const oursRates: number[] = [];
    const rawRates: number[] = [];
    let bytes = 0;
    await attachOnce(apiUrl, token, run, agent); // warm-up
    await xrangeOnce(s.redis, key, run.events);
    log(`(b) ${o.replays} timed replays of ${run.events} events per side, alternating`);
    const meter = cpuMeterFor(s)({ API: [api.child.pid!] });
    const oursCpu: Record<string, number> = {};
    const rawCpu: Record<string, number> = {};
    const addCpu = (into: Record<string, number>, cpu: Record<string, number>) => {
      for (const [k, v] of Object.entries(cpu)) into[k] = (into[k] ?? 0) + v / o.replays;
    };
    await profiled([api], 'b-replay', async () => {
      for (let i = 0; i < o.replays; i++) {
        let before = await meter.snapshot();
        const a = await attachOnce(apiUrl, token, run, agent);
        addCpu(oursCpu, await meter.since(before));
        oursRates.push(a.rate);
        bytes = a.bytes;
        before = await meter.snapshot();
        rawRates.push((await xrangeOnce(s.redis, key, run.events)).rate);
        addCpu(rawCpu, await meter.since(before));
      }
    });
    agent.destroy();
    rows.push({
      id: '(b)',
      metric: `attach replay of ${run.events.toLocaleString('en-US')} events (median)`,
      unit: 'ev/s',
      ours: median(oursRates),
      raw: median(rawRates),
      targets: [
        { kind: 'abs', direction: 'higher', value: 100_000 },
        { kind: 'ratio', direction: 'higher', value: 0.5 },
      ],
      digits: 0,
    });
    details.push(
      `(b) ours per replay (ev/s): ${oursRates.map((r) => r.toFixed(0)).join(', ')}; ${(bytes / run.events).toFixed(0)} bytes per SSE frame`,
      `    raw XRANGE per replay (ev/s): ${rawRates.map((r) => r.toFixed(0)).join(', ')}`,
      `    live stream while the worker appended (one Lua append per event): ${run.liveRate.toFixed(0)} ev/s`,
      `    CPU ms per replay, ours: ${cpuText(oursCpu)}`,
      `    CPU ms per replay, raw:  ${cpuText(rawCpu)}`,
    );
    results.b = { run, oursRates, rawRates, bytesPerFrame: bytes / run.events };
  }

  // The worker is not needed from here on; with it gone the runs opened for (d) stay queued, so nothing
  // but the idle connections is running in the API process while it is measured.
  await worker.stop();

  // (c) ------------------------------------------------------------------------------------------------
  if (o.only.has('c')) {
    log(
      `(c) no-op jobs: ${o.rounds} rounds per side of ${o.jobs} jobs, concurrency ${o.concurrency}, ${o.window} adds in flight`,
    );
    const ours: JobRound[] = [];
    const raw: JobRound[] = [];
    const jobOptions = { jobs: o.jobs, concurrency: o.concurrency, window: o.window };
    // One warm-up round each, then alternate, each round on a fresh prefix.
    await jobsOurs(s.redisUrl, `${s.redisPrefix}:c-warm-ours`, { ...jobOptions, jobs: 500 });
    await jobsRaw(s.redisUrl, `${s.redisPrefix}:c-warm-raw`, { ...jobOptions, jobs: 500 });
    for (let r = 0; r < o.rounds; r++) {
      // Alternate which side goes first, so that drift (heap growth, Redis memory) favours neither.
      const runOurs = async () =>
        ours.push(await jobsOurs(s.redisUrl, `${s.redisPrefix}:c${r}-ours`, jobOptions));
      const runRaw = async () =>
        raw.push(await jobsRaw(s.redisUrl, `${s.redisPrefix}:c${r}-raw`, jobOptions));
      if (r % 2 === 0) await runOurs().then(runRaw);
      else await runRaw().then(runOurs);
    }
    const bulk = await enqueueBulkRaw(s.redisUrl, `${s.redisPrefix}:c-bulk`, o.jobs);
    const pick = (list: JobRound[], k: keyof JobRound) => median(list.map((x) => x[k]));
    rows.push(
      {
        id: '(c)',
        metric: `no-op jobs, enqueue + drain (median of ${o.rounds})`,
        unit: 'jobs/s',
        ours: pick(ours, 'overallRate'),
        raw: pick(raw, 'overallRate'),
        targets: [{ kind: 'ratio', direction: 'higher', value: 0.8 }],
        digits: 0,
      },
      {
        id: '(c)',
        metric: `  of which enqueue, ${o.window} in flight`,
        unit: 'jobs/s',
        ours: pick(ours, 'enqueueRate'),
        raw: pick(raw, 'enqueueRate'),
        digits: 0,
      },
      {
        id: '(c)',
        metric: `  of which drain, concurrency ${o.concurrency}`,
        unit: 'jobs/s',
        ours: pick(ours, 'drainRate'),
        raw: pick(raw, 'drainRate'),
        digits: 0,
      },
    );
    const fmtRounds = (list: JobRound[]) =>
      list
        .map((x) => `${x.enqueueRate.toFixed(0)}/${x.drainRate.toFixed(0)}/${x.overallRate.toFixed(0)}`)
        .join(', ');
    details.push(
      `(c) rounds, enqueue/drain/overall jobs/s: ours ${fmtRounds(ours)}; raw ${fmtRounds(raw)}`,
      `    raw Queue.addBulk (chunks of 500), for reference: ${bulk.toFixed(0)} jobs/s (JobProducer has no bulk call)`,
    );
    results.c = { ours, raw, bulkEnqueueRate: bulk };
  }

  // (d) ------------------------------------------------------------------------------------------------
  if (o.only.has('d')) {
    const n = o.connections;
    log(`(d) idle SSE connections: opening ${n} runs that never end, then ${n} attach connections`);
    const sessions = await createOpenSessions(apiUrl, token, n);
    const ours = await measureIdleConnections(
      api,
      (i) => `${apiUrl}/api/v1/stream/attach?session_id=${sessions[i]}&after_seq=0`,
      n,
      token,
    );
    const bare: Record<string, MemoryResult> = {};
    for (const kind of ['http', 'koa'] as const) {
      const server = startService(`bare-${kind}-sse`, 'bench/runs/raw-sse-server.ts', {
        BENCH_SSE_KIND: kind,
      });
      const { port: barePort } = await server.waitFor<{ port: number }>('ready');
      bare[kind] = await measureIdleConnections(server, () => `http://127.0.0.1:${barePort}/sse`, n);
      await server.stop();
    }
    rows.push(
      {
        id: '(d)',
        metric: `heap+external per idle SSE conn (${n}), vs node:http`,
        unit: 'KiB',
        ours: ours.heapPerConnection / KiB,
        raw: bare.http!.heapPerConnection / KiB,
        targets: [{ kind: 'abs', direction: 'lower', value: 32 }],
      },
      {
        id: '(d)',
        metric: `  same, vs bare Koa`,
        unit: 'KiB',
        ours: ours.heapPerConnection / KiB,
        raw: bare.koa!.heapPerConnection / KiB,
      },
      {
        id: '(d)',
        metric: `RSS per idle SSE conn (${n}), vs node:http`,
        unit: 'KiB',
        ours: ours.rssPerConnection / KiB,
        raw: bare.http!.rssPerConnection / KiB,
      },
    );
    const line = (name: string, m: MemoryResult) =>
      `    ${name}: heap+external ${((m.base.heapUsed + m.base.external) / 2 ** 20).toFixed(1)} -> ${((m.loaded.heapUsed + m.loaded.external) / 2 ** 20).toFixed(1)} MiB, rss ${(m.base.rss / 2 ** 20).toFixed(1)} -> ${(m.loaded.rss / 2 ** 20).toFixed(1)} MiB; after closing all: ${(m.heapLeftAfterClose / KiB).toFixed(0)} KiB above the start`;
    details.push(
      `(d) memory after full GCs, before -> with ${n} idle connections:`,
      line('ours (API, attach)', ours),
      line('bare node:http    ', bare.http!),
      line('bare Koa          ', bare.koa!),
    );
    results.d = { ours, bare };
  }

  await api.stop();

  const loadAtEnd = os.loadavg();
  details.push(
    `load average (1, 5, 15 min) at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')} on ${os.cpus().length} CPUs`,
  );
  results.load = { start: loadAtStart, end: loadAtEnd };
  console.log(`\n${renderTable(rows)}\n`);
  console.log(details.join('\n'));
  const failed = rows.filter((r) => passes(r) === false);
  console.log(
    `\n${rows.filter((r) => passes(r) !== undefined).length - failed.length} targets met, ${failed.length} missed.`,
  );
  results.rows = rows.map((r) => ({ ...r, pass: passes(r) }));
  if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));
}

try {
  await main();
} finally {
  await cleanup();
}
// Keep-alive agents and Redis sockets must not hold the process: everything has been closed or stopped.
process.exit(process.exitCode ?? 0);
