import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import { DEMO_SIZES } from '@opsi/inventory';
import { createTenantWithUser, createTestContext, type TestContext } from '@opsi/test-support';
import { connectEnvironment, demoSpec } from './scans';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

describe('demo sizes', () => {
  it('connects every size, the whale (xlarge) included, and reads it back for the scan', async () => {
    expect(DEMO_SIZES).toEqual(['small', 'medium', 'large', 'xlarge']);
    for (const size of DEMO_SIZES) {
      const { tenant } = await createTenantWithUser(t);
      await connectEnvironment(t.db, tenant.id, { kind: 'demo', seed: 7, size });
      expect(await demoSpec(t.db, tenant.id)).toMatchObject({ seed: 7, size, day: 0, commands: [] });
    }
  });

  it('refuses a size the demo does not have, in the database too', async () => {
    const { tenant } = await createTenantWithUser(t);
    await connectEnvironment(t.db, tenant.id, { kind: 'demo', size: 'xlarge' });
    await expect(
      sql`update demo_environments set size = 'xxlarge' where tenant_id = ${tenant.id}`.execute(t.db),
    ).rejects.toThrow(/demo_environments_size_check/);
  });
});
