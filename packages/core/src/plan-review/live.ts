import { sql, type Db } from '@opsi/db';

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
}

/** ARNs of what routes egress traffic (subnets, route tables): they depend on what they route to. */
const EGRESS_ROUTER = ':(subnet|route-table)/';

/**
 * What depends on each of the resources, by depth: whoever depends on it, is attached to, a member of
 * or protected by it, and what routes its egress through it. This is the graph's dependency direction
 * (the agent's blast_radius tool walks the same edges); it reads the inventory's edges directly until
 * the graph area's dependents API is on main, and is the one function to switch over then.
 */
export async function findDependents(
  db: Db,
  tenantId: string,
  arns: string[],
  maxDepth = 3,
): Promise<Map<string, Dependent[]>> {
  const out = new Map<string, Dependent[]>();
  if (!arns.length) return out;
  const result = await sql<{
    root: string;
    arn: string;
    depth: number;
    via: string;
    id: string | null;
    native_id: string | null;
    name: string | null;
    type: string | null;
  }>`
    with recursive walk(root, arn, depth, via) as (
      select r, r, 0, ''::text from unnest(${arns}::text[]) as r
      union
      select w.root, case when e.to_arn = w.arn then e.from_arn else e.to_arn end, w.depth + 1, e.kind
      from walk w join resource_edges e on e.tenant_id = ${tenantId}
        and ((e.to_arn = w.arn and e.kind in ('depends-on', 'attached-to', 'member-of', 'protected-by', 'resolves-to', 'uses-role'))
          or (e.from_arn = w.arn and e.kind in ('contains', 'targets'))
          or (e.kind = 'routes-to' and (e.from_arn ~ ${EGRESS_ROUTER}) and e.to_arn = w.arn)
          or (e.kind = 'routes-to' and not (e.from_arn ~ ${EGRESS_ROUTER}) and e.from_arn = w.arn))
      where w.depth < ${maxDepth}
    ),
    best as (
      select distinct on (root, arn) root, arn, depth, via from walk where arn <> root order by root, arn, depth, via
    )
    select b.root, b.arn, b.depth, b.via, n.id, n.native_id, n.name, n.type
    from best b join resources n on n.tenant_id = ${tenantId} and n.arn = b.arn and n.deleted_at is null
    order by b.root, b.depth, b.arn`.execute(db);
  for (const r of result.rows) {
    const list = out.get(r.root) ?? [];
    list.push({
      id: r.id,
      arn: r.arn,
      type: r.type,
      native_id: r.native_id,
      name: r.name,
      depth: Number(r.depth),
      via: r.via,
    });
    out.set(r.root, list);
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
    .where('f.status', 'in', ['open', 'acknowledged', 'in_progress'])
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
