import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local stand-ins for hosted model APIs, for tests: an HTTP server on 127.0.0.1 that answers each
 * request with the next scripted reply (an SSE stream of chunks, or an HTTP error), and records what it
 * was sent. Helpers below write the OpenAI chat-completions and Anthropic messages stream formats.
 */

/** One reply: SSE events (JSON data, or raw text sent as is), or an HTTP error with a body. */
export type ScriptedReply = StreamReply | ErrorReply;
export interface StreamReply {
  events: SseEvent[];
  /** A pause after each event. */
  delayMs?: number;
}
export interface ErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface SseEvent {
  /** The `event:` line (Anthropic names its events; OpenAI does not). */
  event?: string;
  /** Sent as `data: <JSON>`; a string is sent as it is (e.g. "[DONE]", or malformed JSON). */
  data: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ScriptedModelServer {
  /** http://127.0.0.1:<port> (append /v1 for a base URL). */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a server that plays `replies` in order, one per request (a function picks the reply from the
 * request instead). A request beyond the script answers 500.
 */
export async function startScriptedModelServer(
  replies: ScriptedReply[] | ((req: RecordedRequest, index: number) => ScriptedReply),
): Promise<ScriptedModelServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown>;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = { raw };
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const index = requests.length - 1;
      const reply = typeof replies === 'function' ? replies(recorded, index) : replies[index];
      if (!reply) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no scripted reply for request ${index + 1}` } }));
        return;
      }
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      void (async () => {
        for (const e of reply.events) {
          if (res.destroyed) return;
          const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
          res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
          if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        }
        res.end();
      })();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// OpenAI chat completions (stream: true).

function openaiChunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    data: {
      id: 'chatcmpl-local',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'local-model',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    },
  };
}

/** A streamed text answer, one chunk per piece. */
export function openaiText(...pieces: string[]): StreamReply {
  return {
    events: [
      openaiChunk({ role: 'assistant', content: '' }),
      ...pieces.map((content) => openaiChunk({ content })),
      openaiChunk({}, 'stop'),
      { data: '[DONE]' },
    ],
  };
}

/** A streamed tool call, its JSON arguments split in `parts` pieces, finishing with tool_calls. */
export function openaiToolCall(
  name: string,
  args: unknown,
  opts: { id?: string; parts?: number } = {},
): StreamReply {
  const json = JSON.stringify(args);
  const n = Math.max(1, opts.parts ?? 3);
  const size = Math.ceil(json.length / n);
  const pieces = Array.from({ length: n }, (_, i) => json.slice(i * size, (i + 1) * size)).filter(Boolean);
  const id = opts.id ?? 'call_local_1';
  return {
    events: [
      openaiChunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
      }),
      ...pieces.map((p) => openaiChunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      openaiChunk({}, 'tool_calls'),
      { data: '[DONE]' },
    ],
  };
}

/** OpenAI's error body. */
export function openaiError(status: number, message: string, headers?: Record<string, string>): ErrorReply {
  return {
    status,
    body: { error: { message, type: 'requests', code: status === 429 ? 'rate_limit_exceeded' : null } },
    ...(headers ? { headers } : {}),
  };
}

// Anthropic messages (stream: true).

function anthropicMessage(blocks: SseEvent[][], stopReason: 'end_turn' | 'tool_use'): StreamReply {
  return {
    events: [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: 'msg_local',
            type: 'message',
            role: 'assistant',
            content: [],
            model: 'local-claude',
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        },
      },
      ...blocks.flat(),
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: stopReason, stop_sequence: null },
          usage: { output_tokens: 20 },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ],
  };
}

function textBlock(index: number, pieces: string[]): SseEvent[] {
  return [
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    },
    ...pieces.map((text) => ({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
    })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ];
}

/** A streamed text answer (stop_reason end_turn). */
export function anthropicText(...pieces: string[]): StreamReply {
  return anthropicMessage([textBlock(0, pieces)], 'end_turn');
}

/** Optional text, then a tool_use block whose input JSON arrives in pieces (stop_reason tool_use). */
export function anthropicToolUse(
  name: string,
  input: unknown,
  opts: { id?: string; text?: string; parts?: number } = {},
): StreamReply {
  const json = JSON.stringify(input);
  const n = Math.max(1, opts.parts ?? 3);
  const size = Math.ceil(json.length / n);
  const pieces = Array.from({ length: n }, (_, i) => json.slice(i * size, (i + 1) * size)).filter(Boolean);
  const blocks: SseEvent[][] = [];
  if (opts.text) blocks.push(textBlock(0, [opts.text]));
  const index = blocks.length;
  blocks.push([
    {
      event: 'content_block_start',
      data: {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: opts.id ?? 'toolu_local_1', name, input: {} },
      },
    },
    ...pieces.map((partial_json) => ({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
    })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ]);
  return anthropicMessage(blocks, 'tool_use');
}

/** Anthropic's error body. */
export function anthropicError(status: number, type: string, message: string): ErrorReply {
  return { status, body: { type: 'error', error: { type, message } } };
}
export { parseTurn, pathologicalPrompts } from './prompt-fuzz';
