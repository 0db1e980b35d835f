import { collectWorld, createDemoConnector, PriceBook, syncInventory, type DemoSpec } from '@opsi/inventory';
import type { Db } from '@opsi/db';

/** The seeded demo the evaluation set is written against: seed 42, small, epoch 2026-11-01, day 0. */
export const EVAL_SPEC: DemoSpec = { seed: 42, size: 'small', epoch: '2026-11-01', day: 0, commands: [] };

/**
 * Syncs the demo environment (its backfilled past and its present) into a tenant, as a first scan
 * would: the same steps as syncDemo in @opsi/detectors' tests, which that package does not export.
 */
export async function syncDemo(db: Db, tenantId: string, spec: DemoSpec = EVAL_SPEC) {
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
