import { z } from 'zod';
import type { AgentTool, ToolInfo } from '@opsi/agent';
import { sql, type Db } from '@opsi/db';
import { DEFAULT_LIMITS, runSandboxed, savingsTotal } from '@opsi/detectors';
import { blastRadius, simulateFailure, walk } from '../graph/analysis';
import { graphDrift } from '../graph/drift';
import { graphRisks } from '../graph/graph.service';
import { loadGraph } from '../graph/load';
import { NotFound } from '../errors';
import { buildIncidentTools } from '../incidents/agent-tools';
import { listLearnings } from '../knowledge/learnings';
import { listRunbooks, matchRunbooks, runbooksForFinding } from '../knowledge/runbooks';
import { getFinding, listFindings, listRecommendations, pulseOverview } from '../pulse/findings';
import {
  ACTIVE_FINDING_STATUSES,
  isActiveFindingStatus,
  LIFECYCLE_STATUSES,
  SEVERITIES,
} from '@opsi/contracts';

const Domain = z.enum(['finops', 'security', 'sre']);
const Severity = z.enum(SEVERITIES);
const ResourceRef = z.object({
  resource: z.string().min(1).describe('An ARN, a native id (vol-…, i-…, sg-…) or a name'),
});

const round2 = (n: unknown) => Math.round(Number(n ?? 0) * 100) / 100;

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
/** The resource types a what-if names (what a person recognises as a service's parts). */
const NOTABLE = new Set([
  'aws_ec2_instance',
  'aws_ec2_target_group',
  'aws_ec2_application_load_balancer',
  'aws_ec2_autoscaling_group',
  'aws_route53_record',
  'aws_rds_db_instance',
  'aws_vpc_nat_gateway',
  'aws_vpc_subnet',
  'aws_elasticache_replication_group',
]);

export function buildAgentTools(db: Db, tenantId: string): AgentTool[] {
  const tools: AgentTool[] = [
    {
      name: 'list_findings',
      description:
        'List findings (problems found in the cloud inventory), filtered by domain, severity or status. Default: active ones (open, acknowledged, in progress), most severe first.',
      input: z.object({
        domain: Domain.optional(),
        severity: Severity.optional(),
        status: z.enum(LIFECYCLE_STATUSES).optional(),
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
        let active = i.status ? rows : rows.filter((r) => isActiveFindingStatus(String(r.status)));
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
        'What stops working if a resource fails or is deleted: its dependents by dependency depth, each with the path and edge kinds that make it impacted, and whether it fails or is only degraded (keeps part of a pool).',
      input: ResourceRef.extend({ depth: z.number().int().min(1).max(10).default(3) }),
      async execute(i) {
        const r = await findResource(db, tenantId, i.resource);
        if (!r) return { found: false, resource: i.resource };
        const g = await loadGraph(db, tenantId);
        const root = g.byArn.get(r.arn);
        if (root === undefined) return { found: false, resource: i.resource };
        const { impacted } = blastRadius(g, root, i.depth);
        const rows = impacted.slice(0, 200).map((x) => {
          const n = g.nodes[x.node]!;
          return {
            arn: n.arn,
            depth: x.depth,
            native_id: n.native_id,
            name: n.name,
            type: n.type,
            via: x.via,
            impact: x.impact,
          };
        });
        return {
          resource: { arn: r.arn, native_id: r.native_id, name: r.name },
          depth: i.depth,
          dependents: rows,
          count: impacted.length,
          fails: impacted.filter((x) => x.impact === 'fails').length,
        };
      },
    },
    {
      name: 'graph_risks',
      description:
        'Single points of failure (graph SPOFs of service paths, and configuration SPOFs: single-AZ databases, capacity-1 groups, one NAT gateway for several AZs) and cross-domain toxic combinations, most severe first, each with its resources and the finding ids it combines.',
      input: z.object({
        kind: z.enum(['spof', 'toxic_combination']).optional(),
        limit: z.number().int().min(1).max(50).default(20),
      }),
      async execute(i) {
        const { risks } = await graphRisks(db, tenantId);
        const list = risks.filter((r) => !i.kind || r.kind === i.kind);
        return {
          total: list.length,
          risks: list.slice(0, i.limit).map((r) => ({
            id: r.id,
            kind: r.kind,
            basis: r.basis,
            severity: r.severity,
            title: r.title,
            reason: r.reason,
            resources: r.resources.map(({ arn, native_id, name, type }) => ({ arn, native_id, name, type })),
            finding_ids: r.finding_ids,
          })),
        };
      },
    },
    {
      name: 'graph_drift',
      description:
        'Drift over the last days from snapshot history: resources added, removed and changed (each changed field with before and after), each with who did it (the CloudTrail principal) when known.',
      input: z.object({ days: z.number().int().min(1).max(90).default(7) }),
      async execute(i) {
        const d = await graphDrift(db, tenantId, { days: i.days });
        const item = (x: {
          arn: string;
          native_id: string;
          name: string | null;
          type: string;
          at: string;
          actor: string | null;
          event: string | null;
        }) => ({
          arn: x.arn,
          native_id: x.native_id,
          name: x.name,
          type: x.type,
          at: x.at,
          actor: x.actor,
          event: x.event,
        });
        const short = (v: unknown) => {
          const text = JSON.stringify(v);
          return text && text.length > 300 ? `${text.slice(0, 300)}…` : v;
        };
        return {
          window: d.window,
          added: d.added.slice(0, 50).map(item),
          removed: d.removed.slice(0, 50).map(item),
          changed: d.changed.slice(0, 50).map((c) => ({
            ...item(c),
            fields: c.fields.map((f) => ({ path: f.path, before: short(f.before), after: short(f.after) })),
          })),
          counts: { added: d.added.length, removed: d.removed.length, changed: d.changed.length },
        };
      },
    },
    {
      name: 'what_if',
      description:
        'What fails if a resource fails or an availability zone is lost (computed now on the dependency graph, pools respected): the resources that fail with the path from the trigger, the load balancers (services) that go down, and what is only degraded.',
      input: z
        .object({
          resource: z.string().min(1).optional().describe('An ARN, a native id or a name'),
          availability_zone: z.string().min(1).optional().describe('e.g. us-east-1a'),
        })
        .refine((v) => Boolean(v.resource) !== Boolean(v.availability_zone), {
          message: 'give a resource or an availability_zone',
        }),
      async execute(i) {
        const g = await loadGraph(db, tenantId);
        let seeds: number[];
        let trigger: Record<string, unknown>;
        if (i.resource) {
          const r = await findResource(db, tenantId, i.resource);
          const at = r ? g.byArn.get(r.arn) : undefined;
          if (!r || at === undefined) return { found: false, resource: i.resource };
          seeds = [at];
          trigger = { resource: { arn: r.arn, native_id: r.native_id, name: r.name, type: r.type } };
        } else {
          const az = i.availability_zone!;
          seeds = [];
          g.nodes.forEach((n, k) => {
            if (n.availability_zone !== az) return;
            if (n.type === 'aws_rds_db_instance' && n.facts?.multi_az === true) return;
            seeds.push(k);
          });
          if (!seeds.length) return { found: false, availability_zone: az };
          // The zone's own notable resources that go down with it (a single-AZ database, its NAT gateway…).
          const lost = seeds
            .filter((k) => NOTABLE.has(g.nodes[k]!.type) && g.nodes[k]!.type !== 'aws_vpc_subnet')
            .slice(0, 50)
            .map((k) => {
              const n = g.nodes[k]!;
              return { arn: n.arn, native_id: n.native_id, name: n.name, type: n.type };
            });
          trigger = { availability_zone: az, resources_in_it: seeds.length, lost_in_zone: lost };
        }
        const down = simulateFailure(g, seeds);
        const seedSet = new Set(seeds);
        const reached = new Map<number, { depth: number; via: string[] }>();
        for (const s of seeds)
          for (const x of walk(g, s, 10, 'up'))
            if (!seedSet.has(x.node) && (!reached.has(x.node) || reached.get(x.node)!.depth > x.depth))
              reached.set(x.node, { depth: x.depth, via: x.via });
        const row = (k: number) => {
          const n = g.nodes[k]!;
          const r = reached.get(k);
          return {
            arn: n.arn,
            native_id: n.native_id,
            name: n.name,
            type: n.type,
            depth: r?.depth ?? 0,
            via: r?.via ?? [],
          };
        };
        const notable = NOTABLE;
        const fails = [...reached.keys()].filter((k) => down[k] && notable.has(g.nodes[k]!.type));
        const degraded = [...reached.keys()].filter((k) => !down[k] && notable.has(g.nodes[k]!.type));
        const byDepth = (a: number, b: number) => reached.get(a)!.depth - reached.get(b)!.depth || a - b;
        return {
          ...trigger,
          services_down: fails
            .filter((k) => g.nodes[k]!.type === 'aws_ec2_application_load_balancer')
            .sort(byDepth)
            .map(row),
          fails: fails.sort(byDepth).slice(0, 100).map(row),
          fails_count: fails.length,
          degraded: degraded.sort(byDepth).slice(0, 50).map(row),
          degraded_count: degraded.length,
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
      name: 'runbooks',
      description:
        "Runbooks: the built-in ones per detector family and the team's own. Give a finding id to get the runbooks that apply to that finding, best first; or a resource type, an alert fingerprint or a service; nothing lists them all.",
      input: z.object({
        finding_id: z.string().min(1).max(64).optional(),
        resource_type: z.string().min(1).max(128).optional().describe('e.g. aws_rds_db_instance'),
        alert_fingerprint: z.string().min(1).max(200).optional(),
        service: z.string().min(1).max(128).optional(),
        limit: z.number().int().min(1).max(20).default(5),
      }),
      async execute(i) {
        let found;
        if (i.finding_id) {
          try {
            found = await runbooksForFinding(db, tenantId, i.finding_id);
          } catch (e) {
            if (e instanceof NotFound) return { runbooks: [], count: 0, error: 'No such finding.' };
            throw e;
          }
        } else if (i.resource_type || i.alert_fingerprint) {
          found = await matchRunbooks(db, tenantId, {
            resourceTypes: i.resource_type ? [i.resource_type] : [],
            alertFingerprint: i.alert_fingerprint,
            services: i.service ? [i.service] : [],
          });
        } else {
          found = await listRunbooks(db, tenantId, { service: i.service });
        }
        const runbooks = found.slice(0, i.limit).map((r) => ({
          id: r.id,
          title: r.title,
          service: r.service,
          source: r.source,
          applies_to: r.applies_to,
          steps: r.steps,
        }));
        return { runbooks, count: runbooks.length };
      },
    },
    {
      name: 'add_up',
      description:
        'Add up, from the data itself, the monthly costs of some resources (ARNs, native ids or names) and the monthly savings of some findings (ids): each value with its resource or finding, and the totals (the savings of the findings also with each resource counted once, what fixing them all would save). For any figure an answer would otherwise add up by hand.',
      input: z.object({
        resources: z.array(z.string().min(1)).max(200).default([]),
        findings: z.array(z.string().uuid()).max(200).default([]),
      }),
      async execute(i) {
        const resources = i.resources.length
          ? await db
              .selectFrom('resources')
              .select(['arn', 'native_id', 'name', 'type', 'monthly_cost'])
              .where('tenant_id', '=', tenantId)
              .where('deleted_at', 'is', null)
              .where((eb) =>
                eb.or([
                  eb('arn', 'in', i.resources),
                  eb('native_id', 'in', i.resources),
                  eb('name', 'in', i.resources),
                ]),
              )
              .orderBy('monthly_cost', 'desc')
              .limit(500)
              .execute()
          : [];
        const findings = i.findings.length
          ? await db
              .selectFrom('findings')
              .select(['id', 'title', 'estimated_savings as monthly_savings'])
              .where('tenant_id', '=', tenantId)
              .where('id', 'in', i.findings)
              .orderBy('estimated_savings', 'desc')
              .execute()
          : [];
        // Cents, so the totals are exact.
        const cents = (v: unknown) => Math.round(Number(v ?? 0) * 100);
        const found = new Set(resources.flatMap((r) => [r.arn, r.native_id, r.name ?? '']));
        return {
          resources: resources.map((r) => ({
            ...r,
            monthly_cost: r.monthly_cost === null ? null : Number(r.monthly_cost),
          })),
          resources_monthly_cost_total: resources.reduce((t, r) => t + cents(r.monthly_cost), 0) / 100,
          findings: findings.map((f) => ({
            ...f,
            monthly_savings: f.monthly_savings === null ? null : Number(f.monthly_savings),
          })),
          findings_monthly_savings_total: findings.reduce((t, f) => t + cents(f.monthly_savings), 0) / 100,
          // What fixing them all would save: alternatives on one resource (delete or migrate a volume)
          // count once, at the larger, as savings_summary counts the whole tenant.
          findings_monthly_savings_each_resource_once: findings.length
            ? (
                await savingsTotal(
                  db,
                  tenantId,
                  undefined,
                  findings.map((f) => f.id),
                )
              ).monthly
            : 0,
          not_found: [
            ...i.resources.filter((r: string) => !found.has(r)),
            ...i.findings.filter((id: string) => !findings.some((f) => f.id === id)),
          ],
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

/** Tenants whose built tools are kept per database handle (the least recently used beyond it are dropped). */
export const TOOL_CACHE_TENANTS = 1000;
const builtTools = new WeakMap<Db, Map<string, readonly AgentTool[]>>();

/**
 * The agent's tools for one tenant, built once and kept: building them makes every tool's zod input
 * schema again, about 1 ms of CPU, which every agent turn paid before its first model step (a sixth of
 * the worker's CPU per turn under load, bench/runs (e)). The tools hold nothing but the database handle
 * and the tenant id, so one frozen list serves every turn of the tenant.
 */
export function agentToolsFor(db: Db, tenantId: string, capacity = TOOL_CACHE_TENANTS): readonly AgentTool[] {
  let byTenant = builtTools.get(db);
  if (!byTenant) builtTools.set(db, (byTenant = new Map()));
  let tools = byTenant.get(tenantId);
  if (tools) {
    // Most recently used last, so the first key is the one to drop.
    byTenant.delete(tenantId);
  } else {
    tools = Object.freeze(buildAgentTools(db, tenantId).map((t) => Object.freeze(t)));
    if (byTenant.size >= capacity) byTenant.delete(byTenant.keys().next().value!);
  }
  byTenant.set(tenantId, tools);
  return tools;
}

/** The tool catalog of a tenant: name, description and input schema. */
export function availableTools(_tenant: { id: string; tier: string }): ToolInfo[] {
  return TOOL_NAMES.map((t) => {
    const schema = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: t.name, description: t.description, input_schema: schema };
  });
}
