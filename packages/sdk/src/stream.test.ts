import { describe, expect, it } from 'vitest';
import { OpsiApiError, OpsiStreamError } from './errors';
import { RunStream, type RunEvent, type StreamTransport } from './stream';

// RunStream against scripted connections: each connection is a list of SSE frames, and then either a
// clean end or an error (a dropped connection). The real service and a cutting proxy are exercised by
// test/e2e/cli.e2e.test.ts; this pins the rules: dedupe, order, re-attach point, bounds.

const RUN = 'run-1';
const frame = (seq: number, kind: string, extra: Record<string, unknown> = {}) =>
  `id: ${seq}\nevent: ${kind}\ndata: ${JSON.stringify({ seq, run_id: RUN, kind, at: 'now', ...extra })}\n\n`;

function sse(frames: string[], opts: { fail?: boolean; runId?: string } = {}): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const enc = new TextEncoder();
      controller.enqueue(enc.encode(': stream open\n\n'));
      // Split a frame across chunks, as TCP may.
      for (const f of frames) {
        const cut = Math.floor(f.length / 2);
        controller.enqueue(enc.encode(f.slice(0, cut)));
        controller.enqueue(enc.encode(f.slice(cut)));
      }
      // An error discards chunks still queued, so the drop comes once the reader has taken them.
      await new Promise((r) => setTimeout(r, 20));
      if (opts.fail) controller.error(new TypeError('terminated: other side closed'));
      else controller.close();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', 'x-session-id': 's-1', 'x-run-id': opts.runId ?? RUN },
  });
}

function transport(connections: Array<() => Response | Promise<Response>>) {
  const attaches: number[] = [];
  let i = 0;
  const t: StreamTransport = {
    open: async () => connections[i++]!(),
    attach: async (sessionId, lastSeq) => {
      expect(sessionId).toBe('s-1');
      attaches.push(lastSeq);
      const next = connections[i++];
      if (!next) throw new TypeError('fetch failed');
      return next();
    },
  };
  return { t, attaches };
}

async function collect(stream: RunStream): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('RunStream', () => {
  it('re-attaches after a drop with the last seq, skips replayed events, and ends at the terminal event', async () => {
    const { t, attaches } = transport([
      () =>
        sse(
          [
            frame(1, 'run.started'),
            frame(2, 'message.delta', { text: 'a' }),
            frame(3, 'message.delta', { text: 'b' }),
          ],
          { fail: true },
        ),
      // The replay overlaps: 3 again, then new events.
      () => sse([frame(3, 'message.delta', { text: 'b' }), frame(4, 'message.delta', { text: 'c' })]),
      () =>
        sse([
          frame(5, 'message.completed', { text: 'abc' }),
          frame(6, 'run.completed', { reply: 'abc' }),
          frame(7, 'message.delta'),
        ]),
    ]);
    const stream = new RunStream(t, { reconnectDelayMs: 1 });
    const events = await collect(stream);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events.at(-1)).toMatchObject({ kind: 'run.completed', reply: 'abc' });
    expect(attaches).toEqual([3, 4]);
    expect(stream).toMatchObject({ sessionId: 's-1', runId: RUN, lastSeq: 6, reconnects: 2 });
  });

  it('retries a re-attachment that fails or answers 5xx, and gives up after maxReconnects', async () => {
    const down = () =>
      new Response('{"detail":"down"}', { status: 503, headers: { 'content-type': 'application/json' } });
    const { t, attaches } = transport([
      () => sse([frame(1, 'run.started')], { fail: true }),
      down,
      down,
      down,
    ]);
    const stream = new RunStream(t, { reconnectDelayMs: 1, maxReconnects: 3 });
    const seen: RunEvent[] = [];
    const error = await (async () => {
      for await (const e of stream) seen.push(e);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsiStreamError);
    expect((error as OpsiStreamError).lastSeq).toBe(1);
    expect(seen.map((e) => e.seq)).toEqual([1]);
    expect(attaches).toEqual([1, 1, 1]);
  });

  it('throws the refusal of the first request (nothing started) without retrying', async () => {
    const { t, attaches } = transport([
      () =>
        new Response('{"detail":"Daily agent budget exhausted."}', {
          status: 429,
          headers: { 'content-type': 'application/json' },
        }),
    ]);
    const error = await collect(new RunStream(t, { reconnectDelayMs: 1 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsiApiError);
    expect(error).toMatchObject({ status: 429, detail: 'Daily agent budget exhausted.' });
    expect(attaches).toEqual([]);
  });

  it('refuses to continue on another run of the session', async () => {
    const { t } = transport([
      () => sse([frame(1, 'run.started')], { fail: true }),
      () => sse([frame(2, 'message.delta')], { runId: 'run-2' }),
    ]);
    const error = await collect(new RunStream(t, { reconnectDelayMs: 1 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsiStreamError);
    expect(String(error)).toContain('newer run');
  });

  it('takes a silent connection as dead after the idle bound and re-attaches', async () => {
    const silent = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(frame(1, 'run.started')));
            // …and then nothing, never closing: a half-open connection.
          },
        }),
        { headers: { 'content-type': 'text/event-stream', 'x-session-id': 's-1', 'x-run-id': RUN } },
      );
    const { t, attaches } = transport([silent, () => sse([frame(2, 'run.completed', { reply: '' })])]);
    const events = await collect(new RunStream(t, { reconnectDelayMs: 1, idleTimeoutMs: 200 }));
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(attaches).toEqual([1]);
  });
});
