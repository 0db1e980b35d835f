import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drillsUnavailable, until } from '../support/drills';
import {
  followRun,
  isAlive,
  lossIsVisible,
  script,
  startStack,
  type FollowedRun,
  type Stack,
} from '../support/stack';

// Drill: Redis, run without persistence, is killed and started again while runs stream. It comes
// back empty: run streams, queued jobs and budgets are gone. Expected: no process exits; /ask,
// /stream and /stream/attach answer 503 {detail} during the outage (never another 5xx, never a hang);
// every client stream ends with exactly one terminal event (re-attaching as EventSource does), and
// numbering never goes back: no client ever receives a seq it has already had.

const skip = drillsUnavailable();
let stack: Stack;

beforeAll(async () => {
  if (!skip) stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe.skipIf(skip)('drill: Redis restart without persistence while runs stream', () => {
  it('no process exits, 503 during the outage, every stream ends once, numbering never goes back', async () => {
    const base = stack.api.url;
    const auth = { authorization: `Bearer ${stack.token}` };

    // Runs at every stage when Redis goes: streaming slowly, queued behind them, about to finish.
    const runs: Array<Promise<FollowedRun>> = [];
    const started: Array<Promise<void>> = [];
    const follow = (steps: unknown[], wait: boolean) => {
      let onFirstEvent!: () => void;
      if (wait) started.push(new Promise<void>((r) => (onFirstEvent = r)));
      runs.push(followRun(base, stack.token, script(steps), { onFirstEvent: () => onFirstEvent?.() }));
    };
    for (let i = 0; i < 8; i++)
      follow(
        [
          { deltas: 3, text: 'a' },
          { sleep: 300 },
          { deltas: 3, text: 'b' },
          { sleep: 2500 },
          { deltas: 3, text: 'c' },
        ],
        true,
      );
    for (let i = 0; i < 4; i++) follow([{ deltas: 20 }], false);
    await Promise.all(started);

    await stack.redis.kill();
    // During the outage: 503 {detail} for every agent entry point, promptly (a bound, not a measure).
    const session = (await (
      await fetch(`${base}/api/v1/sessions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'drill' }),
      })
    ).json()) as { id: string };
    for (const [method, path, body] of [
      ['POST', '/api/v1/ask', { prompt: 'hello' }],
      ['GET', '/api/v1/stream?prompt=hello', undefined],
      ['GET', `/api/v1/stream/attach?session_id=${session.id}`, undefined],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...auth, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(20_000),
      });
      expect([path, res.status]).toEqual([path, 503]);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/Redis/);
    }
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { detail: string }).detail).toMatch(/redis/);
    // Long enough that the workers' writes to Redis give up (their turns fail, their jobs are lost
    // with Redis, and the sweeper closes those runs once it is back).
    await new Promise((r) => setTimeout(r, 8000));
    for (const p of stack.processes) expect(isAlive(p), p.output()).toBe(true);

    await stack.redis.start();
    await until('the API to be ready again', async () =>
      (await fetch(`${base}/readyz`)).ok ? true : undefined,
    );

    const followed = await Promise.all(runs);
    // The runs Redis lost mid-turn were closed by the sweeper, numbered above what their clients saw.
    expect(followed.some((r) => String(r.data.at(-1)?.detail).includes('its job is gone'))).toBe(true);
    for (const run of followed) {
      expect(run.refused, JSON.stringify(run)).toBeUndefined();
      expect(run.terminals, JSON.stringify(run)).toBe(1);
      expect(['run.completed', 'run.failed']).toContain(run.kinds.at(-1));
      expect(
        run.seqs.every((s, i) => i === 0 || s > run.seqs[i - 1]!),
        JSON.stringify(run),
      ).toBe(true);
      // A client that missed events can tell: its text is the reply, or its numbering has a gap.
      expect(lossIsVisible(run), JSON.stringify(run)).toBe(true);
      // Re-attaching after the terminal event answers it again from Postgres or closes at once; it
      // never starts the numbering over.
      const again = await fetch(`${base}/api/v1/stream/attach?session_id=${run.sessionId}`, {
        headers: { ...auth, 'last-event-id': String(run.seqs.at(-1)) },
        signal: AbortSignal.timeout(20_000),
      });
      expect(again.status).toBe(200);
      expect(await again.text()).not.toMatch(/^id: /m);
    }

    // Service resumed without a restart: new runs complete, and every process is the one we started.
    const after = await followRun(base, stack.token, script([{ delta: 'ok' }]));
    expect(after.kinds.at(-1)).toBe('run.completed');
    expect(after.seqs).toEqual([1, 2, 3, 4]);
    for (const p of stack.processes) expect(isAlive(p), p.output()).toBe(true);
  });
});
