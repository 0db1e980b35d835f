import { activeFindingStatuses, sql, type Database, type Db, type Transaction } from '@opsi/db';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';
import { FACTS } from './facts';

type Tx = Db | Transaction<Database>;

const ACTIVE = ACTIVE_FINDING_STATUSES;

export function findOpenFindingResources(db: Tx, tenantId: string) {
  return db
    .selectFrom('finding_resources as fr')
    .innerJoin('findings as f', 'f.id', 'fr.finding_id')
    .select(['f.id', 'fr.arn', 'f.check_id', 'f.severity', 'f.domain', 'f.title'])
    .where('fr.tenant_id', '=', tenantId)
    .where('f.tenant_id', '=', tenantId)
    .where('f.status', 'in', ACTIVE)
    .orderBy('f.severity_rank', 'desc')
    .orderBy('f.id')
    .execute();
}

export function findLastCompletedScan(db: Tx, tenantId: string) {
  return db
    .selectFrom('inventory_scans')
    .select('finished_at')
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'completed')
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function searchResources(
  db: Tx,
  tenantId: string,
  o: { q: string; type?: string | undefined; limit: number },
  pattern: string,
  isUuid: boolean,
) {
  const rows = await sql<{
    id: string;
    arn: string;
    native_id: string;
    type: string;
    name: string | null;
    account_id: string;
    region: string;
    open_findings: number;
  }>`
    with hits as (
      select r.id, r.tenant_id, r.arn, r.native_id, r.type, r.name, r.account_id, r.region,
        (lower(r.native_id) = ${o.q.toLowerCase()} or lower(coalesce(r.name, '')) = ${o.q.toLowerCase()} or r.arn = ${o.q}) as exact
      from resources r
      where r.tenant_id = ${tenantId} and r.deleted_at is null
        and (${isUuid ? sql`r.id = ${o.q}::uuid or ` : sql``}
             lower(r.arn || ' ' || r.native_id || ' ' || coalesce(r.name, '') || ' ' || r.tags::text) like ${pattern})
        ${o.type ? sql`and r.type = ${o.type}` : sql``}
      order by exact desc, r.name nulls last, r.arn
      limit ${o.limit}
    )
    -- open findings counted for the page only, not for every match
    select h.id, h.arn, h.native_id, h.type, h.name, h.account_id, h.region,
      (select count(distinct fr.finding_id)::int from finding_resources fr join findings f on f.id = fr.finding_id
        where fr.tenant_id = h.tenant_id and fr.arn = h.arn and f.status in ${activeFindingStatuses}) as open_findings
    from hits h order by h.exact desc, h.name nulls last, h.arn`.execute(db);
  return rows.rows;
}

export function findLatestSnapshot(db: Tx, tenantId: string) {
  return db
    .selectFrom('inventory_snapshots')
    .select(['id', 'observed_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('observed_at', 'desc')
    .orderBy('taken_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The projection of a resource's attributes the graph keeps (FACTS; `factsOf` makes the same in code). */
const factsSql = sql.raw(
  `case type ${Object.entries(FACTS)
    .map(
      ([type, keys]) =>
        `when '${type}' then jsonb_build_object(${keys.map((k) => `'${k}', attributes->'${k}'`).join(', ')})`,
    )
    .join(' ')} else null end`,
);

export function findGraphResources(db: Tx, tenantId: string) {
  return sql<{
    id: string;
    arn: string;
    native_id: string;
    type: string;
    name: string | null;
    account_id: string;
    region: string;
    availability_zone: string | null;
    service: string | null;
    classification: string | null;
    facts: Record<string, unknown> | null;
  }>`select id, arn, native_id, type, name, account_id, region, availability_zone,
         tags->>'service' as service, tags->>'DataClassification' as classification, ${factsSql} as facts
       from resources where tenant_id = ${tenantId} and deleted_at is null order by arn`.execute(db);
}

export function findGraphEdges(db: Tx, tenantId: string) {
  return sql<{ from_arn: string; to_arn: string; kind: string; source: string; confidence: number }>`
      select from_arn, to_arn, kind, source, confidence from resource_edges
      where tenant_id = ${tenantId} order by from_arn, to_arn, kind`.execute(db);
}

export function insertResilienceRun(
  db: Tx,
  tenantId: string,
  snapshotId: string | null,
  scanId: string | null,
) {
  return db
    .insertInto('resilience_runs')
    .values({ tenant_id: tenantId, snapshot_id: snapshotId, scan_id: scanId, status: 'computing' })
    .returning(['id', 'started_at'])
    .executeTakeFirstOrThrow();
}

export function markResilienceRunReady(
  db: Tx,
  runId: string,
  r: { scenarios: number; findings: string; risks: string; stats: string },
) {
  return db
    .updateTable('resilience_runs')
    .set({
      status: 'ready',
      finished_at: new Date(),
      scenarios: r.scenarios,
      findings: r.findings,
      risks: r.risks,
      stats: r.stats,
    })
    .where('id', '=', runId)
    .returning(['id', 'status', 'scenarios', 'finished_at'])
    .executeTakeFirstOrThrow();
}

/** Deletes the tenant's runs started before `before`, except its last five. */
export async function deleteOldResilienceRuns(db: Tx, tenantId: string, before: Date) {
  await db
    .deleteFrom('resilience_runs')
    .where('tenant_id', '=', tenantId)
    .where('started_at', '<', before)
    .where(
      'id',
      'not in',
      db
        .selectFrom('resilience_runs')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .orderBy('started_at', 'desc')
        .limit(5),
    )
    .execute();
}

export async function markResilienceRunFailed(db: Tx, runId: string, error: string) {
  await db
    .updateTable('resilience_runs')
    .set({ status: 'failed', finished_at: new Date(), error })
    .where('id', '=', runId)
    .execute();
}

export function findLatestReadyResilienceRun(db: Tx, tenantId: string) {
  return db
    .selectFrom('resilience_runs')
    .select(['id', 'finished_at', 'scenarios', 'findings', 'snapshot_id'])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'ready')
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findLatestResilienceRun(db: Tx, tenantId: string) {
  return db
    .selectFrom('resilience_runs')
    .select(['status', 'started_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The inventory's changes in (from, to] after the tenant's first snapshot, each with the CloudTrail
 * principal and event of the latest event naming it since the previous snapshot (at most 5,001 rows: one
 * more than a page tells the caller it was truncated).
 */
export function findDrift(db: Tx, tenantId: string, from: Date, to: Date) {
  return sql<{
    id: string | null;
    arn: string;
    native_id: string | null;
    type: string;
    name: string | null;
    account_id: string | null;
    region: string | null;
    change: 'created' | 'updated' | 'deleted';
    changed_fields: string[];
    before: unknown;
    after: unknown;
    observed_at: Date;
    actor: string | null;
    event: string | null;
  }>`
    with snaps as (
      select id, observed_at, lag(observed_at) over (order by observed_at, taken_at) as prev_at,
             row_number() over (order by observed_at, taken_at) as n
      from inventory_snapshots where tenant_id = ${tenantId}
    )
    select r.id, h.arn, coalesce(r.native_id, h.after->>'native_id', h.before->>'native_id') as native_id, h.type,
           coalesce(r.name, h.after->>'name', h.before->>'name') as name,
           coalesce(r.account_id, h.after->>'account_id', h.before->>'account_id') as account_id,
           coalesce(r.region, h.after->>'region', h.before->>'region') as region,
           h.change, h.changed_fields, h.before, h.after, h.observed_at, ev.actor, ev.name as event
    from resource_history h
    join snaps s on s.id = h.snapshot_id and s.n > 1
    left join resources r on r.tenant_id = h.tenant_id and r.arn = h.arn
    left join lateral (
      select e.actor, e.name from inventory_events e
      where e.tenant_id = ${tenantId} and e.kind = 'cloudtrail' and e.arns @> array[h.arn]
        and e.at <= h.observed_at and (s.prev_at is null or e.at > s.prev_at)
      order by e.at desc, e.id desc limit 1
    ) ev on true
    where h.tenant_id = ${tenantId} and h.observed_at > ${from} and h.observed_at <= ${to}
    order by h.observed_at, h.arn
    limit 5001`.execute(db);
}
