// Where the API's CPU per request goes on this machine: the same API process (production mode, the
// triage bench's settings) under 50 requests in flight of (1) GET /healthz (HTTP + Koa + the request
// log: the floor), (2) GET /api/v1/triage/rules (plus token authentication and one small read), and
// (3) POST /api/v1/triage/alerts (plus body parsing, validation, group commit, the job and its
// decision). Prints the API's CPU per request for each. `npx tsx bench/triage/floor.ts`.
import http from 'node:http';
import { createTenantWithUser, freePort, mintTestToken } from '@opsi/test-support';
import { createScratch, startService, waitReady } from '../runs/lib/env';
import { processCpuMs } from '../runs/lib/cpu';
import { pool } from '../runs/lib/stats';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function send(url: string, method: string, token?: string, body?: unknown): Promise<number> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(payload.length) }
            : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const scratch = await createScratch();
try {
  const member = await createTenantWithUser(scratch);
  const { token } = await mintTestToken(scratch, member, 'read_write');
  const port = await freePort();
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: scratch.databaseUrl,
    REDIS_URL: scratch.redisUrl,
    REDIS_PREFIX: scratch.redisPrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    DEMO_SEED: 'false',
    WORKER_QUEUES: 'triage',
    WORKER_CONCURRENCY_TRIAGE: '50',
    WORKER_METRICS_PORT: '0',
    DATABASE_POOL_MAX: '10',
    SECRETS_KEY: 'bench-only-secrets-key-0123456789abcdef',
  };
  const api = startService('api', 'apps/api/src/main.ts', env);
  const worker = startService('worker', 'apps/worker/src/main.ts', env);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, api);
  await worker.waitForOutput('worker ready');
  const cases: Array<[string, (i: number) => Promise<number>, number]> = [
    ['GET /healthz', () => send(`${url}/healthz`, 'GET'), 200],
    ['GET /nope (404, logged)', () => send(`${url}/nope`, 'GET'), 404],
    ['GET /api/v1/me', () => send(`${url}/api/v1/me`, 'GET', token), 200],
    ['GET /api/v1/triage/rules', () => send(`${url}/api/v1/triage/rules`, 'GET', token), 200],
    [
      'POST /api/v1/triage/alerts',
      (i) =>
        send(`${url}/api/v1/triage/alerts`, 'POST', token, {
          title: `floor ${i % 20}`,
          severity: 'medium',
          source: 'bench',
          fingerprint: `floor-${i % 20}`,
        }),
      202,
    ],
  ];
  for (const [name, fn, expected] of cases) {
    await pool(2000, 50, async (i) => {
      if ((await fn(i)) !== expected) throw new Error(`${name}: not ${expected}`);
    });
    const n = 8000;
    const profile = process.env.FLOOR_PROFILE && name.startsWith('POST');
    if (profile) await api.request({ type: 'profile-start' });
    const before = processCpuMs(api.child.pid!)!;
    const t0 = performance.now();
    await pool(n, 50, async (i) => {
      if ((await fn(i)) !== expected) throw new Error(`${name}: not ${expected}`);
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = (processCpuMs(api.child.pid!)! - before) / n;
    if (profile)
      await api.request({ type: 'profile-stop', path: `${process.env.FLOOR_PROFILE}/floor-post.cpuprofile` });
    console.log(
      `${name.padEnd(28)} ${(n / seconds).toFixed(0).padStart(6)} req/s   API CPU ${cpu.toFixed(3)} ms per request`,
    );
  }
  agent.destroy();
  await api.stop(5000);
  await worker.stop(5000);
} finally {
  await scratch.close();
}
