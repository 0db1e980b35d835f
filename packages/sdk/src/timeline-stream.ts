import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { OpsiApiError, OpsiNetworkError, OpsiStreamError } from './errors';
import type { TimelineEvent } from './types';

export interface TimelineStreamOptions {
  /** Start after this event id (the events after it are replayed first); default: from the start. */
  afterId?: number | undefined;
  /** Stop after this many failed reconnections in a row (default 30). */
  maxReconnects?: number;
  /** The first delay before reconnecting; doubles per failed try up to 5 s (default 250 ms). */
  reconnectDelayMs?: number;
  /** A connection silent this long is taken as dead and reopened (default 60 s; keepalives come more often). */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  onReconnect?: (info: { attempt: number; lastId: number; error: unknown }) => void;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * An incident's timeline, live, as an async iterator (GET /api/v1/incidents/{id}/timeline/stream). The
 * stream never ends by itself: when the connection drops (a reset, silence past the idle bound, the
 * server going away) it reopens with `Last-Event-ID` set to the last event yielded, so each event comes
 * exactly once and in order. Stop it with the signal or by leaving the loop.
 */
export class TimelineStream implements AsyncIterable<TimelineEvent> {
  /** The id of the last event yielded. */
  lastId: number;
  /** How many times the stream reconnected. */
  reconnects = 0;

  constructor(
    private readonly open: (lastId: number, signal: AbortSignal) => Promise<Response>,
    private readonly options: TimelineStreamOptions = {},
  ) {
    this.lastId = options.afterId ?? 0;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TimelineEvent> {
    const maxReconnects = this.options.maxReconnects ?? 30;
    const baseDelay = this.options.reconnectDelayMs ?? 250;
    const outer = this.options.signal;
    let failures = 0;
    let first = true;
    for (;;) {
      const controller = new AbortController();
      const onAbort = () => controller.abort(outer?.reason);
      outer?.addEventListener('abort', onAbort, { once: true });
      let lastError: unknown;
      try {
        let res: Response | undefined;
        try {
          res = await this.open(this.lastId, controller.signal);
        } catch (e) {
          if (first || outer?.aborted) throw new OpsiNetworkError(String(e), e);
          lastError = e;
        }
        if (res) {
          if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
            const text = await res.text().catch(() => '');
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON
            }
            const error = OpsiApiError.from(res, body);
            if (first || res.status < 500) throw error;
            lastError = error;
          } else {
            first = false;
            try {
              for await (const event of this.read(res, controller)) {
                if (event.id <= this.lastId) continue;
                this.lastId = event.id;
                failures = 0;
                yield event;
              }
              lastError = new Error('the stream closed');
            } catch (e) {
              if (outer?.aborted) throw e;
              lastError = e;
            }
          }
        }
      } finally {
        outer?.removeEventListener('abort', onAbort);
        controller.abort();
      }
      failures += 1;
      if (failures > maxReconnects)
        throw new OpsiStreamError(
          `gave up reconnecting to the timeline after ${maxReconnects} tries`,
          this.lastId,
          lastError,
        );
      this.options.onReconnect?.({ attempt: failures, lastId: this.lastId, error: lastError });
      await sleep(Math.min(baseDelay * 2 ** (failures - 1), 5_000), outer);
      this.reconnects += 1;
    }
  }

  private async *read(res: Response, controller: AbortController): AsyncGenerator<TimelineEvent> {
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => queue.push(m) });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const idleMs = this.options.idleTimeoutMs ?? 60_000;
    const onIdle = () => {
      controller.abort(new Error('no data within the idle bound'));
      reader.cancel().catch(() => undefined);
    };
    let idle = setTimeout(onIdle, idleMs);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        clearTimeout(idle);
        if (done) return;
        idle = setTimeout(onIdle, idleMs);
        parser.feed(decoder.decode(value, { stream: true }));
        while (queue.length) {
          const message = queue.shift()!;
          const event = JSON.parse(message.data) as TimelineEvent;
          if (typeof event.id !== 'number') event.id = Number(message.id);
          yield event;
        }
      }
    } finally {
      clearTimeout(idle);
      reader.releaseLock();
    }
  }
}
