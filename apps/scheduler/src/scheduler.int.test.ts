import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTenant, deleteTenant, updateTenant } from '@opsi/core';
import { defaultRepeatStrategy, JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import {
  createTenantWithUser,
  createTestContext,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { NIGHT_WINDOW, dailyAt, nightlySecond, reconcileSchedules, scheduleId } from './reconcile';

let t: TestContext;
let producer: JobProducer;
let a: TestMember;
let b: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
  a = await createTenantWithUser(t);
  b = await createTenantWithUser(t);
  await updateTenant(t.db, b.tenant.slug, { timezone: 'Europe/Berlin' });
});
afterAll(async () => {
  await producer?.close();
  await t?.close();
});

async function schedulers() {
  const all = [
    ...(await producer.queue('pulse').getJobSchedulers(0, -1)),
    ...(await producer.queue('reports').getJobSchedulers(0, -1)),
  ];
  return new Map(all.map((s) => [s.key, s]));
}

/** The wall-clock hour of a timestamp in a timezone. */
function localHour(ms: number, timeZone: string): number {
  return Number(new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(ms));
}

/** The local date (YYYY-MM-DD) and second of the day of a timestamp in a timezone. */
function localTime(ms: number, timeZone: string): { date: string; second: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    second: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second),
  };
}

const inNightWindow = (second: number) =>
  second >= NIGHT_WINDOW.startSecond && second < NIGHT_WINDOW.startSecond + NIGHT_WINDOW.seconds;

describe('scheduler reconciliation', () => {
  it('keeps one nightly scan (its own second of 01:00-05:00) and one morning report (07:00) per tenant, in its timezone', async () => {
    const result = await reconcileSchedules(t.db, producer);
    expect(result.upserted).toHaveLength(4);
    const s = await schedulers();
    const scanB = s.get(scheduleId('nightly-scan', b.tenant.id))!;
    expect(scanB).toMatchObject({ name: 'scan', tz: 'Europe/Berlin' });
    const second = nightlySecond(b.tenant.id);
    expect(scanB.pattern).toBe(
      `${second % 60} ${Math.floor(second / 60) % 60} ${Math.floor(second / 3600)} * * *`,
    );
    expect(localTime(scanB.next!, 'Europe/Berlin').second).toBe(second);
    expect(inNightWindow(second)).toBe(true);
    const reportA = s.get(scheduleId('morning-report', a.tenant.id))!;
    expect(reportA).toMatchObject({ name: 'morning', pattern: '0 7 * * *', tz: 'UTC' });
    expect(localHour(reportA.next!, 'UTC')).toBe(7);
    expect(reportA.template?.data).toEqual({ tenant_id: a.tenant.id });
  });

  it('is idempotent: a second pass (or two at once) changes nothing', async () => {
    const [x, y] = await Promise.all([
      reconcileSchedules(t.db, producer),
      reconcileSchedules(t.db, producer),
    ]);
    expect(x.upserted).toEqual([]);
    expect(y.upserted).toEqual([]);
    expect((await schedulers()).size).toBe(4);
  });

  it('follows a changed timezone and a deleted tenant', async () => {
    await updateTenant(t.db, a.tenant.slug, { timezone: 'America/New_York' });
    await deleteTenant(t.db, b.tenant.slug);
    const result = await reconcileSchedules(t.db, producer);
    expect(result.upserted.sort()).toEqual(
      [scheduleId('morning-report', a.tenant.id), scheduleId('nightly-scan', a.tenant.id)].sort(),
    );
    expect(result.removed.sort()).toEqual(
      [scheduleId('morning-report', b.tenant.id), scheduleId('nightly-scan', b.tenant.id)].sort(),
    );
    const s = await schedulers();
    expect(s.size).toBe(2);
    const scanA = s.get(scheduleId('nightly-scan', a.tenant.id))!;
    expect(scanA.tz).toBe('America/New_York');
    expect(localTime(scanA.next!, 'America/New_York').second).toBe(nightlySecond(a.tenant.id));
  });

  it('a new tenant gets its schedules on the next pass', async () => {
    const c = await createTenantWithUser(t);
    const result = await reconcileSchedules(t.db, producer);
    expect(result.upserted.sort()).toEqual(
      [scheduleId('morning-report', c.tenant.id), scheduleId('nightly-scan', c.tenant.id)].sort(),
    );
  });
});

describe('the night window, on a simulated clock', () => {
  const ZONES = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Sydney',
    'Asia/Kolkata',
    'America/Santiago',
  ];

  it('spreads 10,000 tenants evenly over the window: every ten minutes within 30 % of their share', () => {
    const perTenMinutes = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const second = nightlySecond(crypto.randomUUID());
      expect(inNightWindow(second)).toBe(true);
      const bucket = Math.floor((second - NIGHT_WINDOW.startSecond) / 600);
      perTenMinutes.set(bucket, (perTenMinutes.get(bucket) ?? 0) + 1);
    }
    const share = 10_000 / (NIGHT_WINDOW.seconds / 600);
    expect(perTenMinutes.size).toBe(NIGHT_WINDOW.seconds / 600);
    // 417 expected per bucket, a standard deviation of about 20: 30 % is far outside chance.
    for (const n of perTenMinutes.values()) expect(Math.abs(n - share) / share).toBeLessThan(0.3);
  });

  /** Every run of a daily pattern from `first` for `days`: how many fall on each local date. */
  function nightsFrom(first: number, pattern: string, tz: string, days: number): Map<string, number> {
    const nights = new Map<string, number>();
    for (let next = first; next < first + days * 86_400_000 - 3_600_000;) {
      const local = localTime(next, tz);
      expect(inNightWindow(local.second), `${tz} ${pattern} ${new Date(next).toISOString()}`).toBe(true);
      nights.set(local.date, (nights.get(local.date) ?? 0) + 1);
      next = defaultRepeatStrategy(next, { pattern, tz })!;
    }
    return nights;
  }

  // The week around each daylight-saving change of 2026 in these zones (clocks change at 00:00-03:00
  // local in Europe, North America, Chile and Australia; India never changes).
  const CHANGE_WEEKS = ['03-05', '03-26', '04-02', '09-03', '10-01', '10-22', '10-29'].map((d) =>
    Date.parse(`2026-${d}T12:00:00Z`),
  );

  it('any second of the window runs once a night through every daylight-saving change', () => {
    // defaultRepeatStrategy is what BullMQ's workers run to schedule a job from the previous one.
    const seconds = [NIGHT_WINDOW.startSecond + NIGHT_WINDOW.seconds - 1];
    for (let s = NIGHT_WINDOW.startSecond; s < NIGHT_WINDOW.startSecond + NIGHT_WINDOW.seconds; s += 1800) {
      seconds.push(s);
    }
    for (const second of seconds) {
      for (const tz of ZONES) {
        for (const week of CHANGE_WEEKS) {
          const first = defaultRepeatStrategy(week, { pattern: dailyAt(second), tz })!;
          const nights = nightsFrom(first, dailyAt(second), tz, 7);
          expect([...nights.values()], `${tz} ${dailyAt(second)} ${new Date(week).toISOString()}`).toEqual(
            Array(7).fill(1),
          );
        }
      }
    }
  });

  it("each tenant's first scan is the next night's, computed from the (simulated) clock", async () => {
    // BullMQ computes a scheduler's first run from Date.now() in the process that upserts it.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Date.parse('2026-10-24T12:00:00Z'); // the day before Europe's autumn change
      vi.setSystemTime(now);
      const tenants = await Promise.all(
        ZONES.map((timezone, i) =>
          createTenant(t.db, { slug: `night-${i}-${Date.now() % 100000}`, timezone }),
        ),
      );
      await reconcileSchedules(t.db, producer);
      const s = await schedulers();
      for (const tenant of tenants) {
        const scan = s.get(scheduleId('nightly-scan', tenant.id))!;
        expect(scan.next! - now, tenant.timezone).toBeGreaterThan(0);
        expect(scan.next! - now, tenant.timezone).toBeLessThanOrEqual(36 * 3_600_000);
        expect(localTime(scan.next!, tenant.timezone).second).toBe(nightlySecond(tenant.id));
        const nights = nightsFrom(scan.next!, scan.pattern!, tenant.timezone, 7);
        expect([...nights.values()], tenant.timezone).toEqual(Array(7).fill(1));
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
