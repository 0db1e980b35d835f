import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { collectWorld, createDemoConnector } from './demo/index';
import { PriceBook } from './pricing';
import type { MetricPoint, RowSource } from './model';
import { syncInventory } from './sync';

let t: TestContext;
let a: TestMember;
let b: TestMember;
let book: PriceBook;
const spec = { seed: 7, size: 'small' as const, epoch: '2026-11-01', day: 0, commands: [] };

async function connection(member: TestMember) {
  return t.db
    .insertInto('cloud_connections')
    .values({
      tenant_id: member.tenant.id,
      kind: 'demo',
      config: JSON.stringify({ seed: spec.seed, size: spec.size }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  b = await createTenantWithUser(t);
  book = await PriceBook.load(t.db);
});
afterAll(() => t?.close());

describe('inventory sync', () => {
  it('writes the backfilled past and the present as snapshots, with drift in the history', async () => {
    const conn = await connection(a);
    const connector = createDemoConnector(spec, book);
    const results = [];
    for (const inv of [...connector.backfill(), await connector.collect({})]) {
      results.push(
        await syncInventory(t.db, { tenantId: a.tenant.id, connectionId: conn.id, scanId: null }, inv, book),
      );
    }
    expect(results.map((r) => r.observedAt.toISOString().slice(0, 10))).toEqual([
      '2026-10-25',
      '2026-10-31',
      '2026-11-01',
    ]);
    expect(results[0]!.created).toBe(results[0]!.resources);
    const live = await t.db
      .selectFrom('resources')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('tenant_id', '=', a.tenant.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(live.n).toBe(results[2]!.resources);
    // The seeded drift, attributed: the volume deleted on day -5 and the instance resized on day -3.
    const history = await t.db
      .selectFrom('resource_history')
      .select(['arn', 'change', 'changed_fields', 'observed_at'])
      .where('tenant_id', '=', a.tenant.id)
      .where('change', '!=', 'created')
      .execute();
    const deletedVolume = history.find((h) => h.change === 'deleted' && h.arn.includes(':volume/'));
    expect(deletedVolume).toBeDefined();
    expect(
      history.some((h) => h.change === 'updated' && h.changed_fields.includes('attributes.instance_type')),
    ).toBe(true);
    expect(
      history.some(
        (h) => h.change === 'updated' && h.changed_fields.includes('attributes.backup_retention_period'),
      ),
    ).toBe(true);
    expect(history.some((h) => h.change === 'updated' && h.changed_fields.includes('attributes.rules'))).toBe(
      true,
    );
    const costed = await t.db
      .selectFrom('resources')
      .select(['arn', 'monthly_cost', 'console_url'])
      .where('tenant_id', '=', a.tenant.id)
      .where('type', '=', 'aws_ebs_volume')
      .execute();
    expect(costed.every((r) => r.monthly_cost !== null && r.console_url?.startsWith('https://'))).toBe(true);
  });

  it('a re-scan of an unchanged environment changes nothing', async () => {
    const conn = await t.db
      .selectFrom('cloud_connections')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .executeTakeFirstOrThrow();
    const historyBefore = await t.db
      .selectFrom('resource_history')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('tenant_id', '=', a.tenant.id)
      .executeTakeFirstOrThrow();
    const again = await syncInventory(
      t.db,
      { tenantId: a.tenant.id, connectionId: conn.id, scanId: null },
      collectWorld(spec, book),
      book,
    );
    expect({
      created: again.created,
      updated: again.updated,
      deleted: again.deleted,
      metrics: again.metrics,
      costs: again.costs,
      events: again.events,
    }).toEqual({ created: 0, updated: 0, deleted: 0, metrics: 0, costs: 0, events: 0 });
    const historyAfter = await t.db
      .selectFrom('resource_history')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('tenant_id', '=', a.tenant.id)
      .executeTakeFirstOrThrow();
    expect(historyAfter.n).toBe(historyBefore.n);
  });

  it('a sync that fails midway leaves the previous inventory as it was', async () => {
    const conn = await t.db
      .selectFrom('cloud_connections')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .executeTakeFirstOrThrow();
    const before = await t.db
      .selectFrom('resources')
      .select(['arn', 'content_hash', 'snapshot_id'])
      .where('tenant_id', '=', a.tenant.id)
      .orderBy('arn')
      .execute();
    const snapshots = await t.db
      .selectFrom('inventory_snapshots')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    const world = collectWorld({ ...spec, day: 3 }, book);
    // A metric for a day that does not exist fails the insert after resources were written.
    const inv = {
      ...world,
      metrics: [
        ...world.metrics,
        {
          arn: world.resources[0]!.arn,
          metric: 'CPUUtilization',
          day: 'not-a-day',
          avg: 1,
          max: 1,
          sum: null,
        },
      ],
    };
    await expect(
      syncInventory(t.db, { tenantId: a.tenant.id, connectionId: conn.id, scanId: null }, inv, book),
    ).rejects.toThrow();
    const after = await t.db
      .selectFrom('resources')
      .select(['arn', 'content_hash', 'snapshot_id'])
      .where('tenant_id', '=', a.tenant.id)
      .orderBy('arn')
      .execute();
    expect(after).toEqual(before);
    expect(
      await t.db
        .selectFrom('inventory_snapshots')
        .select('id')
        .where('tenant_id', '=', a.tenant.id)
        .execute(),
    ).toHaveLength(snapshots.length);
  });

  it('two tenants with the same seed keep separate inventories', async () => {
    const conn = await connection(b);
    await syncInventory(
      t.db,
      { tenantId: b.tenant.id, connectionId: conn.id, scanId: null },
      collectWorld({ ...spec, day: 2 }, book),
      book,
    );
    const count = (tenant: string) =>
      t.db
        .selectFrom('resources')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenant)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
    const [ca, cb] = await Promise.all([count(a.tenant.id), count(b.tenant.id)]);
    expect(ca.n).toBeGreaterThan(0);
    expect(cb.n).toBeGreaterThan(0);
    const aHistory = await t.db
      .selectFrom('resource_history')
      .select('snapshot_id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    const bSnapshots = new Set(
      (
        await t.db
          .selectFrom('inventory_snapshots')
          .select('id')
          .where('tenant_id', '=', b.tenant.id)
          .execute()
      ).map((s) => s.id),
    );
    expect(aHistory.some((h) => bSnapshots.has(h.snapshot_id))).toBe(false);
  });

  describe("a tenant's first sync (no conflict checks) and later ones (checked) write the same facts", () => {
    const metricRows = (tenant: string) =>
      t.db
        .selectFrom('metrics_daily')
        .select(['arn', 'metric', 'day', 'avg', 'max', 'sum'])
        .where('tenant_id', '=', tenant)
        .orderBy(['arn', 'metric', 'day'])
        .execute();

    it('the same inventory gives the same rows into an empty tenant as into one with rows already', async () => {
      const [c, d] = [await createTenantWithUser(t), await createTenantWithUser(t)];
      const inv = collectWorld(spec, book);
      const first = inv.metrics[Symbol.iterator]().next().value as MetricPoint;
      // d already holds one of the rows, with another value: a checked insert keeps it.
      await t.db
        .insertInto('metrics_daily')
        .values({
          tenant_id: d.tenant.id,
          arn: first.arn,
          metric: first.metric,
          day: first.day,
          avg: -1,
          max: -1,
          sum: null,
        })
        .execute();
      const rc = await syncInventory(
        t.db,
        { tenantId: c.tenant.id, connectionId: (await connection(c)).id, scanId: null },
        inv,
        book,
      );
      const rd = await syncInventory(
        t.db,
        { tenantId: d.tenant.id, connectionId: (await connection(d)).id, scanId: null },
        inv,
        book,
      );
      expect(rc.metrics).toBe(inv.metrics.length);
      expect(rd.metrics).toBe(inv.metrics.length - 1);
      const [cRows, dRows] = [await metricRows(c.tenant.id), await metricRows(d.tenant.id)];
      expect(cRows).toHaveLength(inv.metrics.length);
      const isFirst = (m: { arn: string; metric: string; day: string }) =>
        m.arn === first.arn && m.metric === first.metric && m.day === first.day;
      expect(dRows.find(isFirst)).toMatchObject({ avg: -1, max: -1 });
      expect(dRows.filter((m) => !isFirst(m))).toEqual(cRows.filter((m) => !isFirst(m)));
      const costs = (tenant: string) =>
        t.db
          .selectFrom('cost_daily')
          .select(['arn', 'day', 'product_code', 'usage_type', 'unblended_cost'])
          .where('tenant_id', '=', tenant)
          .orderBy(['arn', 'day', 'usage_type'])
          .execute();
      expect(await costs(d.tenant.id)).toEqual(await costs(c.tenant.id));
      expect(await costs(c.tenant.id)).toHaveLength(inv.costs.length);
    });

    it('a key repeated in a first sync keeps its first row, in ARN order or not', async () => {
      const inv = collectWorld(spec, book);
      const rows = [...inv.metrics];
      const first = rows[0]!;
      const repeat = { ...first, avg: 12345, max: 12345 };
      const inOrder: MetricPoint[] = [...rows, repeat]; // an array: the sync sorts it, the repeat joins its ARN's run
      const reversed = [...rows].reverse();
      const outOfOrder: RowSource<MetricPoint> = {
        length: rows.length + 1,
        [Symbol.iterator]: () => [...reversed.slice(0, -1), first, repeat][Symbol.iterator](),
      };
      for (const metrics of [inOrder, outOfOrder]) {
        const e = await createTenantWithUser(t);
        const result = await syncInventory(
          t.db,
          { tenantId: e.tenant.id, connectionId: (await connection(e)).id, scanId: null },
          { ...inv, metrics },
          book,
        );
        expect(result.metrics).toBe(rows.length);
        const stored = await metricRows(e.tenant.id);
        expect(stored).toHaveLength(rows.length);
        expect(
          stored.find((m) => m.arn === first.arn && m.metric === first.metric && m.day === first.day),
        ).toMatchObject({ avg: first.avg, max: first.max });
      }
    });
  });
});
