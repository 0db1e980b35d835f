// (b) attach replay of a finished 10,000-event run, ours over HTTP vs raw XRANGE pages.
import type http from 'node:http';
import type { Redis } from 'ioredis';
import { readSse } from './lib/sse-client';

export interface ReplayRun {
  sessionId: string;
  runId: string;
  events: number;
  /** Events/s of the live stream while the worker appended them (one Lua append per event). */
  liveRate: number;
}

/** A finished run with `deltas` message.delta events, made by the scripted engine through the API. */
export async function createLongRun(apiUrl: string, token: string, deltas: number): Promise<ReplayRun> {
  const prompt = `script:${JSON.stringify([{ deltas }])}`;
  const r = await readSse(`${apiUrl}/api/v1/stream?prompt=${encodeURIComponent(prompt)}`, {
    token,
    timeoutMs: 300_000,
  });
  const expected = deltas + 3; // run.started, the deltas, message.completed, run.completed
  if (r.status !== 200 || r.events !== expected || !r.complete)
    throw new Error(`long run: status ${r.status}, ${r.events} of ${expected} events`);
  return {
    sessionId: String(r.headers['x-session-id']),
    runId: String(r.headers['x-run-id']),
    events: r.events,
    liveRate: r.events / ((r.endMs - r.firstEventMs) / 1000),
  };
}

/** GET /api/v1/stream/attach?after_seq=0 read to its end: events/s, request sent to stream closed. */
export async function attachOnce(apiUrl: string, token: string, run: ReplayRun, agent: http.Agent) {
  const r = await readSse(`${apiUrl}/api/v1/stream/attach?session_id=${run.sessionId}&after_seq=0`, {
    token,
    agent,
  });
  if (r.status !== 200 || r.events !== run.events || !r.complete)
    throw new Error(`attach: status ${r.status}, ${r.events} of ${run.events} events`);
  return { rate: r.events / (r.endMs / 1000), ms: r.endMs, bytes: r.bytes };
}

/** XRANGE of the run's stream in pages of 1000 (the hub's replay batch), strings decoded by ioredis. */
export async function xrangeOnce(redis: Redis, key: string, expected: number, page = 1000) {
  const started = performance.now();
  let cursor = '-';
  let n = 0;
  for (;;) {
    const entries = await redis.xrange(key, cursor, '+', 'COUNT', page);
    n += entries.length;
    if (entries.length < page) break;
    cursor = `(${entries[entries.length - 1]![0]}`;
  }
  const ms = performance.now() - started;
  if (n !== expected) throw new Error(`xrange: ${n} of ${expected} entries`);
  return { rate: n / (ms / 1000), ms };
}
