/** The agent tools' SQL: every statement is read-only and bound to the one tenant the tools serve. */
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';
import { sql, type Db } from '@opsi/db';

/** Types that share a name with the resource they belong to (see findResourcesByRef). */
export const SECONDARY_TYPES = ['aws_vpc_eip', 'aws_iam_access_key', 'aws_iam_instance_profile'];

/**
 * Up to six live resources an ARN, native id or name names. An ARN or native id names one resource; a
 * name can be shared (a NAT gateway and its Elastic IP, a user and its access key, a role and its
 * instance profile): the resource itself comes before what hangs off it, then by ARN, so the same
 * question always gets the same resource.
 */
export function findResourcesByRef(db: Db, tenantId: string, ref: string) {
  return db
    .selectFrom('resources')
    .select([
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'availability_zone',
      'tags',
      'attributes',
      'size_value',
      'size_unit',
      'monthly_cost',
      'console_url',
      'first_seen',
      'last_seen',
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('arn', '=', ref), eb('native_id', '=', ref), eb('name', '=', ref)]))
    .orderBy(sql`case when arn = ${ref} then 0 when native_id = ${ref} then 1 else 2 end`)
    .orderBy(sql`type in (${sql.join(SECONDARY_TYPES)})`)
    .orderBy('arn')
    .limit(6)
    .execute();
}

/** `days` before the tenant's latest observation (null before its first snapshot). */
export async function findChangesSince(db: Db, tenantId: string, days: number): Promise<Date | undefined> {
  const since = await sql<{
    since: Date;
  }>`select max(observed_at) - make_interval(days => ${days}) as since from inventory_snapshots where tenant_id = ${tenantId}`.execute(
    db,
  );
  return since.rows[0]?.since;
}

/** The latest 50 inventory changes after `from`. */
export function findRecentHistory(db: Db, tenantId: string, from: Date) {
  return db
    .selectFrom('resource_history')
    .select([
      'arn',
      'type',
      'change',
      'changed_fields',
      'observed_at',
      sql<string | null>`coalesce(after->>'name', before->>'name')`.as('name'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('observed_at', '>', from)
    .orderBy('observed_at', 'desc')
    .limit(50)
    .execute();
}

/** The latest 50 CloudTrail events after `from`. */
export function findRecentCloudtrail(db: Db, tenantId: string, from: Date) {
  return db
    .selectFrom('inventory_events')
    .select(['at', 'name', 'actor', 'source_ip', 'arns'])
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'cloudtrail')
    .where('at', '>', from)
    .orderBy('at', 'desc')
    .limit(50)
    .execute();
}

/** Alerts of the last `days` (from the latest observation), grouped by fingerprint. */
export async function findAlertGroups(db: Db, tenantId: string, days: number) {
  // The resources of a group are the union of its alerts' arns (`(array_agg(arns))[1]` indexes a
  // two-dimensional array and is always null).
  const rows = await sql<Record<string, unknown>>`
      select e.fingerprint, e.name, e.severity, e.service, count(distinct e.id)::int as occurrences,
             min(e.at) as first_at, max(e.at) as last_at,
             coalesce(array_agg(distinct a.arn) filter (where a.arn is not null), '{}') as arns
      from inventory_events e left join lateral unnest(e.arns) as a(arn) on true
      where e.tenant_id = ${tenantId} and e.kind = 'alert'
        and e.at > (select max(observed_at) from inventory_snapshots where tenant_id = ${tenantId}) - make_interval(days => ${days})
      group by e.fingerprint, e.name, e.severity, e.service order by min(e.at)`.execute(db);
  return rows.rows;
}

/** Live resources named by any of `refs` (ARNs, native ids or names), most expensive first. */
export function findResourcesByRefs(db: Db, tenantId: string, refs: string[]) {
  return db
    .selectFrom('resources')
    .select(['arn', 'native_id', 'name', 'type', 'monthly_cost'])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('arn', 'in', refs), eb('native_id', 'in', refs), eb('name', 'in', refs)]))
    .orderBy('monthly_cost', 'desc')
    .limit(500)
    .execute();
}

/** Findings by id with their savings, largest first. */
export function findFindingSavings(db: Db, tenantId: string, ids: string[]) {
  return db
    .selectFrom('findings')
    .select(['id', 'title', 'estimated_savings as monthly_savings'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .orderBy('estimated_savings', 'desc')
    .execute();
}

/** The ids of findings on resources tagged service=`service` and/or in account `accountId`. */
export function findFindingIdsOnResources(
  db: Db,
  tenantId: string,
  where: { service?: string | undefined; accountId?: string | undefined },
) {
  return db
    .selectFrom('finding_resources as fr')
    .innerJoin('resources as r', (j) =>
      j.onRef('r.arn', '=', 'fr.arn').onRef('r.tenant_id', '=', 'fr.tenant_id'),
    )
    .select('fr.finding_id')
    .where('fr.tenant_id', '=', tenantId)
    .$if(Boolean(where.service), (q) => q.where(sql<string>`r.tags->>'service'`, '=', where.service!))
    .$if(Boolean(where.accountId), (q) => q.where('r.account_id', '=', where.accountId!))
    .execute();
}

export interface ResourceSearch {
  text?: string | undefined;
  type?: string | undefined;
  service?: string | undefined;
  account_id?: string | undefined;
  region?: string | undefined;
  limit: number;
}

/** Live resources matching a search, the most expensive first. */
export function searchResources(db: Db, tenantId: string, i: ResourceSearch) {
  let q = db
    .selectFrom('resources')
    .select([
      'arn',
      'native_id',
      'name',
      'type',
      'account_id',
      'region',
      'monthly_cost',
      sql<string>`tags->>'service'`.as('service'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null);
  if (i.text)
    q = q.where((eb) =>
      eb.or([
        eb('name', 'ilike', `%${i.text}%`),
        eb('native_id', 'ilike', `%${i.text}%`),
        eb('arn', 'ilike', `%${i.text}%`),
      ]),
    );
  if (i.type) q = q.where('type', '=', i.type);
  if (i.service) q = q.where(sql<string>`tags->>'service'`, '=', i.service);
  if (i.account_id) q = q.where('account_id', '=', i.account_id);
  if (i.region) q = q.where('region', '=', i.region);
  return q
    .orderBy(sql`monthly_cost desc nulls last`)
    .orderBy('arn')
    .limit(i.limit)
    .execute();
}

/** The active findings on one resource, most severe first. */
export function findActiveFindingsOn(db: Db, tenantId: string, arn: string) {
  return db
    .selectFrom('finding_resources as fr')
    .innerJoin('findings as f', 'f.id', 'fr.finding_id')
    .select(['f.id', 'f.title', 'f.severity', 'f.domain', 'f.status'])
    .where('fr.tenant_id', '=', tenantId)
    .where('fr.arn', '=', arn)
    .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
    .orderBy('f.severity_rank', 'desc')
    .orderBy('f.id')
    .execute();
}

/** One resource's latest 10 changes. */
export function findResourceChanges(db: Db, tenantId: string, arn: string) {
  return db
    .selectFrom('resource_history')
    .select(['change', 'changed_fields', 'observed_at'])
    .where('tenant_id', '=', tenantId)
    .where('arn', '=', arn)
    .orderBy('observed_at', 'desc')
    .limit(10)
    .execute();
}

/** A resource's edges both ways with the resource at the other end (at most 100). */
export async function findNeighbourEdges(db: Db, tenantId: string, arn: string) {
  const edges = await sql<{
    direction: string;
    kind: string;
    arn: string;
    native_id: string | null;
    name: string | null;
    type: string | null;
  }>`
      select 'out' as direction, e.kind, e.to_arn as arn, n.native_id, n.name, n.type from resource_edges e
        left join resources n on n.tenant_id = e.tenant_id and n.arn = e.to_arn
        where e.tenant_id = ${tenantId} and e.from_arn = ${arn}
      union all
      select 'in', e.kind, e.from_arn, n.native_id, n.name, n.type from resource_edges e
        left join resources n on n.tenant_id = e.tenant_id and n.arn = e.from_arn
        where e.tenant_id = ${tenantId} and e.to_arn = ${arn}
      order by 1, 2, 3 limit 100`.execute(db);
  return edges.rows;
}
