import { sql, type Database, type Db, type IncidentSeverity, type Transaction } from '@opsi/db';

/** Triage's SQL on the incidents it opens and correlates alerts with. */

type Tx = Db | Transaction<Database>;

/** Of `incidentIds`, the ones triage opened that are not resolved, oldest first. */
export function findOpenTriageIncidents(db: Tx, tenantId: string, incidentIds: string[]) {
  return db
    .selectFrom('incidents')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', incidentIds)
    .where('source', '=', 'triage')
    .where('status', '!=', 'resolved')
    .orderBy('created_at')
    .execute();
}

/** Open incidents alerted within `windowMs` of `at`, newest first. */
export function findOpenIncidentsNear(tx: Tx, tenantId: string, at: Date, windowMs: number) {
  return tx
    .selectFrom('incidents')
    .select(['id', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('status', '<>', 'resolved')
    .where(sql<boolean>`coalesce(last_alert_at, started_at) >= ${new Date(at.getTime() - windowMs)}`)
    .where(sql<boolean>`started_at <= ${new Date(at.getTime() + windowMs)}`)
    .orderBy('created_at', 'desc')
    .execute();
}

export function findIncidentMembers(tx: Tx, incidentIds: string[]) {
  return tx
    .selectFrom('incident_resources')
    .select(['incident_id', 'arn'])
    .where('incident_id', 'in', incidentIds)
    .execute();
}

/** The last resolved incident that had an alert of `fingerprint`. */
export function findLastResolvedIncidentOf(tx: Tx, tenantId: string, fingerprint: string) {
  return tx
    .selectFrom('incidents as i')
    .innerJoin('triage_events as t', 't.incident_id', 'i.id')
    .select(['i.id', 'i.title', 'i.resolved_at'])
    .where('i.tenant_id', '=', tenantId)
    .where('i.status', '=', 'resolved')
    .where('t.fingerprint', '=', fingerprint)
    .orderBy('i.started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function insertTriageIncident(
  tx: Tx,
  v: {
    tenantId: string;
    title: string;
    severity: IncidentSeverity;
    at: Date;
    recurrenceOf: string | null;
    description: string;
  },
) {
  return tx
    .insertInto('incidents')
    .values({
      tenant_id: v.tenantId,
      title: v.title,
      severity: v.severity,
      source: 'triage',
      created_by: 'triage',
      started_at: v.at,
      last_alert_at: v.at,
      recurrence_of: v.recurrenceOf,
      description: v.description,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export function resolveIncidentAt(tx: Tx, incidentId: string, resolvedAt: Date) {
  return tx
    .updateTable('incidents')
    .set({ status: 'resolved', resolved_at: resolvedAt })
    .where('id', '=', incidentId)
    .execute();
}

export function insertIncidentResource(tx: Tx, tenantId: string, incidentId: string, arn: string) {
  return tx
    .insertInto('incident_resources')
    .values({ tenant_id: tenantId, incident_id: incidentId, arn })
    .onConflict((oc) => oc.columns(['incident_id', 'arn']).doNothing())
    .execute();
}

/** Moves the incident's last alert to `at` when later. */
export function markIncidentAlerted(tx: Tx, incidentId: string, at: Date) {
  return tx
    .updateTable('incidents')
    .set({
      last_alert_at: sql<Date>`greatest(coalesce(last_alert_at, ${at}), ${at})`,
      updated_at: new Date(),
    })
    .where('id', '=', incidentId)
    .execute();
}
