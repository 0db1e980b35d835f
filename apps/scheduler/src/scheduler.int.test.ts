import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteTenant, updateTenant } from '@opsi/core';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import {
  createTenantWithUser,
  createTestContext,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { reconcileSchedules, scheduleId } from './reconcile';

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

describe('scheduler reconciliation', () => {
  it('keeps one nightly scan (02:00) and one morning report (07:00) per tenant, in its timezone', async () => {
    const result = await reconcileSchedules(t.db, producer);
    expect(result.upserted).toHaveLength(4);
    const s = await schedulers();
    const scanB = s.get(scheduleId('nightly-scan', b.tenant.id))!;
    expect(scanB).toMatchObject({ name: 'scan', pattern: '0 2 * * *', tz: 'Europe/Berlin' });
    expect(localHour(scanB.next!, 'Europe/Berlin')).toBe(2);
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
    expect(localHour(scanA.next!, 'America/New_York')).toBe(2);
  });

  it('a new tenant gets its schedules on the next pass', async () => {
    const c = await createTenantWithUser(t);
    const result = await reconcileSchedules(t.db, producer);
    expect(result.upserted.sort()).toEqual(
      [scheduleId('morning-report', c.tenant.id), scheduleId('nightly-scan', c.tenant.id)].sort(),
    );
  });
});
