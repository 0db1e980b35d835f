import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors';
import { hashPassword, passwordHashLoad, setPasswordHashLimits, verifyPassword } from './passwords';

afterAll(() => setPasswordHashLimits(4, 2_000));

describe('password hashing is bounded', () => {
  it('runs at most PASSWORD_HASH_CONCURRENCY at once; a caller that waits too long gets 503 with Retry-After', async () => {
    const hash = await hashPassword('correct horse battery');
    setPasswordHashLimits(1, 20);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, passwordHashLoad().active)), 1);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        verifyPassword(hash, i === 0 ? 'correct horse battery' : `no-${i}`),
      ),
    );
    clearInterval(sampler);
    expect(peak).toBe(1);
    expect(results[0]).toEqual({ status: 'fulfilled', value: true });
    const refused = results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason);
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) {
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    }
    expect(passwordHashLoad()).toEqual({ active: 0, waiting: 0 });
  });

  it('callers within the wait get their turn', async () => {
    setPasswordHashLimits(2, 10_000);
    const hash = await hashPassword('pw-12345678');
    const results = await Promise.all(Array.from({ length: 6 }, () => verifyPassword(hash, 'pw-12345678')));
    expect(results).toEqual(Array(6).fill(true));
    expect(passwordHashLoad()).toEqual({ active: 0, waiting: 0 });
  });
});
