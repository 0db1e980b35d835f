import type { Context } from 'koa';
import type { RunEvent } from '@opsi/contracts';
import { timelineEntryOf, type RunStreamHub } from '@opsi/jobs';

export interface SseOptions {
  keepaliveMs: number;
  maxBufferedBytes: number;
  headers?: Record<string, string>;
  /**
   * The run's terminal event as Postgres keeps it, asked when the run's stream vanished from Redis (a
   * restart without persistence) so that a stream whose run ended meanwhile still ends with it.
   */
  lost?: () => Promise<RunEvent | undefined>;
  /** The run was started by this request: its stream joins the live read at once (see the hub's `fresh`). */
  fresh?: boolean;
}

/**
 * Streams a run's events as Server-Sent Events: `id:` is the seq, `event:` the kind, `data:` the JSON
 * event. Comment lines keep an idle connection alive. Back-pressure: while the socket refuses more, frames
 * wait in a bounded buffer; a client that falls further behind is dropped, and re-attaches with
 * after_seq (the run's log in Redis is the real buffer). Resolves when the response has closed.
 *
 * The response head is written with the first frame, after the first read of the run's log: a Redis
 * that fails before it is an error answer (503), not an event stream that never says anything. One that
 * fails later ends the stream; the client re-attaches from its last id. A fresh stream (the run this
 * request has just started and enqueued: Redis answered a moment ago) skips that read and opens once it
 * has joined the live read; an outage after that is the live read's to wait out.
 */
export async function streamRun(
  ctx: Context,
  hub: RunStreamHub,
  runId: string,
  afterSeq: number,
  o: SseOptions,
) {
  const res = ctx.res;
  let open = false;
  let keepalive: NodeJS.Timeout | undefined;
  const pending: string[] = [];
  let pendingBytes = 0;
  let waiting = false;
  let ended = false;
  const ensureOpen = () => {
    if (open) return;
    open = true;
    openEventStream(ctx, o.headers);
    keepalive = setInterval(() => write(': keepalive\n\n'), o.keepaliveMs);
    write(': stream open\n\n');
  };
  const write = (frame: string) => {
    ensureOpen();
    if (res.destroyed || res.writableEnded) return;
    if (waiting) {
      pending.push(frame);
      pendingBytes += Buffer.byteLength(frame);
      if (pendingBytes > o.maxBufferedBytes) res.destroy(); // too slow: it re-attaches from its last id
      return;
    }
    if (!res.write(frame)) waiting = true;
  };
  res.on('drain', () => {
    waiting = false;
    while (pending.length && !waiting) {
      const frame = pending.shift()!;
      pendingBytes -= Buffer.byteLength(frame);
      if (!res.write(frame)) waiting = true;
    }
    if (!waiting && ended && !res.writableEnded) res.end();
  });
  const finish = () => {
    ended = true;
    ensureOpen();
    if (!waiting && !res.writableEnded) res.end();
  };

  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  let subscription: { close(): void };
  try {
    subscription = await hub.subscribe(runId, afterSeq, {
      onEvents(events: RunEvent[]) {
        write(events.map(sseFrame).join(''));
        // While replaying, the hub waits for the socket to drain before reading the next batch.
        if (waiting && !res.destroyed) return drained(res);
      },
      onEnd: finish,
      ...(o.lost ? { onLost: o.lost } : {}),
      ...(o.fresh ? { fresh: true } : {}),
    });
  } catch (err) {
    if (!open) throw err; // nothing sent yet: the error middleware answers (503 for an outage)
    (ctx.state.log ?? console).warn({ err, run_id: runId }, 'run stream failed; ending it');
    clearInterval(keepalive);
    if (!res.writableEnded) res.end();
    return;
  }
  ensureOpen();
  await closed;
  clearInterval(keepalive);
  subscription.close();
}

/** Takes over the response and writes the event-stream head, keeping headers set so far (x-request-id). */
export function openEventStream(ctx: Context, extra: Record<string, string> = {}) {
  ctx.respond = false;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  ctx.res.writeHead(200, {
    ...headers,
    ...extra,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  ctx.res.socket?.setNoDelay(true);
  return ctx.res;
}

/** Resolves when the response can take more, or has closed. */
function drained(res: Context['res']): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** One event as an SSE frame. */
export function sseFrame(e: RunEvent): string {
  return `id: ${e.seq}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** Waits for a run's terminal event without holding a stream open; undefined if the client left first. */
export function waitForTerminal(
  ctx: Context,
  hub: RunStreamHub,
  runId: string,
  lost?: () => Promise<RunEvent | undefined>,
): Promise<RunEvent | undefined> {
  return new Promise((resolve, reject) => {
    let terminal: RunEvent | undefined;
    let subscription: { close(): void } | undefined;
    const onClose = () => {
      subscription?.close();
      resolve(undefined);
    };
    // The response's 'close' before it was written means the client hung up (the request's own
    // 'close' fires as soon as its body is read).
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished && !terminal) onClose();
    });
    hub
      .subscribe(runId, 0, {
        onEvents(events) {
          const last = events[events.length - 1];
          if (last && (last.kind === 'run.completed' || last.kind === 'run.failed')) terminal = last;
        },
        onEnd() {
          resolve(terminal);
        },
        ...(lost ? { onLost: lost } : {}),
      })
      .then((s) => (subscription = s), reject);
  });
}

/** One incident timeline event as an SSE frame: `id:` is the event id, `event:` its kind. */
export function timelineFrame(e: { id: number; kind: string }): string {
  return `id: ${e.id}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * Streams an incident's timeline: the events after `afterId` from Postgres (the truth), then live ones
 * through the timeline hub (the run hub's machinery over the incident's Redis stream) from the last id
 * replayed, so nothing falls between and nothing comes twice. Open until the client leaves.
 */
export async function streamTimeline(
  ctx: Context,
  hub: RunStreamHub,
  incidentId: string,
  afterId: number,
  replay: (afterId: number) => Promise<Array<{ id: number; kind: string }>>,
  o: SseOptions,
) {
  const res = openEventStream(ctx, o.headers);
  let cursor = afterId;
  const write = (frame: string) => {
    if (!res.destroyed && !res.writableEnded) {
      // A client that cannot keep up is dropped; it reconnects with Last-Event-ID.
      if (res.writableLength > o.maxBufferedBytes) res.destroy();
      else res.write(frame);
    }
  };
  write(': stream open\n\n');
  const keepalive = setInterval(() => write(': keepalive\n\n'), o.keepaliveMs);
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  let subscription: { close(): void } | undefined;
  try {
    for (;;) {
      const batch = await replay(cursor);
      if (!batch.length || res.destroyed) break;
      write(batch.map(timelineFrame).join(''));
      cursor = batch[batch.length - 1]!.id;
      if (batch.length < 500) break;
    }
    // The live stream is a wake-up, Postgres the source: events are published after their commit, but
    // two commits' publications may reach Redis out of order (and Redis then refuses the lower id), so
    // each delivery reads everything committed after the cursor, in id order, one read at a time.
    let reading = Promise.resolve();
    const catchUp = async () => {
      for (;;) {
        if (res.destroyed) return;
        const batch = await replay(cursor);
        if (!batch.length) return;
        write(batch.map(timelineFrame).join(''));
        cursor = batch[batch.length - 1]!.id;
        if (batch.length < 500) return;
      }
    };
    if (!res.destroyed)
      subscription = await hub.subscribe(incidentId, cursor, {
        onEvents(events) {
          if (!events.some((e) => timelineEntryOf(e).id > cursor)) return;
          reading = reading.then(catchUp).catch((err: unknown) => {
            res.destroy(err as Error);
          });
        },
      });
  } catch (err) {
    res.destroy(err as Error);
  }
  await closed;
  clearInterval(keepalive);
  subscription?.close();
}
