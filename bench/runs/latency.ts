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

export interface ConcurrentOptions {
  /** Requests measured per stream (after `warmup` each). */
  n: number;
  warmup: number;
  /** Streams in flight at once, each its own connection running its requests back to back. */
  streams: number;
  meter?: CpuMeter;
}

/** Runs `streams` loops side by side; the samples of all of them, in completion order. */
async function concurrently(
  streams: number,
  warmup: number,
  n: number,
  one: (stream: number, i: number) => Promise<{ firstEvent: number; head?: number; total?: number }>,
  meter?: CpuMeter,
) {
  const sample: LatencySample = { firstEvent: [], head: [], total: [] };
  // Every loop finishes its warm-up before any measured request starts, so that the measured window
  // has all streams in flight from its first request to (nearly) its last.
  let warmed = 0;
  let releaseWarm!: () => void;
  const allWarm = new Promise<void>((r) => (releaseWarm = r));
  let before: Awaited<ReturnType<CpuMeter['snapshot']>> | undefined;
  await Promise.all(
    Array.from({ length: streams }, async (_, stream) => {
      for (let i = 0; i < warmup; i++) await one(stream, i);
      if (++warmed === streams) {
        before = await meter?.snapshot();
        releaseWarm();
      }
      await allWarm;
      for (let i = warmup; i < warmup + n; i++) {
        const r = await one(stream, i);
        sample.firstEvent.push(r.firstEvent);
        if (r.head !== undefined) sample.head.push(r.head);
        if (r.total !== undefined) sample.total.push(r.total);
      }
    }),
  );
  if (before) sample.cpu = perRequest(await meter!.since(before), n * streams);
  return sample;
}

/** `streams` clients at once, each sending GET /api/v1/stream back to back over its own connection. */
export async function latencyOursConcurrent(apiUrl: string, token: string, o: ConcurrentOptions) {
  const agents = Array.from({ length: o.streams }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    return await concurrently(
      o.streams,
      o.warmup,
      o.n,
      async (stream, i) => {
        const r = await readSse(`${apiUrl}/api/v1/stream?prompt=${encodeURIComponent(`hi ${stream}.${i}`)}`, {
          token,
          agent: agents[stream]!,
        });
        if (r.status !== 200 || r.events !== 4 || !r.complete || !r.tail.includes('run.completed'))
          throw new Error(
            `stream ${stream}.${i}: status ${r.status}, ${r.events} events, tail ${r.tail.slice(-300)}`,
          );
        return { firstEvent: r.firstEventMs, head: r.headersMs, total: r.endMs };
      },
      o.meter,
    );
  } finally {
    for (const a of agents) a.destroy();
  }
}

/**
 * The raw hop with `streams` loops at once: each its own XREAD BLOCK connection (a blocked read holds
 * its connection), one shared Queue, the same bare worker process at the product's concurrency.
 */
export async function latencyRawConcurrent(
  scratch: Scratch,
  o: ConcurrentOptions & { concurrency: number; meterFor?: (workerPid: number) => CpuMeter },
) {
  const prefix = `${scratch.redisPrefix}:raw-a-conc`;
  const worker = startService('raw-worker', 'bench/runs/raw-worker.ts', {
    BENCH_REDIS_URL: scratch.redisUrl,
    BENCH_BULL_PREFIX: `${prefix}:bull`,
    BENCH_CONCURRENCY: String(o.concurrency),
  });
  const queueConnection = new Redis(scratch.redisUrl, { maxRetriesPerRequest: null });
  const readers = Array.from(
    { length: o.streams },
    () => new Redis(scratch.redisUrl, { maxRetriesPerRequest: null }),
  );
  const untrack = track(() => {
    queueConnection.disconnect();
    for (const r of readers) r.disconnect();
  });
  const queue = new Queue('latency', { connection: queueConnection, prefix: `${prefix}:bull` });
  try {
    await worker.waitFor('ready');
    await queue.waitUntilReady();
    return await concurrently(
      o.streams,
      o.warmup,
      o.n,
      async (stream, i) => {
        const key = `${prefix}:s:${stream}:${i}`;
        const started = performance.now();
        const read = readers[stream]!.xread('BLOCK', 5000, 'STREAMS', key, '0-0');
        await queue.add('turn', { key }, { ...QUEUES.agent.jobs.turn.options, jobId: `j${stream}.${i}` });
        const got = await read;
        const ms = performance.now() - started;
        if (!got?.length) throw new Error(`raw latency ${stream}.${i}: nothing read within 5 s`);
        return { firstEvent: ms };
      },
      o.meterFor?.(worker.child.pid!),
    );
  } finally {
    await queue.close();
    queueConnection.disconnect();
    for (const r of readers) r.disconnect();
    untrack();
    await worker.stop();
  }
}
