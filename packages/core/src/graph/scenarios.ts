import { maskNodes, simulateFailure } from './analysis';
import type { GraphNodeData, InfraGraph } from './model';
import { natServedSubnets, serviceEntries, stableId, type Severity } from './risks';

export type Scenario = 'az_loss' | 'nat_loss' | 'role_revocation' | 'single_instance';

/** A hypothetical failure and what it takes down, computed from the graph. */
export interface ResilienceFinding {
  id: string;
  scenario: Scenario;
  title: string;
  severity: Severity;
  /** What fails: an AZ name, or the resource that fails or is revoked. */
  trigger: { kind: 'availability_zone' | 'resource'; ref: string; node: number | null };
  /** Node indexes with the path that makes each impacted (from the trigger's failed set). */
  impacted: Array<{ node: number; path: number[] }>;
  reason: string;
  recommendation: string;
}

const label = (n: GraphNodeData) =>
  n.name && n.name !== n.native_id ? `${n.name} (${n.native_id})` : n.native_id;
/** The kinds of impacted resources a finding lists (not every volume and security group). */
const NOTABLE = new Set([
  'aws_ec2_instance',
  'aws_ec2_autoscaling_group',
  'aws_ec2_target_group',
  'aws_ec2_application_load_balancer',
  'aws_route53_record',
  'aws_rds_db_instance',
  'aws_elasticache_replication_group',
  'aws_vpc_nat_gateway',
  'aws_vpc_subnet',
  'aws_vpc_route_table',
]);
const MAX_IMPACTED = 200;

/** For each failed node, the path from a trigger node to it, by walking back through failed dependencies. */
function pathsTo(g: InfraGraph, down: Uint8Array, seeds: number[]): Map<number, number[]> {
  const parent = new Map<number, number>();
  const seen = new Set(seeds);
  const queue = [...seeds];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head]!;
    for (const arc of g.dependentArcs(at)) {
      const d = g.arcDependent[arc]!;
      if (!down[d] || seen.has(d)) continue;
      seen.add(d);
      parent.set(d, at);
      queue.push(d);
    }
  }
  const out = new Map<number, number[]>();
  for (const n of seen) {
    const path = [n];
    let at = n;
    while (parent.has(at)) {
      at = parent.get(at)!;
      path.push(at);
    }
    out.set(n, path.reverse());
  }
  return out;
}

function impactedOf(g: InfraGraph, down: Uint8Array, seeds: number[], exclude = new Set<number>()) {
  const paths = pathsTo(g, down, seeds);
  return maskNodes(down)
    .filter((i) => NOTABLE.has(g.nodes[i]!.type) && !exclude.has(i))
    .sort((a, b) => (paths.get(a)?.length ?? 99) - (paths.get(b)?.length ?? 99) || a - b)
    .slice(0, MAX_IMPACTED)
    .map((node) => ({ node, path: paths.get(node) ?? [node] }));
}

const names = (g: InfraGraph, nodes: number[], max = 6) =>
  nodes
    .slice(0, max)
    .map((i) => label(g.nodes[i]!))
    .join(', ') + (nodes.length > max ? ` and ${nodes.length - max} more` : '');

/**
 * The resilience engine's scenarios over one graph: loss of each availability zone, loss of each NAT
 * gateway that serves more than its own AZ or a service, a single instance behind a service, and the
 * revocation of each IAM role something uses. Each finding names its trigger, what it takes down (with
 * the path), why, and what to do.
 */
export function computeScenarios(g: InfraGraph): ResilienceFinding[] {
  const out: ResilienceFinding[] = [];
  const entries = serviceEntries(g);
  const byType = (nodes: number[], type: string) => nodes.filter((i) => g.nodes[i]!.type === type);

  // ---- loss of an availability zone ----
  const azNodes = new Map<string, number[]>();
  g.nodes.forEach((n, i) => {
    if (!n.availability_zone) return;
    // A Multi-AZ database fails over to its standby: it does not go with its primary's AZ.
    if (n.type === 'aws_rds_db_instance' && n.facts?.multi_az === true) return;
    const list = azNodes.get(n.availability_zone) ?? [];
    list.push(i);
    azNodes.set(n.availability_zone, list);
  });
  for (const [az, seeds] of [...azNodes].sort(([a], [b]) => a.localeCompare(b))) {
    const down = simulateFailure(g, seeds);
    const seedSet = new Set(seeds);
    const failed = maskNodes(down);
    const groups = g.nodes
      .map((n, i) => ({ n, i }))
      .filter(({ n, i }) => {
        if (n.type !== 'aws_ec2_autoscaling_group') return false;
        const inst = g.dependentArcs(i); // instances depend on their group (contains)
        const members = [...inst]
          .map((a) => g.arcDependent[a]!)
          .filter((m) => g.nodes[m]!.type === 'aws_ec2_instance');
        return members.length > 0 && members.every((m) => down[m]);
      })
      .map(({ i }) => i);
    const dbs = byType(seeds, 'aws_rds_db_instance');
    const nats = byType(seeds, 'aws_vpc_nat_gateway').filter((nat) =>
      natServedSubnets(g, nat).some((s) => g.nodes[s]!.availability_zone !== az),
    );
    const lbs = byType(failed, 'aws_ec2_application_load_balancer');
    const lost = [...groups, ...dbs, ...nats, ...lbs];
    if (!lost.length) continue;
    const impacted = impactedOf(g, down, seeds);
    // Groups, databases, NAT paths and load balancers first, then what depends on them.
    const head = new Set(lost);
    const ordered = [
      ...lost.map((node) => impacted.find((x) => x.node === node) ?? { node, path: [node] }),
      ...impacted.filter((x) => !head.has(x.node) && !seedSet.has(x.node)),
      ...impacted.filter((x) => !head.has(x.node) && seedSet.has(x.node)),
    ].slice(0, MAX_IMPACTED);
    const parts = [
      groups.length ? `groups with all their capacity there: ${names(g, groups)}` : '',
      dbs.length ? `single-AZ databases: ${names(g, dbs)}` : '',
      nats.length ? `NAT gateways other AZs route through: ${names(g, nats)}` : '',
      lbs.length ? `load balancers left with no working target: ${names(g, lbs)}` : '',
    ].filter(Boolean);
    out.push({
      id: stableId('rf', 'az_loss', az),
      scenario: 'az_loss',
      title: `Loss of ${az}: ${[
        groups.length ? `${groups.length} group${groups.length === 1 ? '' : 's'}` : '',
        dbs.length ? `${dbs.length} database${dbs.length === 1 ? '' : 's'}` : '',
        nats.length ? `${nats.length} shared NAT path${nats.length === 1 ? '' : 's'}` : '',
        lbs.length ? `${lbs.length} load balancer${lbs.length === 1 ? '' : 's'}` : '',
      ]
        .filter(Boolean)
        .join(', ')} lose all capacity`,
      severity: lbs.length || dbs.length ? 'critical' : 'high',
      trigger: { kind: 'availability_zone', ref: az, node: null },
      impacted: ordered,
      reason: `If ${az} fails, these lose all capacity: ${parts.join('; ')}. ${failed.length} resources fail in all.`,
      recommendation:
        'Spread each group over at least two AZs, run databases Multi-AZ, give every AZ its own NAT gateway (and route table), and keep load balancer targets in several AZs.',
    });
  }

  // ---- loss of a NAT gateway ----
  g.nodes.forEach((n, nat) => {
    if (n.type !== 'aws_vpc_nat_gateway') return;
    const down = simulateFailure(g, [nat]);
    const subnets = natServedSubnets(g, nat);
    const otherAzs = [...new Set(subnets.map((s) => g.nodes[s]!.availability_zone))].filter(
      (az) => az && az !== n.availability_zone,
    );
    const lbs = entries.filter((e) => down[e]);
    if (!otherAzs.length && !lbs.length) return;
    out.push({
      id: stableId('rf', 'nat_loss', n.arn),
      scenario: 'nat_loss',
      title: `Loss of NAT gateway ${label(n)} cuts egress for ${subnets.length} subnet${subnets.length === 1 ? '' : 's'}${lbs.length ? ` and takes down ${names(g, lbs, 3)}` : ''}`,
      severity: lbs.length ? 'critical' : 'high',
      trigger: { kind: 'resource', ref: n.arn, node: nat },
      impacted: impactedOf(g, down, [nat], new Set([nat])),
      reason: `${names(g, subnets)} route 0.0.0.0/0 through ${label(n)} in ${n.availability_zone ?? '?'}${otherAzs.length ? `, including subnets of ${otherAzs.join(', ')}` : ''}.`,
      recommendation:
        'Create a NAT gateway in each AZ and give each AZ’s private subnets a route table whose default route uses the NAT gateway of the same AZ.',
    });
  });

  // ---- a single instance behind a service ----
  g.nodes.forEach((n, i) => {
    let members: number[];
    let what: string;
    if (n.type === 'aws_ec2_target_group') {
      members = [...g.dependencyArcs(i)]
        .map((a) => g.arcDependency[a]!)
        .filter((m) => g.nodes[m]!.type === 'aws_ec2_instance');
      what = 'target group';
    } else if (n.type === 'aws_ec2_autoscaling_group') {
      if (Number(n.facts?.desired_capacity) > 1) return;
      members = [...g.dependentArcs(i)]
        .map((a) => g.arcDependent[a]!)
        .filter((m) => g.nodes[m]!.type === 'aws_ec2_instance');
      what = 'auto scaling group';
    } else return;
    const live = [...new Set(members)].filter((m) => {
      const s = g.nodes[m]!.facts?.instance_state;
      return s === undefined || s === 'running';
    });
    if (live.length !== 1) return;
    const only = live[0]!;
    const down = simulateFailure(g, [only]);
    const lbs = entries.filter((e) => down[e]);
    out.push({
      id: stableId('rf', 'single_instance', n.arn),
      scenario: 'single_instance',
      title: `${label(g.nodes[only]!)} is the only instance behind ${what} ${label(n)}`,
      severity: lbs.length ? 'critical' : 'high',
      trigger: { kind: 'resource', ref: g.nodes[only]!.arn, node: only },
      impacted: [{ node: i, path: [only, i] }, ...impactedOf(g, down, [only], new Set([only, i]))],
      reason: `${what[0]!.toUpperCase()}${what.slice(1)} ${label(n)} has one running instance; when it fails or is replaced, ${lbs.length ? names(g, lbs) : label(n)} ${lbs.length ? 'serve' : 'serves'} nothing until a new one is up.`,
      recommendation: 'Run at least two instances in two AZs (min_size and desired_capacity of 2 or more).',
    });
  });

  // ---- revocation of an IAM role ----
  g.nodes.forEach((n, role) => {
    if (n.type !== 'aws_iam_role') return;
    const users = [...g.dependentArcs(role)]
      .map((a) => g.arcDependent[a]!)
      .filter((u) => g.nodes[u]!.type === 'aws_ec2_instance');
    if (!users.length) return;
    const grants = [...g.dependencyArcs(role)].map((a) => g.arcDependency[a]!);
    const down = simulateFailure(g, [role]);
    const lbs = entries.filter((e) => down[e]);
    out.push({
      id: stableId('rf', 'role_revocation', n.arn),
      scenario: 'role_revocation',
      title: `Revoking ${label(n)} cuts ${users.length} instance${users.length === 1 ? '' : 's'} off${grants.length ? ` from ${names(g, grants, 3)}` : ''}`,
      severity: lbs.length ? 'high' : 'medium',
      trigger: { kind: 'resource', ref: n.arn, node: role },
      impacted: [
        ...impactedOf(g, down, [role], new Set([role])),
        ...grants.map((gr) => ({ node: gr, path: [role, gr] })),
      ],
      reason: `${names(g, users)} use${users.length === 1 ? 's' : ''} ${label(n)}${grants.length ? `, whose policy grants access to ${names(g, grants)}` : ''}; without it they lose that access${lbs.length ? `, and ${names(g, lbs)} fail${lbs.length === 1 ? 's' : ''} with them` : ''}.`,
      recommendation:
        'Before changing or revoking the role, move its users to a replacement role with the same grants; keep roles per service so one revocation has a small blast radius.',
    });
  });
  const rank = { critical: 4, high: 3, medium: 2, low: 1 };
  return out.sort((a, b) => rank[b.severity] - rank[a.severity] || a.title.localeCompare(b.title));
}
