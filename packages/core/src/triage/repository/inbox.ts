import { sql, type Database, type Db, type TriageAction, type Transaction } from '@opsi/db';

/** Triage's SQL on its inbox (posted alerts, their batches and decisions). */

type Tx = Db | Transaction<Database>;

export function insertInboxAlerts(db: Tx, tenantId: string, batchId: string, alerts: unknown[]) {
  return db
    .insertInto('triage_inbox')
    .values(alerts.map((a) => ({ tenant_id: tenantId, batch_id: batchId, alert: JSON.stringify(a) })))
    .returning('id')
    .execute();
}

/**
 * In ONE statement: a batch's undecided alerts (of `inboxIds`, when given), the tenant's enabled rules
 * and the latest event of each of the batch's fingerprints.
 */
export async function readBatchState<Alert, Rule, Latest>(
  db: Tx,
  tenantId: string,
  batchId: string,
  inboxIds?: number[],
) {
  const ofIds = inboxIds?.length ? sql`and id in (${sql.join(inboxIds)})` : sql``;
  const { rows } = await sql<{
    inbox: Array<{ id: number; alert: Alert }>;
    rules: Rule[];
    latest: Latest[];
  }>`
    with b as (
      select id, alert from triage_inbox
      where tenant_id = ${tenantId} and batch_id = ${batchId} and processed_at is null ${ofIds})
    select
      (select coalesce(json_agg(json_build_object('id', id, 'alert', alert) order by id), '[]') from b) as inbox,
      (select coalesce(json_agg(json_build_object('id', id, 'name', name, 'kind', kind, 'match', match,
          'action', action, 'enabled', enabled) order by created_at, id), '[]')
        from triage_rules where tenant_id = ${tenantId} and enabled) as rules,
      (select coalesce(json_agg(json_build_object('id', id, 'fingerprint', fingerprint,
          'incident_id', incident_id, 'first_at', first_at, 'last_at', last_at)), '[]')
        from (select distinct on (fingerprint) id, fingerprint, incident_id, first_at, last_at
          from triage_events
          where tenant_id = ${tenantId} and fingerprint in (select alert->>'fingerprint' from b)
          order by fingerprint, last_at desc) e) as latest`.execute(db);
  return rows[0]!;
}

/** The decided rows of a batch with their events' incidents, in the order its alerts came. */
export function findBatchDecisions(db: Tx, tenantId: string, batchId: string) {
  return db
    .selectFrom('triage_inbox as b')
    .leftJoin('triage_events as e', 'e.id', 'b.event_id')
    .select(['b.id', 'b.event_id', 'b.action', 'e.incident_id'])
    .where('b.tenant_id', '=', tenantId)
    .where('b.batch_id', '=', batchId)
    .where('b.processed_at', 'is not', null)
    .orderBy('b.id')
    .execute();
}

/** The decision an inbox row holds, under its row lock (`for update of b`). */
export function lockInboxDecision(tx: Tx, tenantId: string, inboxId: number) {
  return tx
    .selectFrom('triage_inbox as b')
    .leftJoin('triage_events as e', 'e.id', 'b.event_id')
    .select(['b.processed_at', 'b.event_id', 'b.action', 'e.incident_id', 'e.first_at', 'e.last_at'])
    .where('b.id', '=', inboxId)
    .where('b.tenant_id', '=', tenantId)
    .forUpdate('b')
    .executeTakeFirst();
}

export function markInboxDecided(tx: Tx, inboxId: number, eventId: number, action: TriageAction) {
  return tx
    .updateTable('triage_inbox')
    .set({ event_id: eventId, action, processed_at: new Date() })
    .where('id', '=', inboxId)
    .execute();
}

export function insertTriageRef(tx: Tx, tenantId: string, ref: string, eventId: number) {
  return tx.insertInto('triage_refs').values({ tenant_id: tenantId, ref, event_id: eventId }).execute();
}

/** The inventory's alert events not triaged yet, oldest first (at most 10,000). */
export function findUntriagedInventoryAlerts(db: Tx, tenantId: string) {
  return db
    .selectFrom('inventory_events as e')
    .select(['e.id', 'e.name', 'e.at', 'e.fingerprint', 'e.severity', 'e.service', 'e.arns', 'e.payload'])
    .where('e.tenant_id', '=', tenantId)
    .where('e.kind', '=', 'alert')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('triage_refs as r')
            .select('r.ref')
            .whereRef('r.tenant_id', '=', 'e.tenant_id')
            .where('r.ref', '=', sql<string>`'inventory:' || e.id`),
        ),
      ),
    )
    .orderBy('e.at')
    .orderBy('e.id')
    .limit(10_000)
    .execute();
}
