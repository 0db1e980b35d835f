import { sql, type Db, type Database, type Transaction } from '@opsi/db';

type Tx = Transaction<Database> | Db;

export interface RelatedResource {
  arn: string;
  depth: number;
  /** How it is connected to the start: `dependency` (the start uses it) or `dependent` (it uses the start). */
  direction: 'dependency' | 'dependent' | 'mixed';
  via: string[];
}

/**
 * Resources connected to one in the inventory's graph, within `depth` edges, in both directions, with
 * the direction of the first hop. The one seam for "connected in the graph": triage correlation and the
 * investigation tools call only this, so the graph's own dependency API can take its place.
 */
export async function relatedResources(
  db: Tx,
  tenantId: string,
  arn: string,
  opts: { depth?: number; kinds?: readonly string[] } = {},
): Promise<RelatedResource[]> {
  const depth = opts.depth ?? 2;
  const kinds = opts.kinds ? sql`and e.kind in (${sql.join([...opts.kinds])})` : sql``;
  const rows = await sql<{ arn: string; depth: number; direction: string; via: string }>`
    with recursive walk(arn, depth, direction, via) as (
      select ${arn}::text, 0, ''::text, array[]::text[]
      union
      select case when e.from_arn = w.arn then e.to_arn else e.from_arn end, w.depth + 1,
        case when w.depth = 0 then (case when e.from_arn = w.arn then 'dependency' else 'dependent' end) else w.direction end,
        w.via || e.kind
      from walk w join resource_edges e on e.tenant_id = ${tenantId} and (e.from_arn = w.arn or e.to_arn = w.arn) ${kinds}
      where w.depth < ${depth}
    )
    select arn, min(depth)::int as depth,
      case when count(distinct direction) > 1 then 'mixed' else min(direction) end as direction,
      (array_agg(array_to_string(via, ',') order by depth))[1] as via
    from walk where arn <> ${arn} group by arn order by 2, 1 limit 500`.execute(db);
  return rows.rows.map((r) => ({
    arn: r.arn,
    depth: r.depth,
    direction: r.direction as RelatedResource['direction'],
    via: r.via ? r.via.split(',') : [],
  }));
}

/**
 * Edges along which a failure travels (what serves traffic to what, what depends on what): correlation
 * follows only these, so a shared VPC, subnet, security group or role does not make every alert related.
 */
export const DEPENDENCY_EDGE_KINDS = [
  'depends-on',
  'targets',
  'routes-to',
  'member-of',
  'resolves-to',
] as const;

/** The alerts (triage events) attached to an incident, oldest first. */
export async function incidentAlerts(db: Tx, tenantId: string, incidentId: string) {
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
