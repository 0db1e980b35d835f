import { sql, type Db } from '@opsi/db';

/** Columns of an entry as listed and verified. */
export const ENTRY_COLUMNS = [
  'id',
  'seq',
  'at',
  'actor',
  'action',
  'target_type',
  'target_id',
  'details',
  'prev_hash',
  'hash',
] as const;

/** Serializes appends to the tenant's chain until the transaction ends. */
export async function lockAuditChain(tx: Db, tenantId: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`opsi.audit:${tenantId}`}, 0))`.execute(tx);
}

/** The tenant's last entry (seq and hash), if any. */
export function findLastAuditEntry(tx: Db, tenantId: string) {
  return tx
    .selectFrom('audit_log')
    .select(['seq', 'hash'])
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface AuditEntryRow {
  tenant_id: string;
  seq: number;
  at: Date;
  actor: string;
  action: string;
  target_type: string;
  target_id: string | null;
  details: string;
  prev_hash: string;
  hash: string;
}

export function insertAuditEntry(tx: Db, row: AuditEntryRow) {
  return tx.insertInto('audit_log').values(row).returning(['id', 'seq', 'hash']).executeTakeFirstOrThrow();
}

/** The tenant's newest entries first. */
export function findAuditEntries(db: Db, tenantId: string, limit: number) {
  return db
    .selectFrom('audit_log')
    .select(ENTRY_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

/** One page of the tenant's chain in seq order, from fromSeq. */
export function findAuditPage(db: Db, tenantId: string, fromSeq: number, pageSize: number) {
  return db
    .selectFrom('audit_log')
    .select(['id', 'tenant_id', ...ENTRY_COLUMNS])
    .where('tenant_id', '=', tenantId)
    .where('seq', '>=', fromSeq)
    .orderBy('seq')
    .limit(pageSize)
    .execute();
}
