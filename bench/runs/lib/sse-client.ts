import http, { type IncomingHttpHeaders } from 'node:http';

const NEEDLE = Buffer.from('\nevent:');
const TAIL_BYTES = 2048;

export interface SseResult {
  status: number;
  headers: IncomingHttpHeaders;
  /** Milliseconds from sending the request to its response head. */
  headersMs: number;
  /** Milliseconds from sending the request to the first chunk holding an `event:` line (NaN if none). */
  firstEventMs: number;
  /** Milliseconds from sending the request to the end of the response (or to our hang-up). */
  endMs: number;
  /** Number of `event:` lines received. */
  events: number;
  /** Bytes of body received. */
  bytes: number;
  /** The last bytes of the body, to check the final frame. */
  tail: string;
  /** True when we hung up first. */
  aborted: boolean;
  /** True when the server ended the response (for our streams: after the terminal event). */
  complete: boolean;
}

export interface SseConnection {
  /** Resolves with the response head (status, headers) once it has arrived. */
  head: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** Resolves when the body's first chunk has arrived (the `: stream open` comment for our streams). */
  firstChunk: Promise<void>;
  /** Resolves when the response ends, or after close(). */
  done: Promise<SseResult>;
  /** Hangs up. */
  close(): void;
}

function countNeedle(buf: Buffer): number {
  let n = 0;
  let at = buf.indexOf(NEEDLE);
  while (at !== -1) {
    n++;
    at = buf.indexOf(NEEDLE, at + NEEDLE.length);
  }
  return n;
}

/**
 * A deliberately thin SSE client over node:http: it counts `event:` lines with Buffer.indexOf instead of
 * parsing frames, so that the client costs as little as possible in the throughput measurements.
 */
export function openSse(
  url: string,
  opts: { token?: string; agent?: http.Agent | false; timeoutMs?: number } = {},
): SseConnection {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let resolveHead!: (h: { status: number; headers: IncomingHttpHeaders }) => void;
  let resolveFirst!: () => void;
  let resolveDone!: (r: SseResult) => void;
  let rejectAll!: (e: Error) => void;
  const head = new Promise<{ status: number; headers: IncomingHttpHeaders }>((res, rej) => {
    resolveHead = res;
    rejectAll = rej;
  });
  const firstChunk = new Promise<void>((res) => (resolveFirst = res));
  const result: SseResult = {
    status: 0,
    headers: {},
    headersMs: NaN,
    firstEventMs: NaN,
    endMs: NaN,
    events: 0,
    bytes: 0,
    tail: '',
    aborted: false,
    complete: false,
  };
  const done = new Promise<SseResult>((res, rej) => {
    resolveDone = res;
    const previous = rejectAll;
    rejectAll = (e) => {
      previous(e);
      rej(e);
    };
  });
  // Unhandled if nobody awaits them: their failure surfaces through `done`.
  head.catch(() => undefined);

  let carry: Buffer = Buffer.alloc(0);
  let tail: Buffer = Buffer.alloc(0);
  const started = performance.now();
  const req = http.get(url, { headers, agent: opts.agent ?? false }, (res) => {
    result.headersMs = performance.now() - started;
    result.status = res.statusCode ?? 0;
    result.headers = res.headers;
    resolveHead({ status: result.status, headers: res.headers });
    res.on('data', (chunk: Buffer) => {
      if (result.bytes === 0) resolveFirst();
      result.bytes += chunk.length;
      // An `event:` line split across two chunks is found in the seam.
      let found = countNeedle(chunk);
      if (carry.length) {
        const seam = Buffer.concat([carry, chunk.subarray(0, NEEDLE.length - 1)]);
        found += countNeedle(seam);
      }
      if (found > 0 && result.events === 0) result.firstEventMs = performance.now() - started;
      result.events += found;
      carry = chunk.subarray(Math.max(0, chunk.length - (NEEDLE.length - 1)));
      tail = chunk.length >= TAIL_BYTES ? chunk.subarray(-TAIL_BYTES) : Buffer.concat([tail, chunk]);
      if (tail.length > TAIL_BYTES) tail = tail.subarray(-TAIL_BYTES);
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      result.endMs = performance.now() - started;
      result.tail = tail.toString('utf8');
      clearTimeout(timer);
      resolveFirst();
      if (timedOut) rejectAll(new Error(`SSE request timed out after ${result.events} events: ${url}`));
      else resolveDone(result);
    };
    res.once('end', () => {
      result.complete = true;
      finish();
    });
    res.once('close', finish);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    req.destroy(new Error(`SSE request timed out: ${url}`));
  }, opts.timeoutMs ?? 60_000);
  req.once('error', (e) => {
    clearTimeout(timer);
    if (result.aborted) {
      result.endMs = performance.now() - started;
      resolveDone(result);
    } else rejectAll(e);
  });
  return {
    head,
    firstChunk,
    done,
    close() {
      result.aborted = true;
      req.destroy();
    },
  };
}

/** One SSE request read to its end. */
export function readSse(
  url: string,
  opts: { token?: string; agent?: http.Agent | false; timeoutMs?: number } = {},
): Promise<SseResult> {
  return openSse(url, opts).done;
}
