// (d) memory held per open idle SSE connection, ours (attach to a run that has not ended) vs bare servers.
import type { IncomingHttpHeaders } from 'node:http';
import type { MemorySample } from './lib/agent';
import type { Service } from './lib/env';
import { openSse, type SseConnection } from './lib/sse-client';
import { pool, sleep } from './lib/stats';

/**
 * Sessions whose run never ends: GET /api/v1/stream with a `hang` script, hung up on as soon as the head
 * arrives (the run is durable and stays open). Each costs one unit of the token's budget.
 */
export async function createOpenSessions(apiUrl: string, token: string, n: number): Promise<string[]> {
  const prompt = `script:${JSON.stringify([{ hang: true }])}`;
  const sessions: string[] = [];
  await pool(n, 10, async (i) => {
    const c = openSse(`${apiUrl}/api/v1/stream?prompt=${encodeURIComponent(prompt)}`, { token });
    const head = await c.head;
    if (head.status !== 200) throw new Error(`hanging run ${i}: status ${head.status}`);
    sessions[i] = String(head.headers['x-session-id']);
    c.close();
    await c.done;
  });
  return sessions;
}

export interface MemoryResult {
  connections: number;
  base: MemorySample;
  loaded: MemorySample;
  closed: MemorySample;
  /** (heapUsed + external) held per connection, bytes. */
  heapPerConnection: number;
  rssPerConnection: number;
  /** (heapUsed + external) after every connection closed, minus before any opened, bytes. */
  heapLeftAfterClose: number;
}

const heap = (m: MemorySample) => m.heapUsed + m.external;

/** Opens `n` SSE connections to `service`, measures its memory while they idle, then closes them. */
export async function measureIdleConnections(
  service: Service,
  urlFor: (i: number) => string,
  n: number,
  token?: string,
): Promise<MemoryResult> {
  await sleep(500);
  const base = await service.memory();
  const connections: SseConnection[] = [];
  await pool(n, 50, async (i) => {
    const c = openSse(urlFor(i), { ...(token ? { token } : {}), timeoutMs: 600_000 });
    connections[i] = c;
    let head: { status: number; headers: IncomingHttpHeaders };
    try {
      head = await c.head;
    } catch (e) {
      throw new Error(`${service.name} connection ${i}: ${(e as Error).message}`, { cause: e });
    }
    if (head.status !== 200) throw new Error(`${service.name} connection ${i}: status ${head.status}`);
    await c.firstChunk;
  });
  await sleep(1000);
  const loaded = await service.memory();
  for (const c of connections) c.close();
  const results = await Promise.all(connections.map((c) => c.done));
  const ended = results.filter((r) => !r.aborted).length;
  if (ended) throw new Error(`${service.name}: ${ended} idle connections ended on their own`);
  await sleep(1000);
  const closed = await service.memory();
  return {
    connections: n,
    base,
    loaded,
    closed,
    heapPerConnection: (heap(loaded) - heap(base)) / n,
    rssPerConnection: (loaded.rss - base.rss) / n,
    heapLeftAfterClose: heap(closed) - heap(base),
  };
}
