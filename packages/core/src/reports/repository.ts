import { activeFindingStatuses, sql, type Db } from '@opsi/db';

/** A report's period: (from, to]. */
interface PeriodBounds {
  from: Date;
  to: Date;
}

/** A finding as the report lists it (`at` as the driver returns it). */
export interface FindingRow {
  finding_id: string;
  group_id: string;
  title: string;
  severity: string;
  domain: string;
  check_id: string;
  status: string;
  at: string;
}

// Sources of other areas

/** The table's name if it exists, else null. */
export async function findTableName(db: Db, name: string): Promise<string | null | undefined> {
  const r = await sql<{ t: string | null }>`select to_regclass(${name})::text as t`.execute(db);
  return r.rows[0]?.t;
}

export function findRealizedSavings(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<{ plan_id: string; finding_id: string; group_id: string; monthly: number }>`
    select plan_id::text, finding_id::text, group_id::text, monthly_usd::float8 as monthly
    from realized_savings
    where tenant_id = ${tenantId} and realized_at > ${p.from} and realized_at <= ${p.to}
    order by realized_at, plan_id`.execute(db);
}

/** Incidents opened by the period's end and not resolved before its start. */
export function findPeriodIncidents(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<{
    id: string;
    title: string;
    severity: string;
    status: string;
    created_at: Date;
    resolved_at: Date | null;
  }>`
    select id::text, title, severity, status, created_at, resolved_at from incidents
    where tenant_id = ${tenantId} and created_at <= ${p.to}
      and (status <> 'resolved' or resolved_at > ${p.from} or created_at > ${p.from})
    order by created_at, id`.execute(db);
}

// Findings

export function findDetectedFindings(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<FindingRow>`
    select f.id as finding_id, f.group_id, f.title, f.severity, f.domain, f.check_id, f.status, e.at
    from finding_group_events e join findings f on f.id = e.finding_id
    where e.tenant_id = ${tenantId} and e.kind = 'detected' and e.at > ${p.from} and e.at <= ${p.to}
    order by f.severity_rank desc, e.at, f.id`.execute(db);
}

export function findResolvedFindings(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<FindingRow & { resolved_by: string | null; savings_monthly: number }>`
    select f.id as finding_id, f.group_id, f.title, f.severity, f.domain, f.check_id, f.status,
           f.resolved_at as at, f.resolved_by, coalesce(r.savings, 0)::float8 as savings_monthly
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId} and f.status = 'resolved' and f.resolved_at > ${p.from} and f.resolved_at <= ${p.to}
    order by f.severity_rank desc, f.resolved_at, f.id`.execute(db);
}

export function findRegressedFindings(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<FindingRow>`
    select f.id as finding_id, f.group_id, f.title, f.severity, f.domain, f.check_id, f.status, e.at
    from (select distinct on (finding_id) finding_id, at from finding_group_events
          where tenant_id = ${tenantId} and kind = 'regressed' and at > ${p.from} and at <= ${p.to}
          order by finding_id, at desc) e
    join findings f on f.id = e.finding_id
    order by f.severity_rank desc, e.at, f.id`.execute(db);
}

/** The findings a scan detected (a detected event) at critical severity. */
export function findCriticalDetectedFindings(db: Db, tenantId: string, scanId: string) {
  return db
    .selectFrom('finding_group_events as e')
    .innerJoin('findings as f', 'f.id', 'e.finding_id')
    .select('f.id')
    .where('e.tenant_id', '=', tenantId)
    .where('e.kind', '=', 'detected')
    .where('f.scan_id', '=', scanId)
    .where('f.severity', '=', 'critical')
    .execute();
}

/** Active clusters, best to fix first, with what ranks them. */
export function findTopClusters(db: Db, tenantId: string, limit: number) {
  return sql<{
    group_id: string;
    finding_id: string;
    title: string;
    severity: string;
    domain: string;
    check_id: string;
    resources: number;
    duplicates: number;
    savings_monthly: number;
    regressed: boolean;
    detected_at: Date;
  }>`
    select f.group_id, f.id as finding_id, f.title, f.severity, f.domain, f.check_id, f.regressed, f.detected_at,
           (select count(*)::int from finding_resources fr where fr.finding_id = f.id) as resources,
           (select count(*)::int from findings d where d.group_id = f.group_id and d.status = 'confirmed' and d.check_id <> f.check_id) as duplicates,
           coalesce(r.savings, 0)::float8 as savings_monthly
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId} and f.status in ${activeFindingStatuses}
    order by f.severity_rank desc, f.regressed desc, savings_monthly desc, resources desc, f.detected_at, f.group_id
    limit ${limit}`.execute(db);
}

// Inventory drift

/** History rows of the period's snapshots (not a connection's first), at most `listLimit` per change. */
export function findDriftChanges(db: Db, tenantId: string, p: PeriodBounds, listLimit: number) {
  return sql<{
    change: 'created' | 'updated' | 'deleted';
    arn: string;
    type: string;
    changed_fields: string[];
    at: Date;
    resource_id: string | null;
    native_id: string | null;
    name: string | null;
    actor: string | null;
    n: number;
  }>`
    with changes as (
      select h.id, h.arn, h.type, h.change, h.changed_fields, h.observed_at, s.connection_id,
             row_number() over (partition by h.change order by h.observed_at, h.arn, h.id) as n
      from resource_history h join inventory_snapshots s on s.id = h.snapshot_id
      where h.tenant_id = ${tenantId} and s.tenant_id = ${tenantId}
        and s.taken_at > ${p.from} and s.taken_at <= ${p.to}
        and exists (select 1 from inventory_snapshots b where b.tenant_id = ${tenantId}
                    and b.connection_id = s.connection_id and b.observed_at < s.observed_at)
    )
    select c.change, c.arn, c.type, c.changed_fields, c.observed_at as at, c.n::int as n,
           r.id as resource_id, r.native_id, r.name,
           (select e.actor from inventory_events e
             where e.tenant_id = ${tenantId} and e.kind = 'cloudtrail' and e.arns @> array[c.arn]
               and e.at <= c.observed_at + interval '1 minute'
               and e.at > coalesce((select max(b.observed_at) from inventory_snapshots b
                                     where b.tenant_id = ${tenantId} and b.connection_id = c.connection_id
                                       and b.observed_at < c.observed_at), '-infinity') - interval '1 minute'
             order by e.at desc, e.id desc limit 1) as actor
    from changes c left join resources r on r.tenant_id = ${tenantId} and r.arn = c.arn
    where c.n <= ${listLimit}
    order by c.observed_at, c.arn, c.change`.execute(db);
}

/** How many history rows of each change the period's snapshots hold (not a connection's first). */
export function countDriftChanges(db: Db, tenantId: string, p: PeriodBounds) {
  return sql<{ change: string; n: number }>`
    select h.change, count(*)::int as n
    from resource_history h join inventory_snapshots s on s.id = h.snapshot_id
    where h.tenant_id = ${tenantId} and s.tenant_id = ${tenantId}
      and s.taken_at > ${p.from} and s.taken_at <= ${p.to}
      and exists (select 1 from inventory_snapshots b where b.tenant_id = ${tenantId}
                  and b.connection_id = s.connection_id and b.observed_at < s.observed_at)
    group by 1`.execute(db);
}

// Morning reports

const REPORT_COLUMNS = [
  'id',
  'generated_at',
  'period_from',
  'period_to',
  'requested_by',
  'headline',
  'sections',
] as const;

export type ReportRow = {
  id: string;
  generated_at: Date;
  period_from: Date;
  period_to: Date;
  requested_by: string;
  headline: string;
  sections: Record<string, unknown>;
};

export function findMorningReportByEnd(db: Db, tenantId: string, periodTo: Date) {
  return db
    .selectFrom('morning_reports')
    .select(REPORT_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('period_to', '=', periodTo)
    .executeTakeFirst();
}

/** The end of the tenant's last report before `periodTo`. */
export function findPreviousReportEnd(db: Db, tenantId: string, periodTo: Date) {
  return db
    .selectFrom('morning_reports')
    .select('period_to')
    .where('tenant_id', '=', tenantId)
    .where('period_to', '<', periodTo)
    .orderBy('period_to', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Writes a report unless one for the period exists (then undefined). */
export function insertMorningReport(
  tx: Db,
  row: {
    tenant_id: string;
    period_from: Date;
    period_to: Date;
    requested_by: string;
    headline: string;
    sections: string;
  },
) {
  return tx
    .insertInto('morning_reports')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning(REPORT_COLUMNS)
    .executeTakeFirst();
}

export async function insertReportNotification(tx: Db, tenantId: string, headline: string, reportId: string) {
  await tx
    .insertInto('notifications')
    .values({
      tenant_id: tenantId,
      kind: 'report.morning',
      title: 'Morning report',
      body: headline,
      report_id: reportId,
    })
    .execute();
}

export function findMorningReportByStart(db: Db, tenantId: string, periodFrom: Date) {
  return db
    .selectFrom('morning_reports')
    .select(REPORT_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('period_from', '=', periodFrom)
    .executeTakeFirstOrThrow();
}

/** The tenant's reports, newest first. */
export function findMorningReports(db: Db, tenantId: string, limit: number) {
  return db
    .selectFrom('morning_reports')
    .select(REPORT_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('period_to', 'desc')
    .limit(limit)
    .execute();
}

export function findLatestMorningReport(db: Db, tenantId: string) {
  return db
    .selectFrom('morning_reports')
    .select(REPORT_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('period_to', 'desc')
    .limit(1)
    .executeTakeFirst();
}
