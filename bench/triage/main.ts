// The triage benchmark: alerts through POST /api/v1/triage/alerts to a decided action (the API and a
// worker as their own processes, the triage queue between them), side by side with bare BullMQ
// (Queue.add + Worker + QueueEvents, waiting for each job's completion) carrying the same payloads, in
// one run, on a scratch database and a Redis prefix of its own. `npm run bench:triage`; results in
// docs/performance.md. Options: --alerts=3000 --concurrency=50 --fingerprints=20 --storm=10000
//   --storm-batch=100 --warmup=200 --pool=10 (DATABASE_POOL_MAX of the API and the worker) --json=path
//   --cpu-prof=dir (V8 CPU profiles of the API and the worker)
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { sql } from '@opsi/db';
import { bullPrefix } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { createTenantWithUser, freePort, mintTestToken } from '@opsi/test-support';
import {
  createScratch,
  liveServices,
  startService,
  stopInProcess,
  track,
  waitReady,
  type Scratch,
} from '../runs/lib/env';
import { percentile, pool, renderTable, type Row } from '../runs/lib/stats';

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return fallback;
  const n = Number(arg.slice(arg.indexOf('=') + 1));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number`);
  return n;
}
const o = {
  alerts: option('alerts', 3000),
  warmup: option('warmup', 200),
  concurrency: option('concurrency', 50),
  fingerprints: option('fingerprints', 20),
  storm: option('storm', 10_000),
  stormBatch: option('storm-batch', 100),
  pool: option('pool', 10),
};
const jsonPath = process.argv.find((a) => a.startsWith('--json='))?.slice('--json='.length);
/** --cpu-prof=dir: the API and the worker write V8 CPU profiles there when they exit. */
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
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
    const res = await fetch(`${url}/api/v1/triage/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(alert(i, o.fingerprints, tag)),
    });
    const body = (await res.json()) as { pending: boolean; events: Array<{ action: string }> };
    if (res.status !== 202 || body.pending || !body.events[0]?.action)
      throw new Error(`no decision: ${res.status} ${JSON.stringify(body)}`);
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
      concurrency: o.concurrency,
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
  scratch = await createScratch();
  const s = scratch;
  log(`scratch database ${new URL(s.databaseUrl).pathname.slice(1)}, Redis prefix ${s.redisPrefix}`);
  const member = await createTenantWithUser(s);
  const { token } = await mintTestToken(s, member, 'read_write');
  const stormMember = await createTenantWithUser(s);
  const stormToken = (await mintTestToken(s, stormMember, 'read_write')).token;
  const port = await freePort();
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: s.redisUrl,
    REDIS_PREFIX: s.redisPrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    DEMO_SEED: 'false',
    WORKER_QUEUES: 'triage',
    WORKER_CONCURRENCY_TRIAGE: String(o.concurrency),
    WORKER_METRICS_PORT: '0',
    WORKER_SHUTDOWN_GRACE_MS: '2000',
    TRIAGE_WAIT_MS: '30000',
    DATABASE_POOL_MAX: String(o.pool),
    SECRETS_KEY: 'bench-only-secrets-key-0123456789abcdef', // required in production since notifiers
  };
  const nodeArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  const api = startService('api', 'apps/api/src/main.ts', env, nodeArgs);
  const worker = startService('worker', 'apps/worker/src/main.ts', env, nodeArgs);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, api);
  await worker.waitForOutput('worker ready');

  log(`warm-up: ${o.warmup} alerts per side`);
  await ours(url, token, o.warmup, 'warm');
  await raw(s.redisUrl, s.redisPrefix, o.warmup, 'warm');

  log(`(a) ${o.alerts} alerts of ${o.fingerprints} fingerprints, ${o.concurrency} in flight, per side`);
  const a1 = await ours(url, token, o.alerts, 'a');
  const r1 = await raw(s.redisUrl, s.redisPrefix, o.alerts, 'a');
  log(`    ours ${a1.rate.toFixed(0)}/s, raw ${r1.rate.toFixed(0)}/s`);

  log(`(b) storm: ${o.storm} alerts of ${o.fingerprints} fingerprints in batches of ${o.stormBatch}`);
  const t0 = performance.now();
  const batches = Math.ceil(o.storm / o.stormBatch);
  await pool(batches, Math.min(o.concurrency, 10), async (b) => {
    const size = Math.min(o.stormBatch, o.storm - b * o.stormBatch);
    const body = Array.from({ length: size }, (_, j) => alert(b * o.stormBatch + j, o.fingerprints, 'storm'));
    const res = await fetch(`${url}/api/v1/triage/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stormToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 202) throw new Error(`storm batch refused: ${res.status} ${await res.text()}`);
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
      metric: 'alerts/s, POST → decided action (ours) vs Queue.add → completed (raw)',
      unit: '/s',
      ours: a1.rate,
      raw: r1.rate,
      targets: [{ kind: 'ratio', direction: 'higher', value: 0.5 }],
    },
    {
      id: '(a)',
      metric: 'p99 accept → action',
      unit: 'ms',
      ours: percentile(a1.latencies, 99),
      raw: percentile(r1.latencies, 99),
      targets: [{ kind: 'abs', direction: 'lower', value: 250 }],
    },
    {
      id: '(a)',
      metric: 'p50 accept → action',
      unit: 'ms',
      ours: percentile(a1.latencies, 50),
      raw: percentile(r1.latencies, 50),
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
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify({ options: o, rows }, null, 2));
  await api.stop(5000);
  await worker.stop(5000);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
