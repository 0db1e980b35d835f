import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantWithUser, createTestContext, type TestContext } from '@opsi/test-support';
import { connectEnvironment, requestScan, runScan } from '../inventory';
import { CONDITIONS } from './conditions';
import { findGroupsInUse } from './live';

let t: TestContext;
let tenantId: string;

beforeAll(async () => {
  t = await createTestContext();
  const m = await createTenantWithUser(t);
  tenantId = m.tenant.id;
  await connectEnvironment(t.db, tenantId, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  const s = await requestScan(t.db, null, tenantId, 'test');
  await runScan(t.db, s.id);
}, 180_000);
afterAll(async () => {
  await t?.close();
});

describe('plan review conditions agree with the detectors', () => {
  it.each(CONDITIONS.map((c) => [c.checkId, c] as const))(
    '%s, asked of every live resource, flags exactly the resources of its open findings',
    async (_id, condition) => {
      const resources = await t.db
        .selectFrom('resources')
        .select(['arn', 'native_id', 'type', 'tags', 'attributes'])
        .where('tenant_id', '=', tenantId)
        .where('type', '=', condition.type)
        .where('deleted_at', 'is', null)
        .execute();
      const inUse = await findGroupsInUse(
        t.db,
        tenantId,
        resources.map((r) => r.native_id),
      );
      const flagged = resources
        .filter((r) =>
          condition.test(
            {
              type: r.type,
              attributes: r.attributes as Record<string, unknown>,
              tags: r.tags as Record<string, string>,
            },
            { sgInUse: inUse.has(r.native_id) },
          ),
        )
        .map((r) => r.arn)
        .sort();
      const found = await t.db
        .selectFrom('findings as f')
        .innerJoin('finding_resources as fr', 'fr.finding_id', 'f.id')
        .select('fr.arn')
        .distinct()
        .where('f.tenant_id', '=', tenantId)
        .where('f.check_id', '=', condition.checkId)
        .where('f.status', 'in', ['open', 'confirmed'])
        .where('fr.type', '=', condition.type)
        .execute();
      // The demo seeds every defect: an empty agreement would prove nothing.
      expect(found.length).toBeGreaterThan(0);
      expect(flagged).toEqual(found.map((r) => r.arn).sort());
    },
  );
});
