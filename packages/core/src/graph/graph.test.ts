import { describe, expect, it } from 'vitest';
import { buildWorld } from '@opsi/inventory';
import { blastRadius, simulateFailure } from './analysis';
import { asDependency, DEPENDENCY_RULES, dependentEndSql } from './dependency';
import { inferEdges } from './infer';
import { factsOf } from './facts';
import { InfraGraph, type GraphEdge, type GraphNodeData } from './model';
import { computeRisks, spofsOfEntry } from './risks';
import { computeScenarios } from './scenarios';

/** The seeded demo as the graph would load it, without a database. */
function demo(withStoredEdges: boolean) {
  const { world } = buildWorld({ seed: 42, size: 'small', epoch: '2026-11-01', day: 0, commands: [] });
  const resources = [...world.resources.values()].sort((a, b) => (a.arn < b.arn ? -1 : 1));
  const nodes: GraphNodeData[] = resources.map((r, i) => ({
    id: `id-${i}`,
    arn: r.arn,
    native_id: r.nativeId,
    type: r.type,
    name: r.name,
    account_id: r.accountId,
    region: r.region,
    availability_zone: r.availabilityZone,
    service: r.tags.service ?? null,
    classification: r.tags.DataClassification ?? null,
    facts: factsOf(r.type, r.attributes),
  }));
  const index = new Map(nodes.map((n, i) => [n.arn, i]));
  const stored: GraphEdge[] = [...world.edges.values()].map((e) => ({
    from: index.get(e.from)!,
    to: index.get(e.to)!,
    kind: e.kind,
    source: e.source,
    confidence: e.confidence,
    inferred: e.source.startsWith('inferred:'),
    derived: false,
    evidence: null,
  }));
  const edges = withStoredEdges ? stored : [];
  return { nodes, stored, graph: new InfraGraph(nodes, [...edges, ...inferEdges(nodes, edges)]) };
}

const byName = (g: InfraGraph, name: string, type?: string) =>
  g.nodes.findIndex((n) => n.name === name && (!type || n.type === type));

describe('the dependency rules', () => {
  it('read each edge kind one way, with the exceptions they name', () => {
    const dep = (kind: string, fromType = 'x', toType = 'y') =>
      asDependency({ kind, from: 'F', to: 'T', fromType, toType });
    expect(dep('member-of')).toEqual({ dependent: 'F', dependency: 'T', needs: 'each' });
    expect(dep('member-of', 'aws_ec2_autoscaling_group')).toBeNull();
    expect(dep('attached-to')).toEqual({ dependent: 'T', dependency: 'F', needs: 'each' });
    expect(dep('contains')).toEqual({ dependent: 'T', dependency: 'F', needs: 'each' });
    expect(dep('targets')).toEqual({ dependent: 'F', dependency: 'T', needs: 'any' });
    expect(dep('routes-to', 'aws_ec2_application_load_balancer')?.needs).toBe('any');
    expect(dep('routes-to', 'aws_vpc_route_table')?.needs).toBe('each');
    expect(dep('monitors')).toBeNull();
    expect(dep('some-new-kind')).toBeNull();
  });

  it('gives the same reading as SQL', () => {
    const expr = dependentEndSql('e.kind', 'ft', 'tt');
    for (const r of DEPENDENCY_RULES) expect(expr).toContain(`e.kind = '${r.kind}'`);
  });
});

describe('inferred dependencies', () => {
  it('recover every dependency the demo states, from the attributes alone, with evidence', () => {
    const withEdges = demo(true);
    const bare = demo(false);
    const pair = (g: InfraGraph, e: GraphEdge) => {
      const d = asDependency({ ...e, fromType: g.nodes[e.from]!.type, toType: g.nodes[e.to]!.type });
      return d ? `${d.dependent}|${d.dependency}` : null;
    };
    const inferred = new Set(bare.graph.edges.map((e) => pair(bare.graph, e)));
    const covered = [
      ['aws_ec2_instance', 'member-of', 'aws_vpc_subnet'],
      ['aws_vpc_subnet', 'depends-on', 'aws_vpc_route_table'],
      ['aws_vpc_route_table', 'routes-to', 'aws_vpc_nat_gateway'],
      ['aws_vpc_route_table', 'routes-to', 'aws_vpc_internet_gateway'],
      ['aws_ec2_target_group', 'targets', 'aws_ec2_instance'],
      ['aws_ec2_application_load_balancer', 'routes-to', 'aws_ec2_target_group'],
      ['aws_route53_record', 'resolves-to', 'aws_ec2_application_load_balancer'],
      ['aws_ec2_instance', 'uses-role', 'aws_iam_role'],
    ];
    let checked = 0;
    for (const e of withEdges.stored) {
      const key = [withEdges.nodes[e.from]!.type, e.kind, withEdges.nodes[e.to]!.type];
      if (!covered.some((c) => c.join() === key.join())) continue;
      expect(inferred.has(pair(withEdges.graph, e)), key.join(' ')).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
    // app → database through security-group references: the checkout instances and the payments db.
    const db = byName(bare.graph, 'prod-payments-db');
    const apps = bare.graph.edges.filter((e) => e.to === db && e.source === 'inferred:security-group-rule');
    expect(apps.map((e) => bare.graph.nodes[e.from]!.name).sort()).toEqual([
      'checkout-api-1',
      'checkout-api-2',
      'checkout-api-3',
    ]);
    expect(apps[0]!.confidence).toBeLessThan(1);
    expect(apps[0]!.evidence).toMatch(/admits tcp 3306 from sg-/);
    expect(bare.graph.edges.every((e) => e.derived && e.source.startsWith('inferred:') && e.evidence)).toBe(
      true,
    );
  });

  it('add nothing a stored edge already states', () => {
    const { graph, stored } = demo(true);
    expect(graph.edges.filter((e) => e.derived).length).toBe(graph.edges.length - stored.length);
    expect(graph.edges.filter((e) => e.derived)).toEqual([]);
  });
});

describe('failure analysis on the demo graph', () => {
  const { graph: g } = demo(true);
  const nat = byName(g, 'prod-nat-1a', 'aws_vpc_nat_gateway');
  const alb = byName(g, 'checkout-alb');
  const tg = byName(g, 'checkout-tg');

  it('a pool fails only when all of it fails', () => {
    const one = byName(g, 'checkout-api-1');
    const down = simulateFailure(g, [one]);
    expect(down[tg]).toBe(0);
    const all = simulateFailure(
      g,
      ['checkout-api-1', 'checkout-api-2', 'checkout-api-3'].map((n) => byName(g, n)),
    );
    expect(all[tg]).toBe(1);
    expect(all[alb]).toBe(1);
  });

  it('the NAT gateway all checkout instances route through is a SPOF of the checkout path; one instance is not', () => {
    const spofs = spofsOfEntry(g, alb).map((s) => g.nodes[s.node]!.name);
    expect(spofs).toContain('prod-nat-1a');
    expect(spofs).toContain('prod-payments-db');
    expect(spofs).not.toContain('checkout-api-1');
    const blast = blastRadius(g, nat, 10);
    expect(blast.impacted.find((x) => x.node === alb)?.impact).toBe('fails');
  });

  it('risks and scenarios are deterministic', () => {
    expect(computeRisks(g, [])).toEqual(computeRisks(g, []));
    expect(computeScenarios(g).map((f) => f.id)).toEqual(computeScenarios(g).map((f) => f.id));
  });
});
