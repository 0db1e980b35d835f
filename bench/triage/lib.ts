// What bench/triage's benchmark (main.ts) and its CPU ladder (floor.ts) share: the thin HTTP client and
// the API and worker processes with the benchmark's settings.
import http from 'node:http';
import { startApiAndWorker, type Scratch, type Service } from '../runs/lib/env';

/**
 * A deliberately thin client (node:http, keep-alive, one socket per request in flight), as bench/runs and
 * bench/pulse use, so the load generator costs little of the two cores the service shares with it:
 * `fetch` (undici) spent 0.48 ms of CPU per request here, node:http about a third of that.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request (a JSON body when given), read to its end. */
export function send(
  url: string,
  method: 'GET' | 'POST',
  opts: { token?: string; body?: unknown } = {},
): Promise<{ status: number; text: string }> {
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(payload.length) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Closes the client's idle sockets (the process can then exit). */
export function closeClient(): void {
  agent.destroy();
}

/**
 * The real API and a triage worker as their own processes (production mode, one log line per request),
 * on the scratch database and Redis prefix, ready to serve.
 */
export async function startTriageServices(
  s: Scratch,
  o: { workerConcurrency: number; pool: number; nodeArgs?: string[] },
): Promise<{ api: Service; worker: Service; url: string }> {
  return startApiAndWorker(
    s,
    {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      WORKER_QUEUES: 'triage',
      WORKER_CONCURRENCY_TRIAGE: String(o.workerConcurrency),
      WORKER_SHUTDOWN_GRACE_MS: '2000',
      TRIAGE_WAIT_MS: '30000',
      DATABASE_POOL_MAX: String(o.pool),
      SECRETS_KEY: 'bench-only-secrets-key-0123456789abcdef', // required in production since notifiers
    },
    o.nodeArgs,
  );
}
