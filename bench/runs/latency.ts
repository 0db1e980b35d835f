// (a) enqueue -> first SSE event, ours over HTTP vs raw BullMQ + XADD + XREAD BLOCK.
import http from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUES } from '@opsi/jobs';
import { readSse } from './lib/sse-client';
import type { CpuMeter } from './lib/cpu';
import { startService, track, type Scratch } from './lib/env';
import { sleep } from './lib/stats';

export interface LatencySample {
  /** Request sent -> first `event:` frame received (ms). */
  firstEvent: number[];
  /** Request sent -> response head (ms): authentication, budget, run row and enqueue (ours only). */
  head: number[];
  /** Request sent -> stream closed after run.completed (ms) (ours only). */
  total: number[];
  /** CPU ms per measured request, by process group (when a meter was given). */
  cpu?: Record<string, number>;
}

export interface LatencyOptions {
  n: number;
  warmup: number;
  /** Pause between requests (default none: back to back). */
  gapMs?: number;
  meter?: CpuMeter;
}

/** Sequential GET /api/v1/stream with an echo prompt, over one keep-alive connection. */
export async function latencyOurs(apiUrl: string, token: string, o: LatencyOptions) {
  const { n, warmup } = o;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const sample: LatencySample = { firstEvent: [], head: [], total: [] };
  let before;
  try {
    for (let i = 0; i < warmup + n; i++) {
      if (i === warmup) before = await o.meter?.snapshot();
      if (o.gapMs && i > 0) await sleep(o.gapMs);
      const r = await readSse(`${apiUrl}/api/v1/stream?prompt=${encodeURIComponent(`hi ${i}`)}`, {
        token,
        agent,
      });
      // run.started, message.delta, message.completed, run.completed; then the server ends the stream.
      if (r.status !== 200 || r.events !== 4 || !r.complete || !r.tail.includes('run.completed'))
        throw new Error(`stream ${i}: status ${r.status}, ${r.events} events, tail ${r.tail.slice(-300)}`);
      if (i < warmup) continue;
      sample.firstEvent.push(r.firstEventMs);
      sample.head.push(r.headersMs);
      sample.total.push(r.endMs);
    }
    if (before) sample.cpu = perRequest(await o.meter!.since(before), n);
  } finally {
    agent.destroy();
  }
  return sample;
}

function perRequest(cpu: Record<string, number>, n: number) {
  return Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v / n]));
}

/** GET /healthz over a keep-alive connection: the HTTP + Koa floor of this API process. */
export async function healthzLatency(apiUrl: string, n: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  try {
    for (let i = 0; i < n + 20; i++) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) =>
        http
          .get(`${apiUrl}/healthz`, { agent }, (res) => {
            res.resume();
            res.once('end', resolve);
          })
          .once('error', reject),
      );
      if (i >= 20) samples.push(performance.now() - started);
    }
  } finally {
    agent.destroy();
  }
  return samples;
}

/**
 * The same path on the bare libraries: Queue.add (job options as agent.turn) -> a BullMQ Worker in its own
 * process XADDs one entry -> an XREAD BLOCK here receives it. Same machine, same Redis, same concurrency.
 */
export async function latencyRaw(
  scratch: Scratch,
  o: LatencyOptions & { concurrency: number; meterFor?: (workerPid: number) => CpuMeter },
) {
  const { n, warmup, concurrency } = o;
  const prefix = `${scratch.redisPrefix}:raw-a`;
  const worker = startService('raw-worker', 'bench/runs/raw-worker.ts', {
    BENCH_REDIS_URL: scratch.redisUrl,
    BENCH_BULL_PREFIX: `${prefix}:bull`,
    BENCH_CONCURRENCY: String(concurrency),
  });
  const queueConnection = new Redis(scratch.redisUrl, { maxRetriesPerRequest: null });
  const reader = new Redis(scratch.redisUrl, { maxRetriesPerRequest: null });
  const untrack = track(() => {
    queueConnection.disconnect();
    reader.disconnect();
  });
  const queue = new Queue('latency', { connection: queueConnection, prefix: `${prefix}:bull` });
  const sample: LatencySample = { firstEvent: [], head: [], total: [] };
  try {
    await worker.waitFor('ready');
    await queue.waitUntilReady();
    const meter = o.meterFor?.(worker.child.pid!);
    let before;
    for (let i = 0; i < warmup + n; i++) {
      if (i === warmup) before = await meter?.snapshot();
      const key = `${prefix}:s:${i}`;
      const started = performance.now();
      const read = reader.xread('BLOCK', 5000, 'STREAMS', key, '0-0');
      await queue.add('turn', { key }, { ...QUEUES.agent.jobs.turn.options, jobId: `j${i}` });
      const got = await read;
      const ms = performance.now() - started;
      if (!got?.length) throw new Error(`raw latency ${i}: nothing read within 5 s`);
      if (i >= warmup) sample.firstEvent.push(ms);
    }
    if (before) sample.cpu = perRequest(await meter!.since(before), n);
  } finally {
    await queue.close();
    queueConnection.disconnect();
    reader.disconnect();
    untrack();
    await worker.stop();
  }
  return sample;
}
