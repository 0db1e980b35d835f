import { collectWorld, createDemoConnector, PriceBook, syncInventory, type DemoSpec } from '@opsi/inventory';
import type { Db } from '@opsi/db';

/** The seeded demo spec the detector tests run on. */
export const DEMO_SPEC: DemoSpec = { seed: 42, size: 'small', epoch: '2026-11-01', day: 0, commands: [] };

/** Syncs the demo environment (its past and present) into a tenant, as a first scan would. */
export async function syncDemo(db: Db, tenantId: string, spec: DemoSpec = DEMO_SPEC) {
  const book = await PriceBook.load(db);
  const conn = await db
    .insertInto('cloud_connections')
    .values({ tenant_id: tenantId, kind: 'demo', config: '{}' })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ updated_at: new Date() }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const connector = createDemoConnector(spec, book);
  for (const inv of [...connector.backfill(), await connector.collect({})]) {
    await syncInventory(db, { tenantId, connectionId: conn.id, scanId: null }, inv, book);
  }
  return { book, connectionId: conn.id, world: collectWorld(spec, book) };
}
