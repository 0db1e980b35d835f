// The triage benchmark: alerts through POST /api/v1/triage/alerts to a decided action (the API and a
// worker as their own processes, the triage queue between them), side by side with bare BullMQ
// (Queue.add + Worker + QueueEvents, waiting for each job's completion) carrying the same payloads, in
// one run, on a scratch database and a Redis prefix of its own. `npm run bench:triage`; results in
// docs/performance.md. The floor (bench/floor/triage.ts, the contract's path at its minimum) runs beside
// ours in rounds that alternate which side goes first; the raw BullMQ hop is information only.
// Options: --rounds=4 --alerts=8000 --concurrency=50 --fingerprints=20 --storm=10000
//   --storm-batch=100 --warmup=1000 (enough for both sides' code to be optimized before they are
//   measured) --pool=10 (DATABASE_POOL_MAX of the API and the worker) --json=path
//   --worker-concurrency=N (both workers' concurrency, ours and raw; default --concurrency)
//   --cpu-prof=dir (V8 CPU profiles of the API and the worker, whole life)
//   --profile=dir (V8 CPU profiles of the API and the worker during (a) ours only, summarized)
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { sql } from '@opsi/db';
import { bullPrefix } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { createScratch, liveServices, stopInProcess, track, type Scratch } from '../runs/lib/env';
import { cpuMeterFor, cpuText } from '../runs/lib/cpu';
import { serverCounts } from '../runs/lib/counts';
import { closeClient, send, startTriageServices } from './lib';
import { startTriageFloor } from '../floor/start';
import { renderProfile, summarizeProfile } from '../runs/lib/profile';
import { median, percentile, pool, renderTable, type Row } from '../runs/lib/stats';

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return fallback;
  const n = Number(arg.slice(arg.indexOf('=') + 1));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number`);
  return n;
}
const o = {
  alerts: option('alerts', 8000),
  warmup: option('warmup', 1000),
  concurrency: option('concurrency', 50),
  fingerprints: option('fingerprints', 20),
  /** Rounds per side, ours and the floor alternating which goes first; --alerts is split over them. */
  rounds: option('rounds', 4),
  storm: option('storm', 10_000),
  stormBatch: option('storm-batch', 100),
  pool: option('pool', 10),
  /** WORKER_CONCURRENCY_TRIAGE of our worker and the raw Worker's concurrency: always the same. */
  workerConcurrency: option('worker-concurrency', 0),
};
const jsonPath = process.argv.find((a) => a.startsWith('--json='))?.slice('--json='.length);
/** --cpu-prof=dir: the API and the worker write V8 CPU profiles there when they exit. */
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
/** --profile=dir: the API and the worker are profiled during (a) (ours) only, and summaries printed. */
const profileDir = process.argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

function alert(i: number, fingerprints: number, tag: string) {
  const k = i % fingerprints;
  return {
    title: `${tag} alert ${k}`,
    severity: k % 4 === 0 ? 'high' : 'medium',
    source: 'bench',
    fingerprint: `${tag}-fp-${k}`,
    labels: { n: String(k) },
  };
}

let scratch: Scratch | undefined;
async function cleanup() {
  stopInProcess();
  await Promise.allSettled(liveServices().map((s) => s.stop(5000)));
  await scratch?.close();
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

/** Ours: one alert per request, `concurrency` requests in flight; each answer carries the decided action. */
async function ours(url: string, token: string, n: number, tag: string) {
  const latencies: number[] = [];
  const started = performance.now();
  await pool(n, o.concurrency, async (i) => {
    const t0 = performance.now();
    const res = await send(`${url}/api/v1/triage/alerts`, 'POST', {
      token,
      body: alert(i, o.fingerprints, tag),
    });
    const body = JSON.parse(res.text) as { pending: boolean; events: Array<{ action: string }> };
    if (res.status !== 202 || body.pending || !body.events[0]?.action)
      throw new Error(`no decision: ${res.status} ${res.text}`);
    latencies.push(performance.now() - t0);
  });
  return { rate: n / ((performance.now() - started) / 1000), latencies };
}

/** Raw: Queue.add of the same payload and a Worker that completes it, waiting for completion per job. */
async function raw(redisUrl: string, prefix: string, n: number, tag: string) {
  const connection = createRedis(redisUrl, 'worker');
  const eventsConnection = createRedis(redisUrl, 'worker');
  const producerConnection = createRedis(redisUrl, 'producer');
  const untrack = track(() => {
    connection.disconnect();
    eventsConnection.disconnect();
    producerConnection.disconnect();
  });
  const name = `raw-${tag}`;
  const queue = new Queue(name, { connection: producerConnection, prefix: bullPrefix(prefix) });
  const events = new QueueEvents(name, { connection: eventsConnection, prefix: bullPrefix(prefix) });
  const worker = new Worker(
    name,
    async (job) => ({ action: 'new', fingerprint: (job.data as { fingerprint: string }).fingerprint }),
    {
      connection,
      prefix: bullPrefix(prefix),
      concurrency: o.workerConcurrency || o.concurrency,
    },
  );
  await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
  const latencies: number[] = [];
  const started = performance.now();
  await pool(n, o.concurrency, async (i) => {
    const t0 = performance.now();
    const job = await queue.add('alerts', alert(i, o.fingerprints, tag), {
      jobId: randomUUID(),
      removeOnComplete: { age: 3600, count: 1000 },
    });
    await job.waitUntilFinished(events, 30_000);
    latencies.push(performance.now() - t0);
  });
  const rate = n / ((performance.now() - started) / 1000);
  await worker.close();
  await events.close();
  await queue.close();
  untrack();
  connection.disconnect();
  eventsConnection.disconnect();
  producerConnection.disconnect();
  return { rate, latencies };
}

async function main() {
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${load()}`);
  scratch = await createScratch();
  const s = scratch;
  log(`scratch database ${new URL(s.databaseUrl).pathname.slice(1)}, Redis prefix ${s.redisPrefix}`);
  const member = await createTenantWithUser(s);
  const { token } = await mintTestToken(s, member, 'read_write');
  const stormMember = await createTenantWithUser(s);
  const stormToken = (await mintTestToken(s, stormMember, 'read_write')).token;
  const nodeArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  const { api, worker, url } = await startTriageServices(s, {
    workerConcurrency: o.workerConcurrency || o.concurrency,
    pool: o.pool,
    nodeArgs,
  });

  const floor = await startTriageFloor(s, {
    concurrency: o.workerConcurrency || o.concurrency,
    pool: o.pool,
    nodeArgs,
  });
  const floorGc = await startTriageFloor(s, {
    concurrency: o.workerConcurrency || o.concurrency,
    pool: o.pool,
    coalesce: true,
    nodeArgs,
  });
  log(`floor (bench/floor/triage.ts) at ${floor.url}; the same with group commit at ${floorGc.url}`);

  log(`warm-up: ${o.warmup} alerts per side (ours, floor, floor with group commit, raw)`);
  await ours(url, token, o.warmup, 'warm');
  await ours(floor.url, token, o.warmup, 'fwarm');
  await ours(floorGc.url, token, o.warmup, 'gwarm');
  await raw(s.redisUrl, s.redisPrefix, o.warmup, 'warm');

  const per = Math.ceil(o.alerts / o.rounds);
  log(
    `(a) ${o.rounds} rounds per side (ours, floor, floor with group commit; each round starts with the next side) of ${per} alerts of ${o.fingerprints} fingerprints, ` +
      `${o.concurrency} in flight; worker concurrency ${o.workerConcurrency || o.concurrency} on every side; the raw hop once`,
  );
  // CPU per alert in every process on the path (the client is this process; raw runs here alone).
  const meterFor = cpuMeterFor(s);
  const oursMeter = meterFor({ API: [api.child.pid!], worker: [worker.child.pid!] });
  const floorMeter = meterFor({ API: [floor.api.child.pid!], worker: [floor.worker.child.pid!] });
  const floorGcMeter = meterFor({ API: [floorGc.api.child.pid!], worker: [floorGc.worker.child.pid!] });
  const perAlert = (cpu: Record<string, number>, n: number) =>
    Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v / n]));
  type Round = Awaited<ReturnType<typeof ours>> & { cpu: Record<string, number> };
  const measured = async (
    side: 'ours' | 'floor' | 'floorGc',
    meter: typeof oursMeter,
    fn: () => Promise<Awaited<ReturnType<typeof ours>>>,
    profile: boolean,
  ): Promise<Round> => {
    const services = {
      ours: [api, worker],
      floor: [floor.api, floor.worker],
      floorGc: [floorGc.api, floorGc.worker],
    }[side];
    if (profile) await Promise.all(services.map((p) => p.request({ type: 'profile-start' })));
    const before = await meter.snapshot();
    const r = await fn();
    const cpu = perAlert(await meter.since(before), per);
    if (profile) {
      for (const p of services) {
        const path = join(profileDir!, `triage-a-${p.name}.cpuprofile`);
        await p.request({ type: 'profile-stop', path });
        console.log(renderProfile(`profile (a) / ${p.name} (${path})`, summarizeProfile(path, 25)));
      }
    }
    return { ...r, cpu };
  };
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const oursRounds: Round[] = [];
  const floorRounds: Round[] = [];
  const floorGcRounds: Round[] = [];
  let countsOurs = { statements: 0, commands: 0 };
  let r1: Awaited<ReturnType<typeof raw>> | undefined;
  let cpuRaw: Record<string, number> = {};
  for (let r = 0; r < o.rounds; r++) {
    const runOurs = async () => {
      const countsBefore = await serverCounts(s);
      oursRounds.push(
        await measured('ours', oursMeter, () => ours(url, token, per, 'a'), !!profileDir && r === 0),
      );
      const c = await serverCounts(s, countsBefore);
      countsOurs = {
        statements: countsOurs.statements + c.statements,
        commands: countsOurs.commands + c.commands,
      };
    };
    const runFloor = async () => {
      floorRounds.push(
        await measured('floor', floorMeter, () => ours(floor.url, token, per, 'f'), !!profileDir && r === 0),
      );
    };
    const runFloorGc = async () => {
      floorGcRounds.push(
        await measured(
          'floorGc',
          floorGcMeter,
          () => ours(floorGc.url, token, per, 'g'),
          !!profileDir && r === 0,
        ),
      );
    };
    // Each round starts with the next side: ours, floor, floor with group commit; then floor first, ...
    const order = [runOurs, runFloor, runFloorGc];
    for (let k = 0; k < order.length; k++) await order[(r + k) % order.length]!();
    log(
      `    round ${r + 1}: ours ${oursRounds[r]!.rate.toFixed(0)}/s, floor ${floorRounds[r]!.rate.toFixed(0)}/s, ` +
        `floor with group commit ${floorGcRounds[r]!.rate.toFixed(0)}/s`,
    );
    if (r === 0) {
      const before = await meterFor({}).snapshot();
      r1 = await raw(s.redisUrl, s.redisPrefix, per, 'a');
      cpuRaw = perAlert(await meterFor({}).since(before), per);
    }
  }
  const rates = (list: Round[]) => list.map((x) => x.rate);
  const pooledLatencies = (list: Round[]) => list.flatMap((x) => x.latencies);
  const medianCpu = (list: Round[]) =>
    Object.fromEntries(Object.keys(list[0]!.cpu).map((k) => [k, median(list.map((x) => x.cpu[k] ?? 0))]));
  const cpuSum = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);
  const total = per * o.rounds;
  const batchesA = await s.db
    .selectFrom('triage_inbox')
    .select(sql<number>`count(distinct batch_id)::int`.as('n'))
    .where('tenant_id', '=', member.tenant.id)
    .where(sql<boolean>`alert->>'title' like 'a alert %'`)
    .executeTakeFirstOrThrow();
  log(`    ours: ${batchesA.n} batches (group commit), ${(total / batchesA.n).toFixed(1)} alerts each`);
  log(`    CPU ms per alert, ours (median of rounds):  ${cpuText(medianCpu(oursRounds))}`);
  log(`    CPU ms per alert, floor (median of rounds): ${cpuText(medianCpu(floorRounds))}`);
  log(
    `    CPU ms per alert, floor with group commit (median of rounds): ${cpuText(medianCpu(floorGcRounds))}`,
  );
  log(
    `    per alert, ours: ${(countsOurs.statements / total).toFixed(2)} Postgres transactions, ` +
      `${(countsOurs.commands / total).toFixed(2)} Redis commands`,
  );
  log(`    CPU ms per alert, raw BullMQ (information):  ${cpuText(cpuRaw)}`);
  await floor.stop();
  await floorGc.stop();
  log(`(b) storm: ${o.storm} alerts of ${o.fingerprints} fingerprints in batches of ${o.stormBatch}`);
  const t0 = performance.now();
  const batches = Math.ceil(o.storm / o.stormBatch);
  await pool(batches, Math.min(o.concurrency, 10), async (b) => {
    const size = Math.min(o.stormBatch, o.storm - b * o.stormBatch);
    const body = Array.from({ length: size }, (_, j) => alert(b * o.stormBatch + j, o.fingerprints, 'storm'));
    const res = await send(`${url}/api/v1/triage/alerts`, 'POST', { token: stormToken, body });
    if (res.status !== 202) throw new Error(`storm batch refused: ${res.status} ${res.text}`);
  });
  // Every alert decided (a batch past TRIAGE_WAIT_MS would still be deciding).
  for (;;) {
    const left = await s.db
      .selectFrom('triage_inbox')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('tenant_id', '=', stormMember.tenant.id)
      .where('processed_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (left.n === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const stormSeconds = (performance.now() - t0) / 1000;
  const stormEvents = await s.db
    .selectFrom('triage_events')
    .select(['fingerprint', 'count'])
    .where('tenant_id', '=', stormMember.tenant.id)
    .execute();
  const counted = stormEvents.reduce((n, e) => n + e.count, 0);
  log(`    ${stormEvents.length} events, ${counted} alerts counted, in ${stormSeconds.toFixed(1)} s`);

  const rows: Row[] = [
    {
      id: '(a)',
      metric: `alerts/s, POST → decided action, vs floor (median of ${o.rounds} rounds)`,
      unit: '/s',
      ours: median(rates(oursRounds)),
      raw: median(rates(floorRounds)),
      targets: [{ kind: 'ratio', direction: 'higher', value: 0.7 }],
    },
    {
      id: '(a)',
      metric: 'p99 accept → action, pooled, vs floor',
      unit: 'ms',
      ours: percentile(pooledLatencies(oursRounds), 99),
      raw: percentile(pooledLatencies(floorRounds), 99),
      targets: [{ kind: 'abs', direction: 'lower', value: 250 }],
    },
    {
      id: '(a)',
      metric: 'p50 accept → action, pooled, vs floor',
      unit: 'ms',
      ours: percentile(pooledLatencies(oursRounds), 50),
      raw: percentile(pooledLatencies(floorRounds), 50),
    },
    {
      id: '(a)',
      metric: 'CPU per alert, all processes, vs floor (median)',
      unit: 'ms',
      ours: cpuSum(medianCpu(oursRounds)),
      raw: cpuSum(medianCpu(floorRounds)),
      digits: 3,
    },
    {
      id: '(a)',
      metric: `alerts/s vs the floor with group commit (median of ${o.rounds})`,
      unit: '/s',
      ours: median(rates(oursRounds)),
      raw: median(rates(floorGcRounds)),
      targets: [{ kind: 'ratio', direction: 'higher', value: 0.7 }],
    },
    {
      id: '(a)',
      metric: 'p99 accept → action, pooled, vs the floor with group commit',
      unit: 'ms',
      ours: percentile(pooledLatencies(oursRounds), 99),
      raw: percentile(pooledLatencies(floorGcRounds), 99),
    },
    {
      id: '(a)',
      metric: 'CPU per alert vs the floor with group commit (median)',
      unit: 'ms',
      ours: cpuSum(medianCpu(oursRounds)),
      raw: cpuSum(medianCpu(floorGcRounds)),
      digits: 3,
    },
    {
      id: '(a)',
      metric: 'alerts/s vs raw BullMQ Queue.add → completed (information)',
      unit: '/s',
      ours: median(rates(oursRounds)),
      raw: r1!.rate,
    },
    {
      id: '(b)',
      metric: `storm: events for ${o.fingerprints} fingerprints`,
      unit: '',
      ours: stormEvents.length,
      raw: undefined,
      targets: [
        { kind: 'abs', direction: 'lower', value: o.fingerprints },
        { kind: 'abs', direction: 'higher', value: o.fingerprints },
      ],
      digits: 0,
    },
    {
      id: '(b)',
      metric: `storm: alerts counted of ${o.storm} sent`,
      unit: '',
      ours: counted,
      raw: undefined,
      targets: [
        { kind: 'abs', direction: 'lower', value: o.storm },
        { kind: 'abs', direction: 'higher', value: o.storm },
      ],
      digits: 0,
    },
    {
      id: '(b)',
      metric: 'storm: alerts/s decided',
      unit: '/s',
      ours: o.storm / stormSeconds,
      raw: undefined,
    },
  ];
  console.log(renderTable(rows));
  log(`load average at the end ${load()}`);
  if (jsonPath)
    writeFileSync(
      jsonPath,
      JSON.stringify(
        { options: o, rows, ours: oursRounds, floor: floorRounds, floorGc: floorGcRounds },
        null,
        2,
      ),
    );
  closeClient();
  await api.stop(5000);
  await worker.stop(5000);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
