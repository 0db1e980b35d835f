import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEnvironment, requestScan } from '@opsi/core';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import {
  createTenantWithUser,
  createTestContext,
  startTestWorker,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';

let t: TestContext;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let producer: JobProducer;
let a: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  worker = await startTestWorker(t, { WORKER_QUEUES: ['pulse', 'triage'] });
  producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await producer?.close();
  await t?.close();
});

describe('a scan feeds triage', () => {
  it("the scan's alert events go through the triage queue: the storyline's incident is opened once", async () => {
    const scan = await requestScan(t.db, producer, a.tenant.id, 'test');
    let incidents: Array<{ status: string; recurrence_of: string | null }> = [];
    for (let i = 0; i < 1200 && incidents.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      incidents = await t.db
        .selectFrom('incidents')
        .select(['status', 'recurrence_of'])
        .where('tenant_id', '=', a.tenant.id)
        .orderBy('started_at')
        .execute();
    }
    expect(incidents.map((i) => i.status)).toEqual(['resolved', 'open']);
    expect(incidents[1]!.recurrence_of).not.toBeNull();
    const job = await producer.queue('triage').getJob(`scan-${scan.id}`);
    expect(job?.name).toBe('scan');
    for (let i = 0; i < 300 && !(await job!.isCompleted()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(
      job!.returnvalue ?? (await producer.queue('triage').getJob(`scan-${scan.id}`))?.returnvalue,
    ).toMatchObject({
      decided: 9,
    });
  });
});
