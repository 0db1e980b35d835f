import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { OpsiApiError, OpsiNetworkError, OpsiStreamError } from './errors';

/** Kinds of run events (see the API reference: Agent). */
export type RunEventKind =
  | 'run.started'
  | 'run.resumed'
  | 'message.delta'
  | 'tool.started'
  | 'tool.finished'
  | 'message.completed'
  | 'run.completed'
  | 'run.failed';

/** One event of a run, as streamed: numbered 1, 2, 3… per run. */
export interface RunEvent {
  seq: number;
  run_id: string;
  kind: RunEventKind;
  at: string;
  text?: string;
  tool?: string;
  input?: unknown;
  ok?: boolean;
  output_preview?: string;
  reply?: string;
  detail?: string;
  attempt?: number;
  after_seq?: number;
  [field: string]: unknown;
}

export const TERMINAL_KINDS: readonly RunEventKind[] = ['run.completed', 'run.failed'];

/** Why and when a stream re-attached, for progress output. */
export interface ReconnectInfo {
  attempt: number;
  lastSeq: number;
  error: unknown;
}

export interface RunStreamOptions {
  /** Stop after this many failed re-attachments in a row (default 30). */
  maxReconnects?: number;
  /** The first delay before re-attaching; doubles per failed try up to 5 s (default 250 ms). */
  reconnectDelayMs?: number;
  /**
   * A connection that sends nothing for this long is taken as dead and re-attached (default 60 s; the
   * server sends a keepalive comment at least every 15 s).
   */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  onReconnect?: (info: ReconnectInfo) => void;
}

export interface StreamTransport {
  /** Opens the first connection (the request that starts the run). */
  open(signal: AbortSignal): Promise<Response>;
  /** Re-attaches to the session's latest run after `lastSeq`. */
  attach(sessionId: string, lastSeq: number, signal: AbortSignal): Promise<Response>;
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

async function refusal(res: Response): Promise<OpsiApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return OpsiApiError.from(res, body);
}

/**
 * A run's events as an async iterator. The first connection starts the run; when it drops (a reset, a
 * proxy that cuts it, or silence past the idle bound) the stream re-attaches to the same run with
 * `Last-Event-ID` and goes on, so every event is yielded exactly once and in order. It ends after the
 * terminal event (`run.completed` or `run.failed`).
 */
export class RunStream implements AsyncIterable<RunEvent> {
  /** Known once the first connection has answered (X-Session-Id, X-Run-Id). */
  sessionId: string | undefined;
  runId: string | undefined;
  /** The last sequence number yielded. */
  lastSeq = 0;
  /** How many times the stream re-attached. */
  reconnects = 0;

  constructor(
    private readonly transport: StreamTransport,
    private readonly options: RunStreamOptions = {},
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    const maxReconnects = this.options.maxReconnects ?? 30;
    const baseDelay = this.options.reconnectDelayMs ?? 250;
    let failures = 0;
    let response: Response | undefined = await this.connect((signal) => this.transport.open(signal), true);
    for (;;) {
      let lastError: unknown;
      if (response) {
        try {
          for await (const event of this.read(response)) {
            if (event.seq <= this.lastSeq) continue; // a replay overlapping what we already have
            this.lastSeq = event.seq;
            failures = 0;
            yield event;
            if (TERMINAL_KINDS.includes(event.kind)) return;
          }
          lastError = new Error('the stream closed before the run ended');
        } catch (e) {
          if (this.options.signal?.aborted) throw e;
          lastError = e;
        }
      }
      failures += 1;
      if (failures > maxReconnects)
        throw new OpsiStreamError(
          `gave up re-attaching to run ${this.runId} after ${maxReconnects} tries`,
          this.lastSeq,
          lastError,
        );
      this.options.onReconnect?.({ attempt: failures, lastSeq: this.lastSeq, error: lastError });
      await sleep(Math.min(baseDelay * 2 ** (failures - 1), 5_000), this.options.signal);
      this.reconnects += 1;
      response = await this.connect((signal) => this.transport.attach(this.sessionId!, this.lastSeq, signal));
    }
  }

  private controller: AbortController | undefined;

  /**
   * Opens a connection. The first one's refusals and network errors are thrown (nothing may have
   * started); a re-attachment's network errors and 5xx answer undefined, to be tried again.
   */
  private async connect(
    request: (signal: AbortSignal) => Promise<Response>,
    first = false,
  ): Promise<Response | undefined> {
    this.controller = new AbortController();
    const outer = this.options.signal;
    if (outer) outer.addEventListener('abort', () => this.controller?.abort(outer.reason), { once: true });
    let res: Response;
    try {
      res = await request(this.controller.signal);
    } catch (e) {
      if (first || outer?.aborted) throw e instanceof OpsiApiError ? e : new OpsiNetworkError(String(e), e);
      return undefined;
    }
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const error = await refusal(res);
      if (first || res.status < 500) throw error;
      return undefined;
    }
    const runId = res.headers.get('x-run-id') ?? undefined;
    if (first) {
      this.sessionId = res.headers.get('x-session-id') ?? undefined;
      this.runId = runId;
      if (!this.sessionId) throw new OpsiNetworkError('the stream did not name its session (X-Session-Id)');
    } else if (runId && this.runId && runId !== this.runId) {
      this.controller.abort();
      throw new OpsiStreamError(
        `session ${this.sessionId} has a newer run (${runId}) than the one streamed (${this.runId})`,
        this.lastSeq,
      );
    }
    return res;
  }

  private async *read(res: Response): AsyncGenerator<RunEvent> {
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => queue.push(m) });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const idleMs = this.options.idleTimeoutMs ?? 60_000;
    const controller = this.controller!;
    // A half-open connection never errors by itself: past the bound, abort the request and end the read.
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
          const event = JSON.parse(message.data) as RunEvent;
          if (typeof event.seq !== 'number') event.seq = Number(message.id);
          yield event;
        }
      }
    } finally {
      clearTimeout(idle);
      controller.abort();
      reader.releaseLock();
    }
  }
}
