import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drillsUnavailable, until } from '../support/drills';
import { followRun, isAlive, script, startStack, type FollowedRun, type Stack } from '../support/stack';

// Drill: Postgres goes away and comes back while the API, the worker and the scheduler are busy (and
// `npm start`'s single process beside them).
// Expected: no process exits; requests during the outage answer 503 {detail} (never another 5xx);
// /readyz names the database; service resumes without restarting anything; every run stream ends
// with exactly one terminal event and its numbering never goes back.

const skip = drillsUnavailable();
let stack: Stack;

beforeAll(async () => {
  if (!skip) stack = await startStack({ standalone: true });
});
afterAll(async () => {
  await stack?.close();
});

/** Keeps a few clients calling the API until told to stop; records every status. */
function load(base: string, token: string) {
  const statuses: number[] = [];
  const bodies: string[] = [];
  let stop = false;
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/me'],
    ['GET', '/api/v1/sessions'],
    ['POST', '/api/v1/sessions', { name: 'drill' }],
    ['GET', '/api/v1/learnings'],
  ];
  const client = async (offset: number) => {
    for (let i = offset; !stop; i++) {
      const [method, path, body] = calls[i % calls.length]!;
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
          // A bound: a request that hangs through the outage fails the drill.
          signal: AbortSignal.timeout(20_000),
        });
        statuses.push(res.status);
        const text = await res.text();
        if (res.status >= 500) bodies.push(text);
      } catch (e) {
        statuses.push(-1);
        bodies.push(String(e));
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const running = Promise.all([0, 1, 2, 3].map(client));
  return {
    statuses,
    bodies,
    async stop() {
      stop = true;
      await running;
    },
  };
}

describe.skipIf(skip)('drill: Postgres restart under load', () => {
  it('no process exits, 503 during the outage, recovery by itself, every stream ends once', async () => {
    const base = stack.api.url;
    const before = load(base, stack.token);
    await until('some answers', () => (before.statuses.length > 20 ? true : undefined));
    await before.stop();
    expect(before.statuses.every((s) => s === 200 || s === 201)).toBe(true);

    // Runs that stream across the outage: deltas, a pause, a tool (a Postgres checkpoint), more deltas.
    const runs: Array<Promise<FollowedRun>> = [];
    const started: Array<Promise<void>> = [];
    for (let i = 0; i < 6; i++) {
      let onFirstEvent!: () => void;
      started.push(new Promise<void>((r) => (onFirstEvent = r)));
      runs.push(
        followRun(
          base,
          stack.token,
          script([{ deltas: 5 }, { sleep: 1500 }, { tool: 'list_findings' }, { deltas: 5 }]),
          { onFirstEvent },
        ),
      );
    }
    await Promise.all(started);
    const during = load(base, stack.token);
    await stack.pg.stop();
    // The outage, seen from outside: 503 {detail} naming the database, and /readyz says what is down.
    await until('503 answers during the outage', () => (during.statuses.includes(503) ? true : undefined));
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    const readyBody = (await ready.json()) as { detail: string; checks: Record<string, string> };
    expect(readyBody.detail).toMatch(/database/);
    expect(readyBody.checks.redis).toBe('ok');
    const me = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${stack.token}` } });
    expect(me.status).toBe(503);
    expect(((await me.json()) as { detail: string }).detail).toMatch(/database/i);
    const one = await fetch(`${stack.standalone!.url}/api/v1/me`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    expect(one.status).toBe(503);
    // Let the outage last through a few sweeps and schedule reconciliations.
    await new Promise((r) => setTimeout(r, 3000));
    for (const p of stack.processes) expect(isAlive(p), p.output()).toBe(true);

    await stack.pg.start();
    await until('the API to be ready again', async () =>
      (await fetch(`${base}/readyz`)).ok ? true : undefined,
    );
    await until('200s after the outage', () =>
      during.statuses.slice(-8).every((s) => s < 300) ? true : undefined,
    );
    await during.stop();

    // Only 2xx and 503: never a 500, never a hang.
    const other = during.statuses.filter((s) => !(s === 200 || s === 201 || s === 503));
    expect({ other, bodies: during.bodies.filter((b) => !b.includes('unavailable')) }).toEqual({
      other: [],
      bodies: [],
    });

    const followed = await Promise.all(runs);
    for (const run of followed) {
      expect(run.refused).toBeUndefined();
      expect(run.terminals).toBe(1);
      expect(['run.completed', 'run.failed']).toContain(run.kinds.at(-1));
      // Numbering never goes back, over every re-attach.
      expect(run.seqs.every((s, i) => i === 0 || s > run.seqs[i - 1]!)).toBe(true);
    }

    // Service resumed without a restart: a new run completes, and every process is the one we started.
    const after = await followRun(base, stack.token, script([{ delta: 'ok' }]));
    const oneAfter = await fetch(`${stack.standalone!.url}/api/v1/me`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    expect(oneAfter.status).toBe(200);
    expect(after.kinds.at(-1)).toBe('run.completed');
    for (const p of stack.processes) expect(isAlive(p), p.output()).toBe(true);
  });
});
