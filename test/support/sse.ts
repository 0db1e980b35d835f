import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  id: number;
  event: string;
  data: Record<string, any>;
}

export interface SseResult {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** The JSON body when the server refused before streaming. */
  body?: any;
  /** True when we hung up before the server closed the stream. */
  aborted: boolean;
}

/**
 * Opens an SSE request like a client would and collects events until the server closes the stream, or
 * until `stopAfter` says to hang up (to test dropped connections).
 */
export async function readSse(
  url: string,
  opts: {
    token?: string;
    headers?: Record<string, string>;
    stopAfter?: (events: SseEvent[]) => boolean;
    onEvent?: (event: SseEvent) => void;
    /** Called once the response head has arrived, before any event is read. */
    onOpen?: (res: Response) => void;
    timeoutMs?: number;
  } = {},
): Promise<SseResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('SSE read timed out')), opts.timeoutMs ?? 60_000);
  const headers: Record<string, string> = { accept: 'text/event-stream', ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(url, { headers, signal: controller.signal });
  const result: SseResult = {
    status: res.status,
    headers: res.headers,
    events: [],
    comments: [],
    aborted: false,
  };
  opts.onOpen?.(res);
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    result.body = await res.json().catch(() => undefined);
    clearTimeout(timer);
    return result;
  }
  let stop = false;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      const event: SseEvent = {
        id: Number(message.id),
        event: message.event ?? 'message',
        data: JSON.parse(message.data),
      };
      result.events.push(event);
      opts.onEvent?.(event);
      if (opts.stopAfter?.(result.events)) stop = true;
    },
    onComment(comment) {
      result.comments.push(comment.trim());
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (stop) {
        result.aborted = true;
        controller.abort();
        break;
      }
    }
  } catch (e) {
    if (!stop) throw e;
  } finally {
    clearTimeout(timer);
  }
  return result;
}

/** Asserts-friendly summary: the seqs in order. */
export function seqs(events: SseEvent[]): number[] {
  return events.map((e) => e.id);
}
