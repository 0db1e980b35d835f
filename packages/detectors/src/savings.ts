import { activeFindingStatuses, sql, type Db } from '@opsi/db';

export interface SavingsTotal {
  /** Monthly savings at list price, each resource counted once (the larger of exclusive actions). */
  monthly: number;
  /** Of which from priced resources. */
  grounded: number;
  /** Of which from per-finding estimates of findings without priced resources, once per group. */
  estimated: number;
  resources: number;
}

/**
 * The tenant's savings at stake across active findings (open, acknowledged, in progress): each unique
 * resource once, at the largest savings any active finding puts on it (delete and migrate on one volume
 * are mutually exclusive: the larger counts); findings with no priced resource add their estimate once
 * per duplicate group. Confirmed duplicates, dismissed and resolved findings count nothing.
 */
export async function savingsTotal(
  db: Db,
  tenantId: string,
  domain?: string,
  /** Only these findings (ids), counted the same way: the savings of fixing a chosen set of them. */
  findingIds?: readonly string[],
): Promise<SavingsTotal> {
  const domainFilter = domain ? sql`and f.domain = ${domain}` : sql``;
  if (findingIds && !findingIds.length) return { monthly: 0, grounded: 0, estimated: 0, resources: 0 };
  const idFilter = findingIds
    ? sql`and f.id in (${sql.join(findingIds.map((id) => sql`${id}::uuid`))})`
    : sql``;
  const result = await sql<{ grounded: number | null; resources: number; estimated: number | null }>`
    with active as (
      select f.id, f.group_id, f.estimated_savings from findings f
      where f.tenant_id = ${tenantId} and f.status in ${activeFindingStatuses} ${domainFilter} ${idFilter}
    ),
    per_resource as (
      select fr.arn, max(fr.savings) as savings from finding_resources fr join active a on a.id = fr.finding_id
      where fr.savings > 0 group by fr.arn
    ),
    ungrounded as (
      select distinct on (a.group_id) a.group_id, a.estimated_savings from active a
      where not exists (select 1 from finding_resources fr where fr.finding_id = a.id and fr.savings > 0)
      order by a.group_id, a.estimated_savings desc
    )
    select (select sum(savings) from per_resource)::float8 as grounded,
           (select count(*) from per_resource)::int as resources,
           (select sum(estimated_savings) from ungrounded)::float8 as estimated`.execute(db);
  const row = result.rows[0]!;
  const grounded = Math.round((row.grounded ?? 0) * 100) / 100;
  const estimated = Math.round((row.estimated ?? 0) * 100) / 100;
  return {
    monthly: Math.round((grounded + estimated) * 100) / 100,
    grounded,
    estimated,
    resources: row.resources,
  };
}
