/** Agent tools: resources (search, one in detail, its neighbours). */
import { z } from 'zod';
import { sql } from '@opsi/db';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';
import { ResourceRef, round2, findResource } from './shared';
import { defineTool } from '../../define-tool';

export const search_resources = defineTool({
  name: 'search_resources',
  description:
    'Search the inventory by name, id, type, service tag, account or region. Answers the most expensive matches first.',
  input: z.object({
    text: z.string().optional().describe('Part of a name, native id or ARN'),
    type: z.string().optional().describe('e.g. aws_ec2_instance, aws_ebs_volume, aws_rds_db_instance'),
    service: z.string().optional(),
    account_id: z.string().optional(),
    region: z.string().optional(),
    limit: z.number().int().min(1).max(50).default(15),
  }),
  async execute(i, { db, tenantId }) {
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
    const rows = await q
      .orderBy(sql`monthly_cost desc nulls last`)
      .orderBy('arn')
      .limit(i.limit)
      .execute();
    return {
      resources: rows.map((r) => ({
        ...r,
        monthly_cost: r.monthly_cost === null ? null : round2(r.monthly_cost),
      })),
    };
  },
});

export const get_resource = defineTool({
  name: 'get_resource',
  description:
    'One resource: its attributes as AWS describes them, monthly cost, console link, the open findings on it, and its recent changes.',
  input: ResourceRef,
  async execute(i, { db, tenantId }) {
    const r = await findResource(db, tenantId, i.resource);
    if (!r) return { found: false, resource: i.resource };
    const [findings, changes] = await Promise.all([
      db
        .selectFrom('finding_resources as fr')
        .innerJoin('findings as f', 'f.id', 'fr.finding_id')
        .select(['f.id', 'f.title', 'f.severity', 'f.domain', 'f.status'])
        .where('fr.tenant_id', '=', tenantId)
        .where('fr.arn', '=', r.arn)
        .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
        .orderBy('f.severity_rank', 'desc')
        .orderBy('f.id')
        .execute(),
      db
        .selectFrom('resource_history')
        .select(['change', 'changed_fields', 'observed_at'])
        .where('tenant_id', '=', tenantId)
        .where('arn', '=', r.arn)
        .orderBy('observed_at', 'desc')
        .limit(10)
        .execute(),
    ]);
    return {
      found: true,
      ...r,
      monthly_cost: r.monthly_cost === null ? null : round2(r.monthly_cost),
      open_findings: findings,
      recent_changes: changes,
    };
  },
});

export const resource_neighbours = defineTool({
  name: 'resource_neighbours',
  description:
    'What a resource is connected to: attached volumes, subnets, security groups, roles, load balancers, alarms, dependencies.',
  input: ResourceRef,
  async execute(i, { db, tenantId }) {
    const r = await findResource(db, tenantId, i.resource);
    if (!r) return { found: false, resource: i.resource };
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
        where e.tenant_id = ${tenantId} and e.from_arn = ${r.arn}
      union all
      select 'in', e.kind, e.from_arn, n.native_id, n.name, n.type from resource_edges e
        left join resources n on n.tenant_id = e.tenant_id and n.arn = e.from_arn
        where e.tenant_id = ${tenantId} and e.to_arn = ${r.arn}
      order by 1, 2, 3 limit 100`.execute(db);
    return {
      resource: { arn: r.arn, native_id: r.native_id, name: r.name, type: r.type },
      neighbours: edges.rows,
    };
  },
});

/** This group's tools, in catalog order. */
export const RESOURCES_TOOLS = [search_resources, get_resource, resource_neighbours] as const;
