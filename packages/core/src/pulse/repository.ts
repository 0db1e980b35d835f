import {
  activeFindingStatuses,
  sql,
  type Database,
  type Db,
  type FindingStatus,
  type Transaction,
} from '@opsi/db';
import type { LifecycleStatus } from '@opsi/contracts';
import type { FindingDraft } from '@opsi/detectors';

type Tx = Db | Transaction<Database>;

const STATUS_ORDER =
  "case f.status when 'open' then 1 when 'acknowledged' then 2 when 'in_progress' then 3 when 'resolved' then 4 when 'dismissed' then 5 else 6 end";
const EFFORT_ORDER = "case r.effort when 'low' then 1 when 'medium' then 2 else 3 end";

export interface FindingListQuery {
  status?: FindingStatus | undefined;
  severity?: string | undefined;
  domain?: string | undefined;
  sortBy: 'severity' | 'date' | 'savings' | 'effort' | 'status';
  sortDir: 'asc' | 'desc';
  limit?: number;
}

export async function findFindingsList(db: Tx, tenantId: string, f: FindingListQuery) {
  const order = {
    severity: sql.raw('f.severity_rank'),
    date: sql.raw('f.detected_at'),
    savings: sql.raw('coalesce(r.savings, 0)'),
    effort: sql.raw(EFFORT_ORDER),
    status: sql.raw(STATUS_ORDER),
  }[f.sortBy];
  const dir = sql.raw(f.sortDir === 'asc' ? 'asc' : 'desc');
  const rows = await sql<Record<string, unknown>>`
    select f.id, f.title, f.severity, f.domain, f.status, f.check_id, f.group_id, f.regressed,
           coalesce(r.savings, 0)::float8 as savings, r.effort, f.detected_at, f.last_seen_at,
           (select count(*)::int from finding_resources fr where fr.finding_id = f.id) as resource_count
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId}
      and ${f.status ? sql`f.status = ${f.status}` : sql`f.status <> 'confirmed'`}
      and ${f.severity ? sql`f.severity = ${f.severity}` : sql`true`}
      and ${f.domain ? sql`f.domain = ${f.domain}` : sql`true`}
    order by ${order} ${dir}, f.severity_rank desc, f.detected_at desc, f.id
    limit ${f.limit ?? 1000}`.execute(db);
  return rows.rows;
}

export function findFinding(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('findings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findFindingId(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('findings')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findAuditSteps(db: Tx, tenantId: string, findingId: string) {
  return db
    .selectFrom('finding_audit_steps')
    .select([
      'seq',
      'step_kind',
      'tool_name',
      'title',
      'query_sql',
      'status',
      'error_message',
      'result_preview',
      'row_count',
      'duration_ms',
      'is_self_correction',
      'rerunnable',
      'executed_at',
    ])
    .where('tenant_id', '=', tenantId)
    .where('finding_id', '=', findingId)
    .orderBy('seq')
    .execute();
}

export function findFindingResources(db: Tx, findingId: string) {
  return db
    .selectFrom('finding_resources')
    .select([
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'measured_size',
      'size_unit',
      'monthly_cost',
      'console_url',
      'action_type',
      'savings',
    ])
    .where('finding_id', '=', findingId)
    .orderBy('arn')
    .execute();
}

export function findFindingResourceArns(db: Tx, findingId: string) {
  return db.selectFrom('finding_resources').select('arn').where('finding_id', '=', findingId).execute();
}

export function findRecommendationOfFinding(db: Tx, findingId: string) {
  return db
    .selectFrom('recommendations')
    .select(['id', 'rationale', 'action_type', 'savings', 'effort', 'priority'])
    .where('finding_id', '=', findingId)
    .executeTakeFirst();
}

export function findFindingGroup(db: Tx, groupId: string) {
  return db
    .selectFrom('finding_groups')
    .select(['id', 'fingerprint', 'highest_severity', 'created_at'])
    .where('id', '=', groupId)
    .executeTakeFirstOrThrow();
}

export function findGroupEvents(db: Tx, groupId: string) {
  return db
    .selectFrom('finding_group_events as e')
    .leftJoin('findings as g', 'g.id', 'e.finding_id')
    .select([
      'e.finding_id',
      'e.kind',
      'e.agent',
      'e.status',
      'e.at',
      'g.title',
      'g.sighting_count',
      'g.last_seen_at',
    ])
    .where('e.group_id', '=', groupId)
    .orderBy('e.at')
    .orderBy('e.id')
    .execute();
}

export function findGroupMembers(db: Tx, groupId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'status', 'producing_agent', 'detected_at', 'last_seen_at', 'sighting_count'])
    .where('group_id', '=', groupId)
    .orderBy('detected_at')
    .execute();
}

export function findAuditStep(db: Tx, tenantId: string, findingId: string, seq: number) {
  return db
    .selectFrom('finding_audit_steps')
    .select(['seq', 'query_sql', 'rerunnable', 'result_hash', 'row_count', 'step_kind'])
    .where('tenant_id', '=', tenantId)
    .where('finding_id', '=', findingId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

export function findFindingForUpdate(db: Tx, tenantId: string, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'status', 'group_id', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', findingId)
    .forUpdate()
    .executeTakeFirst();
}

export async function updateFindingStatus(
  db: Tx,
  findingId: string,
  status: LifecycleStatus,
  resolvedBy: string | null,
) {
  const resolved = resolvedBy !== null;
  await db
    .updateTable('findings')
    .set({
      status,
      updated_at: new Date(),
      resolved_at: resolved ? new Date() : null,
      resolved_by: resolvedBy,
    })
    .where('id', '=', findingId)
    .execute();
}

export async function markFindingResolved(db: Tx, findingId: string, resolvedBy: string) {
  await db
    .updateTable('findings')
    .set({
      status: 'resolved',
      resolved_at: new Date(),
      resolved_by: resolvedBy,
      updated_at: new Date(),
    })
    .where('id', '=', findingId)
    .execute();
}

export async function updateFindingDraft(
  db: Tx,
  findingId: string,
  draft: Pick<FindingDraft, 'title' | 'narrative' | 'severity'>,
  severityRank: number,
) {
  await db
    .updateTable('findings')
    .set({
      title: draft.title,
      narrative: draft.narrative,
      severity: draft.severity,
      severity_rank: severityRank,
      last_seen_at: new Date(),
      updated_at: new Date(),
    })
    .where('id', '=', findingId)
    .execute();
}

export async function markFindingReinvestigated(db: Tx, findingId: string) {
  await db
    .updateTable('findings')
    .set({ last_reinvestigated_at: new Date() })
    .where('id', '=', findingId)
    .execute();
}

export async function insertGroupEvent(
  db: Tx,
  event: {
    tenant_id: string;
    group_id: string;
    finding_id: string;
    kind: string;
    agent: string;
    status: string;
    detail: string;
  },
) {
  await db.insertInto('finding_group_events').values(event).execute();
}

export async function insertNotification(
  db: Tx,
  n: { tenant_id: string; kind: string; title: string; body: string; finding_id: string },
) {
  await db.insertInto('notifications').values(n).execute();
}

export async function findRecommendations(db: Tx, tenantId: string) {
  const rows = await sql<Record<string, unknown>>`
    select r.id, r.finding_id, f.title, f.domain, f.severity, f.status, r.rationale, r.action_type,
           r.savings::float8 as savings, r.effort, r.priority
    from recommendations r join findings f on f.id = r.finding_id
    where r.tenant_id = ${tenantId} and f.status in ${activeFindingStatuses}
    order by r.priority, r.savings desc, f.severity_rank desc, r.id`.execute(db);
  return rows.rows;
}

export function findRecommendationFinding(db: Tx, tenantId: string, recommendationId: string) {
  return db
    .selectFrom('recommendations')
    .select('finding_id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', recommendationId)
    .executeTakeFirst();
}

export async function findResolvedFindings(db: Tx, tenantId: string, domain?: string) {
  const rows = await sql<Record<string, unknown>>`
    select f.group_id, f.id as finding_id, f.title, f.domain, f.severity, f.check_id, f.resolved_at, f.resolved_by,
           coalesce(r.savings, 0)::float8 as savings,
           (select json_build_object('seq', s.seq, 'title', s.title, 'query_sql', s.query_sql, 'row_count', s.row_count, 'executed_at', s.executed_at)
              from finding_audit_steps s where s.finding_id = f.id and s.step_kind = 'query' order by s.seq desc limit 1) as evidence
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId} and f.status = 'resolved' ${domain ? sql`and f.domain = ${domain}` : sql``}
    order by f.resolved_at desc nulls last, f.id`.execute(db);
  return rows.rows;
}

export async function countActiveFindings(db: Tx, tenantId: string) {
  const counts = await sql<{ domain: string; severity: string; n: number }>`
    select domain, severity, count(*)::int as n from findings
    where tenant_id = ${tenantId} and status in ${activeFindingStatuses} group by 1, 2`.execute(db);
  return counts.rows;
}

export async function findInventoryCoverage(db: Tx, tenantId: string) {
  const coverage = await sql<{ resources: number; types: number; accounts: number; regions: number }>`
    select count(*)::int as resources, count(distinct type)::int as types, count(distinct account_id)::int as accounts,
           count(distinct region) filter (where region <> 'global')::int as regions
    from resources where tenant_id = ${tenantId} and deleted_at is null`.execute(db);
  return coverage.rows[0]!;
}

export function findLastScan(db: Tx, tenantId: string) {
  return db
    .selectFrom('inventory_scans')
    .select(['id', 'status', 'finished_at', 'created_at', 'partial', 'warnings'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findNotifications(
  db: Tx,
  tenantId: string,
  opts: { unread?: boolean | undefined; limit: number },
) {
  let q = db
    .selectFrom('notifications')
    .select(['id', 'kind', 'title', 'body', 'finding_id', 'report_id', 'created_at', 'read_at'])
    .where('tenant_id', '=', tenantId);
  if (opts.unread === true) q = q.where('read_at', 'is', null);
  if (opts.unread === false) q = q.where('read_at', 'is not', null);
  return q.orderBy('created_at', 'desc').orderBy('id').limit(opts.limit).execute();
}

export function markNotificationsRead(db: Tx, tenantId: string) {
  return db
    .updateTable('notifications')
    .set({ read_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
}
