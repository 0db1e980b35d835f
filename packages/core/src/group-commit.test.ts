import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit';

/** A run whose batches the test finishes by hand, recording what each got. */
function controlled() {
  const calls: Array<{ key: string; requests: number[][]; finish: (fail?: Error) => void }> = [];
  const run = (key: string, requests: number[][]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        key,
        requests,
        finish: (fail) => (fail ? reject(fail) : resolve(requests.map((r) => `${key}:${r.join(',')}`))),
      });
    });
  return { calls, run };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('GroupCommit', () => {
  it('a lone request goes at once, alone', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 100, maxInFlight: 1 });
    const p = g.submit('t1', [1]);
    await turn();
    expect(c.calls.map((x) => x.requests)).toEqual([[[1]]]);
    c.calls[0]!.finish();
    expect(await p).toBe('t1:1');
  });

  it('requests of one turn coalesce into one batch; each gets its own result, in order', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 100, maxInFlight: 1 });
    const ps = [g.submit('t1', [1]), g.submit('t1', [2, 3]), g.submit('t1', [4])];
    await turn();
    expect(c.calls.map((x) => x.requests)).toEqual([[[1], [2, 3], [4]]]);
    c.calls[0]!.finish();
    expect(await Promise.all(ps)).toEqual(['t1:1', 't1:2,3', 't1:4']);
    expect(g.batches).toBe(1);
  });

  it('requests that arrive while the batches in flight are full wait, then go together', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 100, maxInFlight: 1 });
    const first = g.submit('t1', [1]);
    await turn();
    const later = [g.submit('t1', [2]), g.submit('t1', [3])];
    await turn();
    await turn();
    expect(c.calls).toHaveLength(1); // still one batch in flight: the others wait
    const third = g.submit('t1', [4]);
    c.calls[0]!.finish();
    expect(await first).toBe('t1:1');
    await turn();
    expect(c.calls.map((x) => x.requests)).toEqual([[[1]], [[2], [3], [4]]]);
    c.calls[1]!.finish();
    expect(await Promise.all([...later, third])).toEqual(['t1:2', 't1:3', 't1:4']);
  });

  it('keys never share a batch, and one key does not wait for another', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 100, maxInFlight: 1 });
    const a = g.submit('a', [1]);
    const b = g.submit('b', [2]);
    await turn();
    expect(c.calls.map((x) => [x.key, x.requests])).toEqual([
      ['a', [[1]]],
      ['b', [[2]]],
    ]);
    c.calls[1]!.finish();
    expect(await b).toBe('b:2');
    c.calls[0]!.finish();
    expect(await a).toBe('a:1');
  });

  it('a batch holds at most maxItems (a larger request goes alone), and up to maxInFlight run at once', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 3, maxInFlight: 2 });
    const ps = [
      g.submit('t', [1, 2]),
      g.submit('t', [3, 4]),
      g.submit('t', [5, 6, 7, 8]),
      g.submit('t', [9]),
    ];
    await turn();
    await turn();
    expect(c.calls.map((x) => x.requests)).toEqual([[[1, 2]], [[3, 4]]]);
    c.calls[0]!.finish();
    await ps[0];
    await turn();
    await turn();
    expect(c.calls.map((x) => x.requests)).toEqual([[[1, 2]], [[3, 4]], [[5, 6, 7, 8]]]);
    c.calls[1]!.finish();
    c.calls[2]!.finish();
    await Promise.all(ps.slice(1, 3));
    await turn();
    await turn();
    expect(c.calls[3]!.requests).toEqual([[9]]);
    c.calls[3]!.finish();
    expect(await ps[3]).toBe('t:9');
  });

  it('a batch that releases its slot early lets the next one go while it still runs', async () => {
    const releases: Array<() => void> = [];
    const finishes: Array<() => void> = [];
    const g = new GroupCommit<number, number>(
      (_key, requests, release) =>
        new Promise((resolve) => {
          releases.push(release);
          finishes.push(() => resolve(requests.map((r) => r[0]!)));
        }),
      { maxItems: 100, maxInFlight: 1 },
    );
    const first = g.submit('t', [1]);
    await turn();
    const second = g.submit('t', [2]);
    await turn();
    expect(g.batches).toBe(1);
    releases[0]!();
    releases[0]!(); // twice is once
    await turn();
    expect(g.batches).toBe(2);
    finishes[1]!();
    expect(await second).toBe(2);
    finishes[0]!();
    expect(await first).toBe(1);
    const third = g.submit('t', [3]);
    await turn();
    expect(g.batches).toBe(3);
    finishes[2]!();
    expect(await third).toBe(3);
  });

  it('a failed batch fails each of its requests, and only those', async () => {
    const c = controlled();
    const g = new GroupCommit(c.run, { maxItems: 100, maxInFlight: 1 });
    const failing = [g.submit('t', [1]), g.submit('t', [2])];
    await turn();
    const next = g.submit('t', [3]);
    c.calls[0]!.finish(new Error('database down'));
    for (const p of failing) await expect(p).rejects.toThrow('database down');
    await turn();
    c.calls[1]!.finish();
    expect(await next).toBe('t:3');
  });
});
