import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors';
import { closeParsePools, parsePlanOffThread } from './parse-pool';

afterAll(() => closeParsePools());

const status = async (p: Promise<unknown>) => {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof AppError) return e.status;
    throw e;
  }
};

/** A text plan of n resources (about 150 bytes each). */
const manyResources = (n: number) =>
  'Terraform will perform the following actions:\n\n' +
  Array.from(
    { length: n },
    (_, i) =>
      `  # aws_s3_bucket.b${i} will be created\n  + resource "aws_s3_bucket" "b${i}" {\n      + bucket = "b${i}"\n      + tags   = {\n          + "Name" = "b${i}"\n        }\n    }\n`,
  ).join('\n');

describe('plans are parsed on a worker thread with a time and a memory limit', () => {
  it('answers the parse, and its 400s as 400s', async () => {
    const plan = await parsePlanOffThread(manyResources(3), { timeoutMs: 30_000, memoryMb: 128 });
    expect(plan.changes.map((c) => c.address)).toEqual([
      'aws_s3_bucket.b0',
      'aws_s3_bucket.b1',
      'aws_s3_bucket.b2',
    ]);
    expect(await status(parsePlanOffThread('hello', { timeoutMs: 30_000, memoryMb: 128 }))).toBe(400);
  });

  it("a new thread's start is not counted against the time limit", async () => {
    await closeParsePools(); // the next parse starts a thread: seconds on a busy machine, in tests (tsx)
    const plan = await parsePlanOffThread(manyResources(1), { timeoutMs: 100, memoryMb: 128 });
    expect(plan.changes).toHaveLength(1);
  });

  it('a parse past the time limit is stopped: 422, and the next parse works', async () => {
    const big = manyResources(60_000); // ~8 MB: far more than 100 ms of parsing
    await parsePlanOffThread(manyResources(1), { timeoutMs: 30_000, memoryMb: 128 }); // the thread is up
    const started = Date.now();
    expect(await status(parsePlanOffThread(big, { timeoutMs: 100, memoryMb: 128 }))).toBe(422);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(
      (await parsePlanOffThread(manyResources(1), { timeoutMs: 30_000, memoryMb: 128 })).changes,
    ).toHaveLength(1);
  });

  it('a parse past the memory limit stops the thread: 413', async () => {
    const big = manyResources(60_000);
    expect(await status(parsePlanOffThread(big, { timeoutMs: 60_000, memoryMb: 32 }))).toBe(413);
  });
});
