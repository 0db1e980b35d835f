import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantWithUser, mintTestToken, script } from '../support/index';
import { until } from '../support/drills';
import { startSplitServices, type SplitServices } from '../support/split';

// Fairness between tenants with real processes, at a small scale: tenant A queues many turns, then
// tenant B one; a single worker slot then serves them. B's turn must be taken among the first few, not
// after A's backlog. Asserted on the order in which the worker started the runs, never on time.

let svc: SplitServices;

beforeAll(async () => {
  // The worker starts once the turns are queued (below).
  svc = await startSplitServices({ worker: false });
});

afterAll(async () => {
  await svc?.stop();
});

/** Opens /api/v1/stream and hangs up once admitted (the run is durable); answers the run id. */
async function queueTurn(token: string, prompt: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${svc.base}/api/v1/stream?${new URLSearchParams({ prompt })}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const runId = res.headers.get('x-run-id')!;
  controller.abort();
  return runId;
}

describe('fair queuing across tenants (API and worker processes)', () => {
  it('a turn of tenant B queued behind 30 of tenant A is among the first three taken; each tenant keeps its order', async () => {
    const a = await createTenantWithUser(svc.t, { budget: 100 });
    const b = await createTenantWithUser(svc.t, { budget: 100 });
    const tokenA = (await mintTestToken(svc.t, a, 'read_write')).token;
    const tokenB = (await mintTestToken(svc.t, b, 'read_write')).token;
    const prompt = script([{ sleep: 5 }, { delta: 'x' }]); // the sleep keeps start times apart
    const runsA: string[] = [];
    for (let i = 0; i < 30; i++) runsA.push(await queueTurn(tokenA, prompt));
    const runB = await queueTurn(tokenB, prompt);

    // One worker with one slot: the queue's order is the order the runs start.
    await svc.startWorker({
      AGENT_ENGINE: 'scripted',
      WORKER_QUEUES: 'agent',
      WORKER_CONCURRENCY_AGENT: '1',
    });
    const rows = await until(
      'every run to finish',
      async () => {
        const all = await svc.t.db
          .selectFrom('agent_runs')
          .select(['id', 'status', 'started_at', 'last_seq'])
          .where('id', 'in', [...runsA, runB])
          .execute();
        return all.every((r) => r.status === 'completed') ? all : undefined;
      },
      120_000,
    );
    const started = [...rows]
      .sort((x, y) => x.started_at!.getTime() - y.started_at!.getTime())
      .map((r) => r.id);
    // Round-robin: B's turn goes right behind A's second (first in first out would make it 31st).
    expect(started.indexOf(runB)).toBeLessThan(3);
    expect(started.filter((id) => id !== runB)).toEqual(runsA);
    // Durable as before: each run has its events numbered from 1 and ended once.
    for (const r of rows) expect(r.last_seq).toBeGreaterThanOrEqual(3);
  });
});
