import { describe, expect, it } from 'vitest';
import { OpsiApiError } from './errors';
import { TimelineStream } from './timeline-stream';
import type { TimelineEvent } from './types';

// TimelineStream against scripted connections (the real service: test/e2e/cli.e2e.test.ts): where it
// resumes after a drop, that replays are not yielded twice, that a refusal of the first connection
// is thrown and that the signal ends it.

const frame = (id: number, kind = 'note') =>
  `id: ${id}\nevent: ${kind}\ndata: ${JSON.stringify({ id, incident_id: 'i-1', kind, body: `e${id}`, actor: null, created_at: 'now' })}\n\n`;

function sse(frames: string[], fail = true): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const enc = new TextEncoder();
      controller.enqueue(enc.encode(': keepalive\n\n'));
      for (const f of frames) {
        controller.enqueue(enc.encode(f.slice(0, 7)));
        controller.enqueue(enc.encode(f.slice(7)));
      }
      await new Promise((r) => setTimeout(r, 20));
      if (fail) controller.error(new TypeError('terminated: other side closed'));
      else controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('TimelineStream', () => {
  it('reopens with the last id after a drop or a clean close, and skips what it already yielded', async () => {
    const opened: number[] = [];
    const connections = [
      () => sse([frame(3), frame(4)]),
      () => sse([frame(4), frame(5)], false), // the server replays 4: not yielded again
      () => Promise.reject(new TypeError('fetch failed')),
      () => new Response('busy', { status: 503 }),
      () => sse([frame(6)]),
    ];
    const controller = new AbortController();
    const stream = new TimelineStream(
      async (lastId) => {
        opened.push(lastId);
        return connections[opened.length - 1]!();
      },
      { afterId: 2, reconnectDelayMs: 1, signal: controller.signal },
    );
    const seen: TimelineEvent[] = [];
    for await (const e of stream) {
      seen.push(e);
      if (e.id === 6) break;
    }
    expect(seen.map((e) => e.id)).toEqual([3, 4, 5, 6]);
    expect(opened).toEqual([2, 4, 5, 5, 5]);
    expect(stream.reconnects).toBe(4);
  });

  it('throws the first refusal (an unknown incident is OpsiApiError 404)', async () => {
    const stream = new TimelineStream(async () =>
      Response.json({ detail: 'No such incident.' }, { status: 404 }),
    );
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toBeInstanceOf(OpsiApiError);
  });

  it('ends with the signal while waiting for events', async () => {
    const controller = new AbortController();
    const stream = new TimelineStream(
      async (_lastId, signal) =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(new TextEncoder().encode(frame(1)));
              signal.addEventListener('abort', () => c.error(signal.reason));
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
      { signal: controller.signal },
    );
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const e of stream) {
          seen.push(e.id);
          controller.abort(new Error('stop'));
        }
      })(),
    ).rejects.toThrow('stop');
    expect(seen).toEqual([1]);
  });
});
