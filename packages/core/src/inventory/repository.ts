import { sql, type Database, type Db, type Transaction } from '@opsi/db';
import type { Insertable, Updateable } from 'kysely';

type Tx = Db | Transaction<Database>;

const TERRAFORM_VIEW_COLUMNS = [
  'source',
  'config',
  'format',
  'format_version',
  'terraform_version',
  'serial',
  'lineage',
  'last_read_at',
  'last_modified',
  'last_error',
  'last_error_at',
  'managed_count',
  'resource_count',
  'tainted_count',
  'unsupported_by_type',
  'skipped_by_reason',
] as const;

const SCAN_SUMMARY = ['id', 'tenant_id', 'status', 'phase', 'created_at'] as const;

// Terraform states

export function findTerraformStates(db: Tx, tenantId: string) {
  return db
    .selectFrom('terraform_states')
    .select(TERRAFORM_VIEW_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('source')
    .execute();
}

export function findTerraformSources(db: Tx, connectionId: string) {
  return db
    .selectFrom('terraform_states')
    .select(['id', 'source', 'config'])
    .where('connection_id', '=', connectionId)
    .orderBy('created_at')
    .orderBy('source')
    .execute();
}

export async function updateTerraformStateRead(
  db: Tx,
  connectionId: string,
  source: string,
  columns: Updateable<Database['terraform_states']>,
) {
  await db
    .updateTable('terraform_states')
    .set(columns)
    .where('connection_id', '=', connectionId)
    .where('source', '=', source)
    .execute();
}

export async function markTerraformStateFailed(
  db: Tx,
  connectionId: string,
  source: string,
  message: string,
) {
  await db
    .updateTable('terraform_states')
    .set({ last_error: message, last_error_at: new Date(), updated_at: new Date() })
    .where('connection_id', '=', connectionId)
    .where('source', '=', source)
    .execute();
}

export function deleteTerraformState(db: Tx, tenantId: string, source: string) {
  return db
    .deleteFrom('terraform_states')
    .where('tenant_id', '=', tenantId)
    .where('source', '=', source)
    .returning('source')
    .executeTakeFirst();
}

export async function deleteTerraformStatesOfConnection(db: Tx, connectionId: string) {
  await db.deleteFrom('terraform_states').where('connection_id', '=', connectionId).execute();
}

export async function upsertTerraformState(
  db: Tx,
  values: Insertable<Database['terraform_states']>,
  onConflictSet: Updateable<Database['terraform_states']>,
) {
  await db
    .insertInto('terraform_states')
    .values(values)
    .onConflict((oc) => oc.columns(['tenant_id', 'source']).doUpdateSet(onConflictSet))
    .execute();
}

// Connections and demo environments

export function findConnectionForUpdate(db: Tx, tenantId: string) {
  return db
    .selectFrom('cloud_connections')
    .select(['id', 'kind'])
    .where('tenant_id', '=', tenantId)
    .forUpdate()
    .executeTakeFirst();
}

export function upsertConnection(
  db: Tx,
  tenantId: string,
  kind: Insertable<Database['cloud_connections']>['kind'],
  config: string,
) {
  return db
    .insertInto('cloud_connections')
    .values({ tenant_id: tenantId, kind, config })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ kind, config, updated_at: new Date() }))
    .returning(['id', 'tenant_id', 'kind', 'config', 'created_at', 'updated_at'])
    .executeTakeFirstOrThrow();
}

export async function upsertDemoEnvironment(db: Tx, values: Insertable<Database['demo_environments']>) {
  await db
    .insertInto('demo_environments')
    .values(values)
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet({
        seed: values.seed,
        size: values.size,
        epoch: values.epoch,
        day: 0,
        commands: '[]',
        updated_at: new Date(),
      }),
    )
    .execute();
}

export function findDemoEnvironment(db: Tx, tenantId: string, forUpdate: boolean) {
  let q = db
    .selectFrom('demo_environments')
    .select(['seed', 'size', 'epoch', 'day', 'commands'])
    .where('tenant_id', '=', tenantId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateDemoCommands(db: Tx, tenantId: string, commands: string) {
  await db
    .updateTable('demo_environments')
    .set({ commands, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .execute();
}

export function advanceDemoDays(db: Tx, tenantId: string, days: number) {
  return db
    .updateTable('demo_environments')
    .set((eb) => ({ day: eb('day', '+', days), updated_at: new Date() }))
    .where('tenant_id', '=', tenantId)
    .returning(['seed', 'size', 'epoch', 'day'])
    .executeTakeFirst();
}

export function findConnectionOfTenant(db: Tx, tenantId: string, forUpdate: boolean) {
  let q = db.selectFrom('cloud_connections').select('id').where('tenant_id', '=', tenantId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export function findConnection(db: Tx, connectionId: string) {
  return db
    .selectFrom('cloud_connections')
    .select(['id', 'kind', 'config'])
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
}

export async function lockConnection(db: Tx, connectionId: string) {
  await sql`select 1 from cloud_connections where id = ${connectionId} for update`.execute(db);
}

// Scans

export function findActiveScan(db: Tx, tenantId: string, runningSince: Date) {
  return db
    .selectFrom('inventory_scans')
    .select(SCAN_SUMMARY)
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'queued'),
        eb.and([eb('status', '=', 'running'), eb('started_at', '>', runningSince)]),
      ]),
    )
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function insertScan(db: Tx, tenantId: string, connectionId: string, requestedBy: string) {
  return db
    .insertInto('inventory_scans')
    .values({ tenant_id: tenantId, connection_id: connectionId, requested_by: requestedBy })
    .returning(SCAN_SUMMARY)
    .executeTakeFirstOrThrow();
}

export function findScan(db: Tx, tenantId: string, scanId: string) {
  return db
    .selectFrom('inventory_scans')
    .select([
      'id',
      'tenant_id',
      'status',
      'phase',
      'counts',
      'error',
      'partial',
      'warnings',
      'snapshot_id',
      'created_at',
      'started_at',
      'finished_at',
    ])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', scanId)
    .executeTakeFirst();
}

export function findScanById(db: Tx, scanId: string) {
  return db.selectFrom('inventory_scans').selectAll().where('id', '=', scanId).executeTakeFirst();
}

export function findOtherRunningScan(db: Tx, tenantId: string, scanId: string, runningSince: Date) {
  return db
    .selectFrom('inventory_scans')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'running')
    .where('id', '!=', scanId)
    .where('started_at', '>', runningSince) // a scan dead for an hour no longer blocks
    .executeTakeFirst();
}

export async function markScanRunning(db: Tx, scanId: string) {
  await db
    .updateTable('inventory_scans')
    .set({
      status: 'running',
      phase: 'collecting',
      started_at: new Date(),
      error: null,
      partial: false,
      warnings: '[]',
    })
    .where('id', '=', scanId)
    .execute();
}

export async function updateScanProgress(db: Tx, scanId: string, phase: string, counts: string) {
  await db.updateTable('inventory_scans').set({ phase, counts }).where('id', '=', scanId).execute();
}

export async function hasSnapshot(db: Tx, tenantId: string) {
  return !!(await db
    .selectFrom('inventory_snapshots')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .limit(1)
    .executeTakeFirst());
}

export function markScanCompleted(
  db: Tx,
  scanId: string,
  done: { counts: string; partial: boolean; warnings: string; snapshot_id: string },
) {
  return db
    .updateTable('inventory_scans')
    .set({
      status: 'completed',
      phase: 'done',
      counts: done.counts,
      partial: done.partial,
      warnings: done.warnings,
      snapshot_id: done.snapshot_id,
      finished_at: new Date(),
    })
    .where('id', '=', scanId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function markScanFailed(db: Tx, scanId: string, error: string) {
  await db
    .updateTable('inventory_scans')
    .set({ status: 'failed', phase: 'failed', error, finished_at: new Date() })
    .where('id', '=', scanId)
    .execute();
}
