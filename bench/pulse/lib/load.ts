import http from 'node:http';

export interface LoadTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** Keep-alive connections, reused across windows. */
  agent: http.Agent;
}

export function loadTarget(name: string, url: string, headers: Record<string, string>, connections: number) {
  return {
    name,
    url,
    headers,
    agent: new http.Agent({ keepAlive: true, maxSockets: connections }),
  } satisfies LoadTarget;
}

export interface LoadWindow {
  requests: number;
  errors: number;
  elapsedMs: number;
  rps: number;
  /** Per-request latency (request written -> body fully read), ms. */
  latencies: number[];
  bytes: number;
}

/** One GET read to its end; answers status and body length. */
function get(t: LoadTarget): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(t.url, { agent: t.agent, headers: t.headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** One GET, body parsed as JSON (for checking what the two sides answer). */
export function getJson(t: LoadTarget): Promise<{ status: number; body: unknown; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(t.url, { agent: t.agent, headers: t.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), bytes: Buffer.byteLength(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Closed-loop load: `connections` loops, each sending the next request on its keep-alive connection as
 * soon as the previous response has been read, until `durationMs` is over (requests in flight then are
 * completed and counted). Requests per second = completed requests ÷ elapsed time.
 */
export async function runLoad(t: LoadTarget, connections: number, durationMs: number): Promise<LoadWindow> {
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const r = await get(t);
        latencies.push(performance.now() - t0);
        bytes += r.bytes;
        if (r.status !== 200) errors++;
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return {
    requests: latencies.length,
    errors,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    latencies,
    bytes,
  };
}
