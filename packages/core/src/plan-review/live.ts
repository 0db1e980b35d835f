import { sql, type Db } from '@opsi/db';
import { blastRadius } from '../graph';
import { loadGraph } from '../graph';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';

/** A live resource of the tenant's inventory, as plan review joins it. */
export interface LiveResource {
  id: string;
  arn: string;
  type: string;
  native_id: string;
  name: string | null;
  account_id: string;
  region: string;
  availability_zone: string | null;
  tags: Record<string, string>;
  attributes: Record<string, unknown>;
  monthly_cost: number | null;
}

export interface LiveKeys {
  addresses: string[];
  arns: string[];
  ids: string[];
  names: string[];
}

/** The tenant's live resources that any of the keys name: Terraform address, ARN, native id or name. */
export async function findLiveCandidates(db: Db, tenantId: string, keys: LiveKeys): Promise<LiveResource[]> {
  if (!keys.addresses.length && !keys.arns.length && !keys.ids.length && !keys.names.length) return [];
  const rows = await db
    .selectFrom('resources')
    .select([
      'id',
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'availability_zone',
      'tags',
      'attributes',
      'monthly_cost',
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(keys.addresses.length
          ? [
              eb(
                sql<string>`attributes->>'terraform_address'`,
                '=',
                sql<string>`any(${keys.addresses}::text[])`,
              ),
            ]
          : []),
        ...(keys.arns.length ? [eb('arn', '=', sql<string>`any(${keys.arns}::text[])`)] : []),
        ...(keys.ids.length ? [eb('native_id', '=', sql<string>`any(${keys.ids}::text[])`)] : []),
        ...(keys.names.length ? [eb('name', '=', sql<string>`any(${keys.names}::text[])`)] : []),
      ]),
    )
    .execute();
  return rows.map((r) => ({
    ...r,
    tags: (r.tags ?? {}) as Record<string, string>,
    attributes: (r.attributes ?? {}) as Record<string, unknown>,
    monthly_cost: r.monthly_cost === null ? null : Number(r.monthly_cost),
  }));
}

export interface Dependent {
  id: string | null;
  arn: string;
  type: string | null;
  native_id: string | null;
  name: string | null;
  depth: number;
  /** The kind of the edge that reached it. */
  via: string;
  /** `fails`: no working alternative once the resource is gone; `degraded`: it keeps part of a pool. */
  impact: 'fails' | 'degraded';
}

/**
 * What depends on each of the resources, to a depth: the graph's blast radius (its dependency rules,
 * inferred edges and pool-aware failure), so plan review and GET /graph/blast-radius agree.
 */
export async function findDependents(
  db: Db,
  tenantId: string,
  arns: string[],
  maxDepth = 3,
): Promise<Map<string, Dependent[]>> {
  const out = new Map<string, Dependent[]>();
  if (!arns.length) return out;
  const g = await loadGraph(db, tenantId);
  for (const arn of arns) {
    const root = g.find(arn);
    if (root === undefined) continue;
    const { impacted } = blastRadius(g, root, maxDepth);
    out.set(
      arn,
      impacted
        .map((r) => {
          const n = g.nodes[r.node]!;
          return {
            id: n.id,
            arn: n.arn,
            type: n.type,
            native_id: n.native_id,
            name: n.name,
            depth: r.depth,
            via: r.via[r.via.length - 1] ?? '',
            impact: r.impact,
          };
        })
        .sort((a, b) => a.depth - b.depth || a.arn.localeCompare(b.arn)),
    );
  }
  return out;
}

export interface OpenFinding {
  id: string;
  check_id: string;
  title: string;
  severity: string;
  arn: string;
}

/** The tenant's active findings (open, acknowledged, in progress) on any of the resources. */
export async function findOpenFindings(db: Db, tenantId: string, arns: string[]): Promise<OpenFinding[]> {
  if (!arns.length) return [];
  return db
    .selectFrom('findings as f')
    .innerJoin('finding_resources as fr', (j) =>
      j.onRef('fr.finding_id', '=', 'f.id').on('fr.tenant_id', '=', tenantId),
    )
    .select(['f.id', 'f.check_id', 'f.title', 'f.severity', 'fr.arn'])
    .where('f.tenant_id', '=', tenantId)
    .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
    .where('fr.arn', '=', sql<string>`any(${arns}::text[])`)
    .orderBy('f.severity_rank', 'desc')
    .orderBy('f.id')
    .execute();
}

/** Security groups (by group id) that a live instance uses. */
export async function findGroupsInUse(db: Db, tenantId: string, groupIds: string[]): Promise<Set<string>> {
  if (!groupIds.length) return new Set();
  const rows = await sql<{ group_id: string }>`
    select distinct g->>'group_id' as group_id
    from resources i, jsonb_array_elements(coalesce(i.attributes->'security_groups', '[]'::jsonb)) g
    where i.tenant_id = ${tenantId} and i.type = 'aws_ec2_instance' and i.deleted_at is null
      and coalesce(i.attributes->>'instance_state', 'running') not in ('terminated', 'shutting-down')
      and g->>'group_id' = any(${groupIds}::text[])`.execute(db);
  return new Set(rows.rows.map((r) => r.group_id));
}

/** The newest snapshot time of each database (by identifier) and volume (by id). */
export async function findLatestSnapshots(
  db: Db,
  tenantId: string,
  sources: string[],
): Promise<Map<string, string>> {
  if (!sources.length) return new Map();
  const rows = await sql<{ source: string; at: string }>`
    select coalesce(attributes->>'db_instance_identifier', attributes->>'volume_id') as source,
           max(coalesce(attributes->>'snapshot_create_time', attributes->>'start_time')) as at
    from resources
    where tenant_id = ${tenantId} and deleted_at is null
      and type in ('aws_rds_db_snapshot', 'aws_ebs_snapshot')
      and coalesce(attributes->>'db_instance_identifier', attributes->>'volume_id') = any(${sources}::text[])
    group by 1`.execute(db);
  return new Map(rows.rows.filter((r) => r.at).map((r) => [r.source, r.at]));
}

/** The latest CloudTrail event on each resource (for drift made outside Terraform: who did it). */
export async function findLastChanges(
  db: Db,
  tenantId: string,
  arns: string[],
): Promise<Map<string, { at: Date; name: string; actor: string | null }>> {
  if (!arns.length) return new Map();
  const rows = await sql<{ arn: string; at: Date; name: string; actor: string | null }>`
    select distinct on (a.arn) a.arn, e.at, e.name, e.actor
    from inventory_events e, unnest(e.arns) as a(arn)
    where e.tenant_id = ${tenantId} and e.kind = 'cloudtrail' and e.arns && ${arns}::text[]
      and a.arn = any(${arns}::text[])
    order by a.arn, e.at desc`.execute(db);
  return new Map(rows.rows.map((r) => [r.arn, { at: new Date(r.at), name: r.name, actor: r.actor }]));
}
