import { z } from 'zod';
import type { AgentTool, ToolInfo } from '@opsi/agent';
import { sql, type Db } from '@opsi/db';
import { DEFAULT_LIMITS, runSandboxed } from '@opsi/detectors';
import { buildIncidentTools } from '../incidents/agent-tools';
import { listLearnings } from '../knowledge/learnings';
import { getFinding, listFindings, listRecommendations, pulseOverview } from '../pulse/findings';

const Domain = z.enum(['finops', 'security', 'sre']);
const Severity = z.enum(['critical', 'high', 'medium', 'low', 'info']);
const ResourceRef = z.object({
  resource: z.string().min(1).describe('An ARN, a native id (vol-…, i-…, sg-…) or a name'),
});

const round2 = (n: unknown) => Math.round(Number(n ?? 0) * 100) / 100;

/** ARNs of what routes egress traffic (subnets, route tables): see blast_radius. */
const EGRESS_ROUTER = ':(subnet|route-table)/';

/** Types that share a name with the resource they belong to (see findResource). */
const SECONDARY_TYPES = ['aws_vpc_eip', 'aws_iam_access_key', 'aws_iam_instance_profile'];

async function findResource(db: Db, tenantId: string, ref: string) {
  const rows = await db
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
    // An ARN or native id names one resource; a name can be shared (a NAT gateway and its Elastic IP, a user
    // and its access key, a role and its instance profile): the resource itself comes before what hangs
    // off it, then by ARN, so the same question always gets the same resource.
    .orderBy(sql`case when arn = ${ref} then 0 when native_id = ${ref} then 1 else 2 end`)
    .orderBy(sql`type in (${sql.join(SECONDARY_TYPES)})`)
    .orderBy('arn')
    .limit(6)
    .execute();
  const [first, ...others] = rows;
  if (!first) return undefined;
  return {
    ...first,
    // Other resources of the same name, so a reader knows the name was ambiguous.
    ...(others.length
      ? { also_named: others.map((o) => ({ arn: o.arn, type: o.type, native_id: o.native_id })) }
      : {}),
  };
}

/**
 * The agent's tools for one tenant: every one read-only, every query bound to the tenant (the SQL tool
 * through the sandbox), so no prompt can reach another tenant's data or change anything.
 */
export function buildAgentTools(db: Db, tenantId: string): AgentTool[] {
  const tools: AgentTool[] = [
    {
      name: 'list_findings',
      description:
        'List findings (problems found in the cloud inventory), filtered by domain, severity or status. Default: active ones (open, acknowledged, in progress), most severe first.',
      input: z.object({
        domain: Domain.optional(),
        severity: Severity.optional(),
        status: z.enum(['open', 'acknowledged', 'in_progress', 'resolved', 'dismissed']).optional(),
        service: z.string().optional().describe('Only findings on resources tagged service=<this>'),
        account_id: z.string().optional(),
        sort_by: z.enum(['severity', 'savings', 'date']).default('severity'),
        limit: z.number().int().min(1).max(50).default(15),
        offset: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe('Skip this many: for the next page when total is more than limit'),
      }),
      async execute(i) {
        const rows = await listFindings(db, tenantId, {
          status: i.status,
          severity: i.severity,
          domain: i.domain,
          sortBy: i.sort_by,
          sortDir: 'desc',
          limit: 500,
        });
        let active = i.status
          ? rows
          : rows.filter((r) => ['open', 'acknowledged', 'in_progress'].includes(String(r.status)));
        if (i.service || i.account_id) {
          const matching = await db
            .selectFrom('finding_resources as fr')
            .innerJoin('resources as r', (j) =>
              j.onRef('r.arn', '=', 'fr.arn').onRef('r.tenant_id', '=', 'fr.tenant_id'),
            )
            .select('fr.finding_id')
            .where('fr.tenant_id', '=', tenantId)
            .$if(Boolean(i.service), (q) => q.where(sql<string>`r.tags->>'service'`, '=', i.service!))
            .$if(Boolean(i.account_id), (q) => q.where('r.account_id', '=', i.account_id!))
            .execute();
          const ids = new Set(matching.map((m) => m.finding_id));
          active = active.filter((r) => ids.has(String(r.id)));
        }
        return {
          total: active.length,
          offset: i.offset,
          findings: active.slice(i.offset, i.offset + i.limit).map((r) => ({
            id: r.id,
            title: r.title,
            severity: r.severity,
            domain: r.domain,
            status: r.status,
            check_id: r.check_id,
            monthly_savings: round2(r.savings),
            resources: r.resource_count,
          })),
        };
      },
    },
    {
      name: 'get_finding',
      description:
        'One finding in detail: narrative, resources with monthly cost and console links, the recommendation with savings and effort, and the evidence (the exact queries that found it).',
      input: z.object({ id: z.string().uuid() }),
      async execute(i) {
        const f = await getFinding(db, tenantId, i.id);
        return {
          id: f.id,
          title: f.title,
          severity: f.severity,
          domain: f.domain,
          status: f.status,
          narrative: f.narrative,
          reasoning: f.run_reasoning,
          resources: f.resources.map((r) => ({
            arn: r.arn,
            native_id: r.native_id,
            name: r.name,
            type: r.type,
            region: r.region,
            monthly_cost: r.monthly_cost,
            action: r.action_type,
            savings: r.savings,
            console_url: r.console_url,
          })),
          recommendation: f.recommendation,
          evidence: f.audit.steps
            .filter((s) => s.step_kind === 'query')
            .map((s) => ({ seq: s.seq, title: s.title, rows: s.row_count, query_sql: s.query_sql })),
          detected_at: f.detected_at,
          last_reinvestigated_at: f.last_reinvestigated_at,
        };
      },
    },
    {
      name: 'savings_summary',
      description:
        'Savings at stake across active findings (each resource counted once), open findings by domain and severity, and the top recommendations by savings.',
      input: z.object({ top: z.number().int().min(1).max(20).default(5) }),
      async execute(i) {
        const overview = await pulseOverview(db, tenantId);
        const recs = (await listRecommendations(db, tenantId)).sort(
          (x, y) => Number(y.savings) - Number(x.savings),
        );
        return {
          monthly_savings: overview.estimated_savings.monthly,
          open_findings: overview.open_findings,
          by_domain: overview.by_domain,
          by_severity: overview.by_severity,
          top_recommendations: recs.slice(0, i.top).map((r) => ({
            finding_id: r.finding_id,
            title: r.title,
            action: r.action_type,
            monthly_savings: round2(r.savings),
            effort: r.effort,
          })),
        };
      },
    },
    {
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
      async execute(i) {
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
    },
    {
      name: 'get_resource',
      description:
        'One resource: its attributes as AWS describes them, monthly cost, console link, the open findings on it, and its recent changes.',
      input: ResourceRef,
      async execute(i) {
        const r = await findResource(db, tenantId, i.resource);
        if (!r) return { found: false, resource: i.resource };
        const [findings, changes] = await Promise.all([
          db
            .selectFrom('finding_resources as fr')
            .innerJoin('findings as f', 'f.id', 'fr.finding_id')
            .select(['f.id', 'f.title', 'f.severity', 'f.domain', 'f.status'])
            .where('fr.tenant_id', '=', tenantId)
            .where('fr.arn', '=', r.arn)
            .where('f.status', 'in', ['open', 'acknowledged', 'in_progress'])
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
    },
    {
      name: 'resource_neighbours',
      description:
        'What a resource is connected to: attached volumes, subnets, security groups, roles, load balancers, alarms, dependencies.',
      input: ResourceRef,
      async execute(i) {
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
    },
    {
      name: 'blast_radius',
      description:
        'What depends on a resource, by dependency depth: the resources that would be affected if it failed or were deleted.',
      input: ResourceRef.extend({ depth: z.number().int().min(1).max(5).default(3) }),
      async execute(i) {
        const r = await findResource(db, tenantId, i.resource);
        if (!r) return { found: false, resource: i.resource };
        // Dependents: whoever depends-on, is attached-to, member-of or protected-by it; and what it contains or
        // targets. routes-to is read by which way the traffic needs it: a subnet or route table that routes
        // through a route table or gateway depends on it (egress: a NAT gateway's dependents are the route
        // tables and subnets behind it), while what a load balancer routes to depends on the load balancer.
        const rows = await sql<{
          arn: string;
          depth: number;
          native_id: string | null;
          name: string | null;
          type: string | null;
        }>`
          with recursive walk(arn, depth) as (
            select ${r.arn}::text, 0
            union
            select case when e.to_arn = w.arn then e.from_arn else e.to_arn end, w.depth + 1
            from walk w join resource_edges e on e.tenant_id = ${tenantId}
              and ((e.to_arn = w.arn and e.kind in ('depends-on', 'attached-to', 'member-of', 'protected-by', 'resolves-to', 'uses-role'))
                or (e.from_arn = w.arn and e.kind in ('contains', 'targets'))
                or (e.kind = 'routes-to' and (e.from_arn ~ ${EGRESS_ROUTER}) and e.to_arn = w.arn)
                or (e.kind = 'routes-to' and not (e.from_arn ~ ${EGRESS_ROUTER}) and e.from_arn = w.arn))
            where w.depth < ${i.depth}
          )
          select w.arn, min(w.depth)::int as depth, n.native_id, n.name, n.type from walk w
            left join resources n on n.tenant_id = ${tenantId} and n.arn = w.arn and n.deleted_at is null
          where w.arn <> ${r.arn} group by w.arn, n.native_id, n.name, n.type order by 2, 1 limit 200`.execute(
          db,
        );
        return {
          resource: { arn: r.arn, native_id: r.native_id, name: r.name },
          dependents: rows.rows,
          count: rows.rows.length,
        };
      },
    },
    {
      name: 'recent_changes',
      description:
        'What changed in the inventory in the last days: created, updated and deleted resources with the fields that changed, and the CloudTrail events (who did it).',
      input: z.object({ days: z.number().int().min(1).max(30).default(1) }),
      async execute(i) {
        const since = await sql<{
          since: Date;
        }>`select max(observed_at) - make_interval(days => ${i.days}) as since from inventory_snapshots where tenant_id = ${tenantId}`.execute(
          db,
        );
        const from = since.rows[0]?.since ?? new Date(0);
        const [changes, events] = await Promise.all([
          db
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
            .execute(),
          db
            .selectFrom('inventory_events')
            .select(['at', 'name', 'actor', 'source_ip', 'arns'])
            .where('tenant_id', '=', tenantId)
            .where('kind', '=', 'cloudtrail')
            .where('at', '>', from)
            .orderBy('at', 'desc')
            .limit(50)
            .execute(),
        ]);
        return { since: from, changes, cloudtrail: events };
      },
    },
    {
      name: 'recent_alerts',
      description:
        'Alerts (monitoring events) in the last days, grouped by fingerprint with counts, for what happened during an incident.',
      input: z.object({ days: z.number().int().min(1).max(30).default(2) }),
      async execute(i) {
        // The resources of a group are the union of its alerts' arns (`(array_agg(arns))[1]` indexes a
        // two-dimensional array and is always null).
        const rows = await sql<Record<string, unknown>>`
          select e.fingerprint, e.name, e.severity, e.service, count(distinct e.id)::int as occurrences,
                 min(e.at) as first_at, max(e.at) as last_at,
                 coalesce(array_agg(distinct a.arn) filter (where a.arn is not null), '{}') as arns
          from inventory_events e left join lateral unnest(e.arns) as a(arn) on true
          where e.tenant_id = ${tenantId} and e.kind = 'alert'
            and e.at > (select max(observed_at) from inventory_snapshots where tenant_id = ${tenantId}) - make_interval(days => ${i.days})
          group by e.fingerprint, e.name, e.severity, e.service order by min(e.at)`.execute(db);
        return { alerts: rows.rows };
      },
    },
    {
      name: 'list_learnings',
      description:
        "The team's active learnings (facts it taught about its services), newest first; filter by service name or by words in the fact.",
      input: z.object({
        service: z.string().min(1).max(128).optional(),
        query: z.string().min(1).max(200).optional(),
        limit: z.number().int().min(1).max(50).default(20),
      }),
      async execute(i) {
        const learnings = await listLearnings(db, tenantId, {
          service: i.service,
          query: i.query,
          limit: i.limit,
        });
        return {
          learnings: learnings.map(({ id, fact, service, created_by, created_at }) => ({
            id,
            fact,
            service,
            created_by,
            created_at,
          })),
          count: learnings.length,
        };
      },
    },
    {
      name: 'inventory_sql',
      description:
        'Run one read-only SQL SELECT over the inventory (tables resources, resource_edges, resource_history, metrics_daily, cost_daily, inventory_events, inventory_snapshots, prices). Scoped to this tenant; at most 500 rows.',
      input: z.object({ query: z.string().min(6).max(10_000) }),
      async execute(i) {
        const result = await runSandboxed(db, tenantId, i.query, DEFAULT_LIMITS);
        return { rows: result.rows, row_count: result.rowCount, truncated: result.truncated };
      },
    },
    ...buildIncidentTools(db, tenantId),
  ];
  return tools;
}

const TOOL_NAMES = buildAgentTools(null as unknown as Db, '00000000-0000-0000-0000-000000000000');

/** The tool catalog of a tenant: name, description and input schema. */
export function availableTools(_tenant: { id: string; tier: string }): ToolInfo[] {
  return TOOL_NAMES.map((t) => {
    const schema = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: t.name, description: t.description, input_schema: schema };
  });
}
