import {
  sql,
  type Db,
  type IncidentSeverity,
  type IncidentStatus,
  type Transaction,
  type Database,
} from '@opsi/db';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';

/** The incidents domain's SQL: each function takes the database or the caller's transaction first. */

type Tx = Transaction<Database> | Db;

const NODE_COLUMNS = [
  'r.id',
  'r.arn',
  'r.native_id',
  'r.type',
  'r.name',
  'r.account_id',
  'r.region',
] as const;

const INCIDENT_COLUMNS = [
  'i.id',
  'i.title',
  'i.severity',
  'i.status',
  'i.description',
  'i.created_at',
  'i.updated_at',
  'i.resolved_at',
  'i.started_at',
  'i.source',
  'i.created_by',
  'i.recurrence_of',
] as const;

const EVENT_COLUMNS = ['id', 'incident_id', 'kind', 'body', 'actor', 'created_at', 'data'] as const;

// ---- graph nodes and incidents

export function findNodesByArn(db: Tx, tenantId: string, arns: string[]) {
  return db
    .selectFrom('resources as r')
    .select(NODE_COLUMNS)
    .where('r.tenant_id', '=', tenantId)
    .where('r.arn', 'in', [...new Set(arns)])
    .where('r.deleted_at', 'is', null)
    .execute();
}

export function findIncidentResourceNodes(db: Tx, tenantId: string, ids: string[]) {
  return db
    .selectFrom('incident_resources as ir')
    .innerJoin('resources as r', (j) =>
      j.onRef('r.arn', '=', 'ir.arn').onRef('r.tenant_id', '=', 'ir.tenant_id'),
    )
    .select(['ir.incident_id', ...NODE_COLUMNS])
    .where('ir.tenant_id', '=', tenantId)
    .where('ir.incident_id', 'in', ids)
    .where('r.deleted_at', 'is', null)
    .orderBy('ir.added_at')
    .orderBy('r.arn')
    .execute();
}

export function findWarRoomsOfIncidents(db: Tx, tenantId: string, ids: string[]) {
  return db
    .selectFrom('war_rooms')
    .select(['id', 'incident_id', 'session_id'])
    .where('tenant_id', '=', tenantId)
    .where('incident_id', 'in', ids)
    .execute();
}

export function countAlertsOfIncidents(db: Tx, tenantId: string, ids: string[]) {
  return db
    .selectFrom('triage_events')
    .select(['incident_id', sql<number>`sum(count)::int`.as('n')])
    .where('tenant_id', '=', tenantId)
    .where('incident_id', 'in', ids)
    .groupBy('incident_id')
    .execute();
}

export function findIncidents(
  db: Tx,
  tenantId: string,
  f: {
    status?: IncidentStatus | undefined;
    severity?: IncidentSeverity | undefined;
    limit: number;
    offset: number;
  },
) {
  let q = db.selectFrom('incidents as i').select(INCIDENT_COLUMNS).where('i.tenant_id', '=', tenantId);
  if (f.status) q = q.where('i.status', '=', f.status);
  if (f.severity) q = q.where('i.severity', '=', f.severity);
  return q.orderBy('i.created_at', 'desc').orderBy('i.id', 'desc').limit(f.limit).offset(f.offset).execute();
}

export function findIncident(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('incidents as i')
    .select(INCIDENT_COLUMNS)
    .where('i.tenant_id', '=', tenantId)
    .where('i.id', '=', id)
    .executeTakeFirst();
}

/** An incident's id, or undefined when the tenant has none by that id. */
export function findIncidentId(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('incidents')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findIncidentHeadline(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('incidents')
    .select(['id', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The incident's id and title under its row lock (`for update`). */
export function lockIncidentHeadline(tx: Tx, tenantId: string, id: string) {
  return tx
    .selectFrom('incidents')
    .select(['id', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** The fields a patch may change, under the incident's row lock (`for update`). */
export function lockIncidentForPatch(tx: Tx, tenantId: string, id: string) {
  return tx
    .selectFrom('incidents')
    .select(['status', 'severity', 'title', 'description'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function findIncidentForNotification(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('incidents')
    .select(['id', 'title', 'severity', 'status', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function insertIncident(
  tx: Tx,
  v: {
    tenantId: string;
    title: string;
    severity: IncidentSeverity;
    description: string | null;
    createdBy: string;
  },
) {
  return tx
    .insertInto('incidents')
    .values({
      tenant_id: v.tenantId,
      title: v.title,
      severity: v.severity,
      description: v.description,
      created_by: v.createdBy,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export function updateIncident(tx: Tx, id: string, set: Record<string, unknown>) {
  return tx
    .updateTable('incidents')
    .set({ ...set, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

export function touchIncident(tx: Tx, id: string) {
  return tx.updateTable('incidents').set({ updated_at: new Date() }).where('id', '=', id).execute();
}

// ---- timeline

/** Takes the incident's row lock, so its events commit in id order. */
export function lockIncidentRow(tx: Tx, tenantId: string, incidentId: string) {
  return sql`select 1 from incidents where id = ${incidentId} and tenant_id = ${tenantId} for update`.execute(
    tx,
  );
}

/** Undefined when the (run, kind) event already exists. */
export function insertIncidentEvent(
  tx: Tx,
  v: {
    tenantId: string;
    incidentId: string;
    kind: string;
    body: string;
    actor: string;
    data: string;
    runId: string | null;
  },
) {
  return tx
    .insertInto('incident_events')
    .values({
      tenant_id: v.tenantId,
      incident_id: v.incidentId,
      kind: v.kind,
      body: v.body,
      actor: v.actor,
      data: v.data,
      run_id: v.runId,
    })
    .onConflict((oc) =>
      oc.columns(['incident_id', 'run_id', 'kind']).where('run_id', 'is not', null).doNothing(),
    )
    .returning([...EVENT_COLUMNS])
    .executeTakeFirst();
}

export function findIncidentEvents(
  db: Tx,
  tenantId: string,
  incidentId: string,
  afterId: number,
  limit: number,
) {
  return db
    .selectFrom('incident_events')
    .select([...EVENT_COLUMNS])
    .where('tenant_id', '=', tenantId)
    .where('incident_id', '=', incidentId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

// ---- alerts

export function findIncidentAlerts(db: Tx, tenantId: string, incidentId: string) {
  return db
    .selectFrom('triage_events')
    .select([
      'id',
      'fingerprint',
      'title',
      'severity',
      'source',
      'arn',
      'count',
      'first_at',
      'last_at',
      'action',
      'status',
    ])
    .where('tenant_id', '=', tenantId)
    .where('incident_id', '=', incidentId)
    .orderBy('first_at')
    .orderBy('id')
    .execute();
}

// ---- war rooms

export function findWarRoomIdOfIncident(tx: Tx, incidentId: string) {
  return tx.selectFrom('war_rooms').select('id').where('incident_id', '=', incidentId).executeTakeFirst();
}

export function insertWarRoomSession(
  tx: Tx,
  v: { id: string; tenantId: string; createdBy: string; name: string; incidentId: string },
) {
  return tx
    .insertInto('agent_sessions')
    .values({
      id: v.id,
      tenant_id: v.tenantId,
      created_by: v.createdBy,
      name: v.name,
      incident_id: v.incidentId,
    })
    .execute();
}

export function insertWarRoom(
  tx: Tx,
  v: { tenantId: string; incidentId: string; sessionId: string; createdBy: string },
) {
  return tx
    .insertInto('war_rooms')
    .values({
      tenant_id: v.tenantId,
      incident_id: v.incidentId,
      session_id: v.sessionId,
      created_by: v.createdBy,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export function insertWarRoomParticipant(tx: Tx, roomId: string, userId: string) {
  return tx
    .insertInto('war_room_participants')
    .values({ room_id: roomId, user_id: userId })
    .onConflict((oc) => oc.columns(['room_id', 'user_id']).doNothing())
    .execute();
}

export function findWarRoom(db: Tx, tenantId: string, roomId: string) {
  return db
    .selectFrom('war_rooms')
    .select(['id', 'incident_id', 'session_id', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', roomId)
    .executeTakeFirstOrThrow();
}

export function findWarRoomParticipants(db: Tx, roomId: string) {
  return db
    .selectFrom('war_room_participants as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['u.id as user_id', 'u.name'])
    .where('p.room_id', '=', roomId)
    .orderBy('p.joined_at')
    .orderBy('u.id')
    .execute();
}

// ---- the agent's incident tools

/** The tool's page of incidents and their total: the count first, then the rows, as two statements. */
export async function findIncidentsForTool(
  db: Db,
  tenantId: string,
  f: { status?: string | undefined; severity?: IncidentSeverity | undefined; limit: number },
) {
  let q = db
    .selectFrom('incidents')
    .select([
      'id',
      'title',
      'severity',
      'status',
      'source',
      'started_at',
      'created_at',
      'resolved_at',
      'recurrence_of',
    ])
    .where('tenant_id', '=', tenantId);
  if (f.status === 'active') q = q.where('status', '<>', 'resolved');
  else if (f.status) q = q.where('status', '=', f.status as IncidentStatus);
  if (f.severity) q = q.where('severity', '=', f.severity);
  const total = await q
    .clearSelect()
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
  return { total, rows };
}

export function findResourceNames(db: Db, tenantId: string, arns: string[]) {
  return db
    .selectFrom('resources')
    .select(['arn', 'name', 'type'])
    .where('tenant_id', '=', tenantId)
    .where('arn', 'in', arns)
    .execute();
}

export function findCloudTrailEventsOn(db: Db, tenantId: string, arns: string[], from: Date, to: Date) {
  return db
    .selectFrom('inventory_events')
    .select(['id', 'at', 'name', 'actor', 'source_ip', 'arns'])
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'cloudtrail')
    .where('at', '>=', from)
    .where('at', '<=', to)
    .where(sql<boolean>`arns && ${sql.val(arns)}::text[]`)
    .orderBy('at', 'desc')
    .limit(50)
    .execute();
}

export function findResourceHistoryOf(db: Db, tenantId: string, arns: string[], from: Date, to: Date) {
  return db
    .selectFrom('resource_history')
    .select(['arn', 'change', 'changed_fields', 'observed_at'])
    .where('tenant_id', '=', tenantId)
    .where('arn', 'in', arns)
    .where('observed_at', '>=', from)
    .where('observed_at', '<=', to)
    .orderBy('observed_at', 'desc')
    .limit(50)
    .execute();
}

/** Daily metrics of `arns` between two days (YYYY-MM-DD), both included. */
export function findDailyMetrics(db: Db, tenantId: string, arns: string[], fromDay: string, toDay: string) {
  return db
    .selectFrom('metrics_daily')
    .select(['arn', 'metric', sql<string>`day::text`.as('day'), 'avg', 'max'])
    .where('tenant_id', '=', tenantId)
    .where('arn', 'in', arns)
    .where(sql<boolean>`day between ${fromDay}::date and ${toDay}::date`)
    .orderBy('arn')
    .orderBy('metric')
    .orderBy('day')
    .execute();
}

export function findActiveFindingsOn(db: Db, tenantId: string, arns: string[]) {
  return db
    .selectFrom('finding_resources as fr')
    .innerJoin('findings as f', 'f.id', 'fr.finding_id')
    .leftJoin('resources as r', (j) =>
      j.onRef('r.arn', '=', 'fr.arn').onRef('r.tenant_id', '=', 'fr.tenant_id'),
    )
    .select(['f.id', 'f.title', 'f.severity', 'f.domain', 'fr.arn', 'r.name as resource_name'])
    .where('fr.tenant_id', '=', tenantId)
    .where('fr.arn', 'in', arns)
    .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
    .orderBy('f.severity_rank', 'desc')
    .orderBy('f.id')
    .limit(50)
    .execute();
}

/** Earlier incidents that it recurs, or that shared an alert fingerprint or a resource with it. */
export async function findSimilarIncidents(
  db: Db,
  tenantId: string,
  id: string,
  recurrenceOf: string | null,
  startedAt: Date,
) {
  return sql<{
    id: string;
    title: string;
    severity: string;
    status: string;
    started_at: Date;
    resolved_at: Date | null;
    shared: string;
  }>`
      select i.id, i.title, i.severity, i.status, i.started_at, i.resolved_at,
        case when i.id = ${recurrenceOf} then 'recurrence'
             when exists (select 1 from triage_events a join triage_events b on b.fingerprint = a.fingerprint and b.tenant_id = a.tenant_id
                          where a.incident_id = ${id} and b.incident_id = i.id) then 'fingerprint'
             else 'resource' end as shared
      from incidents i
      where i.tenant_id = ${tenantId} and i.id <> ${id} and i.started_at < ${startedAt}
        and (i.id = ${recurrenceOf}
          or exists (select 1 from triage_events a join triage_events b on b.fingerprint = a.fingerprint and b.tenant_id = a.tenant_id
                     where a.incident_id = ${id} and b.incident_id = i.id)
          or exists (select 1 from incident_resources x join incident_resources y on y.arn = x.arn
                     where x.incident_id = ${id} and y.incident_id = i.id))
      order by i.started_at desc limit 10`.execute(db);
}
