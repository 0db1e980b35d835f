import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDemo, connectEnvironment, execDemoCommand, getScan, requestScan } from '@opsi/core';
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

async function waitFor(scanId: string) {
  for (let i = 0; i < 600; i++) {
    const scan = (await getScan(t.db, a.tenant.id, scanId))!;
    if (scan.status === 'completed' || scan.status === 'failed') return scan;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`scan ${scanId} did not finish`);
}

beforeAll(async () => {
  t = await createTestContext();
  // Two scans at once are possible in this pool, so the per-tenant exclusion is what keeps them apart.
  worker = await startTestWorker(t, { WORKER_QUEUES: ['pulse'], WORKER_CONCURRENCY_PULSE: 2 });
  producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 11, size: 'small', epoch: '2026-11-01' });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await producer?.close();
  await t?.close();
});

describe('pulse.scan through the queue', () => {
  it('syncs the demo environment; the first scan records its past too', async () => {
    const scan = await waitFor((await requestScan(t.db, producer, a.tenant.id, 'test')).id);
    expect(scan.status).toBe('completed');
    expect(scan.phase).toBe('done');
    expect(scan.counts.resources).toBeGreaterThan(200);
    expect(scan.snapshot_id).toBeTruthy();
    const snapshots = await t.db
      .selectFrom('inventory_snapshots')
      .select('observed_at')
      .where('tenant_id', '=', a.tenant.id)
      .orderBy('observed_at')
      .execute();
    expect(snapshots.map((s) => s.observed_at.toISOString().slice(0, 10))).toEqual([
      '2026-10-25',
      '2026-10-31',
      '2026-11-01',
    ]);
  });

  it('two scans of one tenant never run at once, and both complete', async () => {
    const [x, y] = await Promise.all([
      requestScan(t.db, producer, a.tenant.id, 'test'),
      requestScan(t.db, producer, a.tenant.id, 'test'),
    ]);
    const [sx, sy] = await Promise.all([waitFor(x.id), waitFor(y.id)]);
    expect([sx.status, sy.status]).toEqual(['completed', 'completed']);
    const [first, second] = [sx, sy].sort((p, q) => p.started_at!.getTime() - q.started_at!.getTime());
    expect(second!.started_at!.getTime()).toBeGreaterThanOrEqual(first!.finished_at!.getTime());
    // Nothing changed in the environment: neither scan found anything new.
    expect([
      sx.counts.created,
      sx.counts.updated,
      sx.counts.deleted,
      sy.counts.created,
      sy.counts.updated,
      sy.counts.deleted,
    ]).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('a fix applied with demo exec shows in the next scan’s history; so does advancing time', async () => {
    const volume = await t.db
      .selectFrom('resources')
      .select(['arn', 'native_id'])
      .where('tenant_id', '=', a.tenant.id)
      .where('type', '=', 'aws_ebs_volume')
      .where('deleted_at', 'is', null)
      .where((eb) => eb(eb.fn('jsonb_array_length', [eb.ref('attributes', '->').key('attachments')]), '=', 0))
      .where(({ eb, ref }) => eb(ref('attributes', '->>').key('volume_type'), '=', 'io1'))
      .executeTakeFirstOrThrow();
    await execDemoCommand(
      t.db,
      a.tenant.id,
      `aws ec2 modify-volume --volume-id ${volume.native_id} --volume-type gp3 --iops 4000`,
    );
    const scan = await waitFor((await requestScan(t.db, producer, a.tenant.id, 'test')).id);
    expect(scan.counts).toMatchObject({ updated: 1, created: 0, deleted: 0 });
    const history = await t.db
      .selectFrom('resource_history')
      .select(['change', 'changed_fields'])
      .where('snapshot_id', '=', scan.snapshot_id!)
      .execute();
    // It had 4000 IOPS already: the type and the throughput change.
    expect(history).toEqual([
      { change: 'updated', changed_fields: ['attributes.throughput', 'attributes.volume_type'] },
    ]);
    const row = await t.db
      .selectFrom('resources')
      .select('monthly_cost')
      .where('arn', '=', volume.arn)
      .where('tenant_id', '=', a.tenant.id)
      .executeTakeFirstOrThrow();
    expect(row.monthly_cost).toBe(45); // 500 GB × $0.08 + 1000 IOPS above 3000 × $0.005

    await advanceDemo(t.db, a.tenant.id, 2);
    const later = await waitFor((await requestScan(t.db, producer, a.tenant.id, 'test')).id);
    expect(later.counts.created).toBeGreaterThan(0); // instances launched by autoscaling, backup snapshots
    expect(later.counts.deleted).toBeGreaterThan(0);
    expect(later.counts.metrics).toBeGreaterThan(0); // two more days of metrics
  });

  it('a scheduled scan (no scan id) records its own scan row', async () => {
    const before = await t.db
      .selectFrom('inventory_scans')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    await producer.enqueue('pulse', 'scan', { tenant_id: a.tenant.id });
    for (let i = 0; i < 600; i++) {
      const rows = await t.db
        .selectFrom('inventory_scans')
        .select(['id', 'status', 'requested_by'])
        .where('tenant_id', '=', a.tenant.id)
        .execute();
      const fresh = rows.find((r) => !before.some((b) => b.id === r.id));
      if (fresh?.status === 'completed') {
        expect(fresh.requested_by).toBe('schedule');
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the scheduled scan did not complete');
  });
});
