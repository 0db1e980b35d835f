import { describe, expect, it } from 'vitest';
import { arrayLiteral, byArn, factBatches, pipelined } from './bulk';

const row = (arn: string, day: string, v = 0) => ({ arn, day, v });
const key = (r: { day: string }) => r.day;

describe('arrayLiteral', () => {
  it('quotes every string, escapes backslashes and double quotes, and leaves NULL bare', () => {
    expect(arrayLiteral(['a', null, 'b"c', 'd\\e', 'NULL', '', undefined])).toBe(
      '{"a",NULL,"b\\"c","d\\\\e","NULL","",NULL}',
    );
  });
  it('writes numbers as JavaScript prints them, and non-finite ones quoted', () => {
    expect(arrayLiteral([1.5, -0, 1e-7, 1e21, NaN, Infinity])).toBe('{1.5,0,1e-7,1e+21,"NaN","Infinity"}');
    expect(arrayLiteral([])).toBe('{}');
  });
});

describe('byArn', () => {
  it('sorts an array by ARN keeping the order within an ARN, and leaves the input as it was', () => {
    const input = [row('b', '1'), row('b', '2'), row('a', '2'), row('a', '1'), row('c', '1')];
    const copy = [...input];
    expect([...byArn(input)].map((r) => `${r.arn}${r.day}`)).toEqual(['a2', 'a1', 'b1', 'b2', 'c1']);
    expect(input).toEqual(copy);
  });
  it('reads any other source in its own order', () => {
    const rows = [row('b', '1'), row('a', '1')];
    const source = { length: 2, [Symbol.iterator]: () => rows[Symbol.iterator]() };
    expect([...byArn(source)].map((r) => r.arn)).toEqual(['b', 'a']);
  });
});

describe('factBatches', () => {
  const flat = (batches: Array<{ rows: Array<{ arn: string; day: string; v: number }>; checked: boolean }>) =>
    batches.map((b) => ({ checked: b.checked, rows: b.rows.map((r) => `${r.arn}${r.day}:${r.v}`) }));

  it('into a table with none of the tenant rows: unchecked batches, repeats within an ARN dropped, first wins', () => {
    const rows = [
      row('a', '1', 1),
      row('a', '2'),
      row('a', '1', 2),
      row('b', '1'),
      row('b', '1', 9),
      row('c', '1'),
    ];
    expect(flat([...factBatches(rows, key, false, 2)])).toEqual([
      { checked: false, rows: ['a1:1', 'a2:0'] },
      { checked: false, rows: ['b1:0', 'c1:0'] },
    ]);
  });

  it('a table with rows of the tenant already: every batch checked, nothing dropped here', () => {
    const rows = [row('a', '1', 1), row('a', '1', 2), row('b', '1')];
    expect(flat([...factBatches(rows, key, true, 10)])).toEqual([
      { checked: true, rows: ['a1:1', 'a1:2', 'b1:0'] },
    ]);
  });

  it('input out of ARN order ends the unchecked batches: the rest is checked, so an earlier ARN repeated is caught', () => {
    const rows = [row('a', '1'), row('c', '1'), row('b', '1'), row('a', '1', 5), row('d', '1')];
    expect(flat([...factBatches(rows, key, false, 10)])).toEqual([
      { checked: false, rows: ['a1:0', 'c1:0'] },
      { checked: true, rows: ['b1:0', 'a1:5', 'd1:0'] },
    ]);
  });

  it('gives no batch for no rows', () => {
    expect([...factBatches([], key, false, 10)]).toEqual([]);
  });
});

describe('pipelined', () => {
  /** A write that resolves when told to, recording what happened in order. */
  function harness() {
    const log: string[] = [];
    const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
    const write = (n: number) =>
      new Promise<void>((resolve, reject) => {
        log.push(`write ${n}`);
        pending.push({ resolve, reject });
      });
    function* batches(count: number, failAt?: number) {
      for (let n = 1; n <= count; n++) {
        log.push(`build ${n}`);
        if (n === failAt) throw new Error(`cannot build ${n}`);
        yield n;
      }
    }
    const settle = async (fail?: Error) => {
      await new Promise((r) => setImmediate(r));
      const next = pending.shift();
      if (!next) return false;
      if (fail) next.reject(fail);
      else next.resolve();
      return true;
    };
    return { log, write, batches, settle };
  }

  it('builds the next batch while one statement is in flight, and never starts two at once', async () => {
    const h = harness();
    const done = pipelined(h.batches(3), h.write);
    while (await h.settle());
    await done;
    expect(h.log).toEqual(['build 1', 'write 1', 'build 2', 'write 2', 'build 3', 'write 3']);
  });

  it('rejects with the failed statement and starts nothing after it', async () => {
    const h = harness();
    const done = pipelined(h.batches(3), h.write);
    const failure = expect(done).rejects.toThrow('statement 1 failed');
    await h.settle(new Error('statement 1 failed'));
    await failure;
    expect(h.log).toEqual(['build 1', 'write 1', 'build 2']);
  });

  it('when building a batch fails, waits for the statement in flight before rejecting', async () => {
    const h = harness();
    let settled = false;
    const done = pipelined(h.batches(3, 2), h.write).finally(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // statement 1 is still in flight
    await h.settle();
    await expect(done).rejects.toThrow('cannot build 2');
    expect(h.log).toEqual(['build 1', 'write 1', 'build 2']);
  });
});
