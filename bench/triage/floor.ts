// Where the API's CPU per request goes on this machine: the same API process (production mode, the
// triage bench's settings) under 50 requests in flight of (1) GET /healthz (HTTP + Koa + the request
// log: the floor), (2) GET /api/v1/triage/rules (plus token authentication and one small read), and
// (3) POST /api/v1/triage/alerts (plus body parsing, validation, group commit, the job and its
// decision). Prints the API's CPU per request for each. `npx tsx bench/triage/floor.ts`.
import { createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { createScratch } from '../runs/lib/env';
import { processCpuMs } from '../runs/lib/cpu';
import { pool } from '../runs/lib/stats';
import { closeClient, send, startTriageServices } from './lib';

const scratch = await createScratch();
try {
  const member = await createTenantWithUser(scratch);
  const { token } = await mintTestToken(scratch, member, 'read_write');
  // The triage benchmark's processes and settings, its worker at the concurrency of the requests.
  const { api, worker, url } = await startTriageServices(scratch, { workerConcurrency: 50, pool: 10 });
  const cases: Array<[string, (i: number) => Promise<number>, number]> = [
    ['GET /healthz', async () => (await send(`${url}/healthz`, 'GET')).status, 200],
    ['GET /nope (404, logged)', async () => (await send(`${url}/nope`, 'GET')).status, 404],
    ['GET /api/v1/me', async () => (await send(`${url}/api/v1/me`, 'GET', { token })).status, 200],
    [
      'GET /api/v1/triage/rules',
      async () => (await send(`${url}/api/v1/triage/rules`, 'GET', { token })).status,
      200,
    ],
    [
      'POST /api/v1/triage/alerts',
      async (i) =>
        (
          await send(`${url}/api/v1/triage/alerts`, 'POST', {
            token,
            body: {
              title: `floor ${i % 20}`,
              severity: 'medium',
              source: 'bench',
              fingerprint: `floor-${i % 20}`,
            },
          })
        ).status,
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
  closeClient();
  await api.stop(5000);
  await worker.stop(5000);
} finally {
  await scratch.close();
}
