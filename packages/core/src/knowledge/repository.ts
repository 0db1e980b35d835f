import { sql, type Db, type LearningSource } from '@opsi/db';

/** Columns of a learning as returned. */
export const LEARNING_COLUMNS = [
  'id',
  'fact',
  'service',
  'status',
  'source',
  'created_by',
  'created_at',
  'last_used_at',
  'used_count',
] as const;

/** Columns of a tenant runbook as returned. */
const RUNBOOK_COLUMNS = [
  'id',
  'title',
  'service',
  'applies_to',
  'steps',
  'created_by',
  'updated_at',
] as const;

/** A tenant's learnings of one status, newest first, optionally narrowed by service and words. */
export function findLearnings(
  db: Db,
  tenantId: string,
  filter: {
    status: 'active' | 'archived';
    service?: string | undefined;
    query?: string | undefined;
    limit: number;
  },
) {
  let q = db
    .selectFrom('learnings')
    .select(LEARNING_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', filter.status);
  if (filter.service) q = q.where(sql<boolean>`lower(service) = lower(${filter.service})`);
  for (const word of (filter.query ?? '').split(/\s+/).filter(Boolean).slice(0, 8)) {
    const like = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) => eb.or([eb('fact', 'ilike', like), eb('service', 'ilike', like)]));
  }
  return q.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute();
}

export function insertLearning(
  tx: Db,
  row: {
    tenant_id: string;
    fact: string;
    service: string | null;
    source: LearningSource;
    created_by: string;
  },
) {
  return tx.insertInto('learnings').values(row).returning(LEARNING_COLUMNS).executeTakeFirstOrThrow();
}

/** A learning's status, locking its row for the transaction. */
export function findLearningStatusForUpdate(tx: Db, tenantId: string, id: string) {
  return tx
    .selectFrom('learnings')
    .select('status')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function updateLearningStatus(tx: Db, tenantId: string, id: string, status: 'active' | 'archived') {
  return tx
    .updateTable('learnings')
    .set({ status, archived_at: status === 'archived' ? new Date() : null })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(LEARNING_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Adds one use (last_used_at now, used_count + 1) to each learning; the result counts the rows. */
export function markLearningsUsedRows(db: Db, tenantId: string, ids: string[]) {
  return db
    .updateTable('learnings')
    .set((eb) => ({ last_used_at: new Date(), used_count: eb('used_count', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .executeTakeFirst();
}

/** A tenant's own runbooks, last written first. */
export function findTenantRunbooks(db: Db, tenantId: string) {
  return db
    .selectFrom('runbooks')
    .select(RUNBOOK_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('updated_at', 'desc')
    .orderBy('id')
    .execute();
}

export function insertRunbook(
  tx: Db,
  row: {
    tenant_id: string;
    title: string;
    service: string | null;
    applies_to: string;
    steps: string;
    created_by: string;
  },
) {
  return tx.insertInto('runbooks').values(row).returning(RUNBOOK_COLUMNS).executeTakeFirstOrThrow();
}

/** A finding's id and detector, if the tenant has it. */
export function findFindingCheck(db: Db, tenantId: string, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'check_id'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', findingId)
    .executeTakeFirst();
}

/** The distinct resource types of a finding with their resources' service tags. */
export function findFindingResourceServices(db: Db, findingId: string) {
  return sql<{ type: string; service: string | null }>`
    select distinct fr.type, r.tags->>'service' as service
    from finding_resources fr left join resources r on r.tenant_id = fr.tenant_id and r.arn = fr.arn
    where fr.finding_id = ${findingId}`.execute(db);
}
