/** Agent tools: the graph (blast radius, risks, drift, what a failure takes down). */
import { z } from 'zod';
import { blastRadius, simulateFailure, walk } from '../../graph';
import { graphDrift } from '../../graph';
import { graphRisks } from '../../graph';
import { loadGraph } from '../../graph';
import { ResourceRef, findResource, NOTABLE } from './shared';
import { defineTool } from '../../define-tool';

export const blast_radius = defineTool({
  name: 'blast_radius',
  description:
    'What stops working if a resource fails or is deleted: its dependents by dependency depth, each with the path and edge kinds that make it impacted, and whether it fails or is only degraded (keeps part of a pool).',
  input: ResourceRef.extend({ depth: z.number().int().min(1).max(10).default(3) }),
  async execute(i, { db, tenantId }) {
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
});

export const graph_risks = defineTool({
  name: 'graph_risks',
  description:
    'Single points of failure (graph SPOFs of service paths, and configuration SPOFs: single-AZ databases, capacity-1 groups, one NAT gateway for several AZs) and cross-domain toxic combinations, most severe first, each with its resources and the finding ids it combines.',
  input: z.object({
    kind: z.enum(['spof', 'toxic_combination']).optional(),
    limit: z.number().int().min(1).max(50).default(20),
  }),
  async execute(i, { db, tenantId }) {
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
});

export const graph_drift = defineTool({
  name: 'graph_drift',
  description:
    'Drift over the last days from snapshot history: resources added, removed and changed (each changed field with before and after), each with who did it (the CloudTrail principal) when known.',
  input: z.object({ days: z.number().int().min(1).max(90).default(7) }),
  async execute(i, { db, tenantId }) {
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
});

export const what_if = defineTool({
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
  async execute(i, { db, tenantId }) {
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
});

/** This group's tools, in catalog order. */
export const GRAPH_TOOLS = [blast_radius, graph_risks, graph_drift, what_if] as const;
