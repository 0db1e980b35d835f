import { createHash } from 'node:crypto';
import { dependenciesOf } from './analysis';
import type { GraphNodeData, InfraGraph } from './model';

export type Severity = 'critical' | 'high' | 'medium' | 'low';
export const SEVERITY_RANK: Record<string, number> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 };

/** An open finding on a resource, as risks and health read it. */
export interface OpenFinding {
  id: string;
  arn: string;
  check_id: string;
  severity: string;
  domain: string;
  title: string;
}

export interface Risk {
  id: string;
  kind: 'spof' | 'toxic_combination';
  /** What made it a risk: 'graph' (the dependency graph of a service path) or the configuration check. */
  basis: string;
  title: string;
  severity: Severity;
  reason: string;
  /** Node indexes, the main one first. */
  resources: number[];
  finding_ids: string[];
}

export function stableId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash('sha1').update(parts.join('|')).digest('hex').slice(0, 16)}`;
}

const label = (n: GraphNodeData) =>
  n.name && n.name !== n.native_id ? `${n.name} (${n.native_id})` : n.native_id;
const arr = (v: unknown): Array<Record<string, unknown>> =>
  Array.isArray(v) ? (v as Array<Record<string, unknown>>) : [];

/**
 * Whether a node can fail on its own as a unit (the candidates for a SPOF): instances, NAT gateways (one
 * AZ each), single-AZ databases and caches without failover. An Internet gateway is a regional,
 * redundant AWS service, and a Multi-AZ database or a cache with automatic failover has a standby.
 */
function canFailAlone(n: GraphNodeData): boolean {
  switch (n.type) {
    case 'aws_ec2_instance':
    case 'aws_vpc_nat_gateway':
      return true;
    case 'aws_rds_db_instance':
      return n.facts?.multi_az !== true;
    case 'aws_elasticache_replication_group':
      return n.facts?.automatic_failover !== 'enabled';
    default:
      return false;
  }
}
const DATA_TYPES = new Set([
  'aws_rds_db_instance',
  'aws_s3_bucket',
  'aws_dynamodb_table',
  'aws_elasticache_replication_group',
]);

export function findingsByArn(findings: OpenFinding[]): Map<string, OpenFinding[]> {
  const m = new Map<string, OpenFinding[]>();
  for (const f of findings) {
    const list = m.get(f.arn) ?? [];
    list.push(f);
    m.set(f.arn, list);
  }
  return m;
}

/** Entry points of service paths: load balancers that forward somewhere. */
export function serviceEntries(g: InfraGraph): number[] {
  const out: number[] = [];
  g.nodes.forEach((n, i) => {
    if (n.type === 'aws_ec2_application_load_balancer' && g.dependencyArcs(i).length > 0) out.push(i);
  });
  return out;
}

/**
 * Single points of failure of one service path: the nodes of the entry's dependency subgraph whose
 * failure alone leaves the entry with no working path (articulation points between the entry and what
 * it needs, with pools respected: one of three targets is not one, the NAT gateway all three route
 * through is). Simulated inside the subgraph, so the cost is the subgraph's, not the estate's.
 */
export function spofsOfEntry(
  g: InfraGraph,
  entry: number,
): Array<{ node: number; path: number[]; via: string[] }> {
  const closure = dependenciesOf(g, entry, 12);
  const inside = new Set<number>([entry, ...closure.map((r) => r.node)]);
  const out: Array<{ node: number; path: number[]; via: string[] }> = [];
  for (const c of closure) {
    if (!canFailAlone(g.nodes[c.node]!)) continue;
    if (failsWithin(g, inside, c.node, entry)) out.push({ node: c.node, path: c.path, via: c.via });
  }
  return out;
}

function failsWithin(g: InfraGraph, inside: Set<number>, failed: number, target: number): boolean {
  const down = new Set<number>([failed]);
  const poolLeft = new Map<number, number>();
  const queue = [failed];
  for (let head = 0; head < queue.length; head++) {
    for (const arc of g.dependentArcs(queue[head]!)) {
      const d = g.arcDependent[arc]!;
      if (!inside.has(d) || down.has(d)) continue;
      if (g.arcNeedsAny[arc]) {
        let left = poolLeft.get(d);
        if (left === undefined) {
          left = 0;
          for (const a of g.dependencyArcs(d)) if (g.arcNeedsAny[a]) left++;
        }
        poolLeft.set(d, --left);
        if (left > 0) continue;
      }
      if (d === target) return true;
      down.add(d);
      queue.push(d);
    }
  }
  return false;
}

/** Subnets (and their AZs) whose default route goes through a NAT gateway: its dependents within 2 hops. */
export function natServedSubnets(g: InfraGraph, nat: number): number[] {
  const out: number[] = [];
  for (const arc of g.dependentArcs(nat)) {
    const rt = g.arcDependent[arc]!;
    if (g.nodes[rt]!.type !== 'aws_vpc_route_table') continue;
    for (const a of g.dependentArcs(rt)) {
      const s = g.arcDependent[a]!;
      if (g.nodes[s]!.type === 'aws_vpc_subnet') out.push(s);
    }
  }
  return [...new Set(out)];
}

/** Security groups of an instance that admit traffic from the whole Internet. */
export function openSecurityGroups(g: InfraGraph, instance: number): number[] {
  const n = g.nodes[instance]!;
  const out: number[] = [];
  for (const sg of arr(n.facts?.security_groups)) {
    const i = g.byNativeId.get(String(sg.group_id));
    if (i === undefined) continue;
    if (arr(g.nodes[i]!.facts?.rules).some(isOpenIngress)) out.push(i);
  }
  return out;
}

const isOpenIngress = (r: Record<string, unknown>) =>
  (r.type ?? 'ingress') === 'ingress' && (r.cidr_ipv4 === '0.0.0.0/0' || r.cidr_ipv6 === '::/0');

/** Running instances with a public address behind a security group open to the Internet. */
export function exposedInstances(g: InfraGraph): number[] {
  const out: number[] = [];
  g.nodes.forEach((n, i) => {
    if (n.type !== 'aws_ec2_instance' || !n.facts?.public_ip_address) return;
    if (n.facts.instance_state !== undefined && n.facts.instance_state !== 'running') return;
    if (openSecurityGroups(g, i).length) out.push(i);
  });
  return out;
}

/**
 * The risks of a graph: graph single points of failure of every service path, configuration SPOFs
 * (single-AZ database, capacity-1 or single-AZ group, single-AZ load balancer, one NAT gateway for
 * several AZs, a cache without failover), and cross-domain toxic combinations (an Internet-exposed
 * instance that reaches a data store with security and reliability findings, or sensitive data). Most
 * severe first.
 */
export function computeRisks(g: InfraGraph, findings: OpenFinding[]): Risk[] {
  const byArn = findingsByArn(findings);
  const findingIds = (nodes: number[]) =>
    [...new Set(nodes.flatMap((i) => (byArn.get(g.nodes[i]!.arn) ?? []).map((f) => f.id)))].sort();
  const spofs = new Map<number, Risk>();
  const configSpof = (node: number, severity: Severity, title: string, reason: string, basis: string) => {
    const existing = spofs.get(node);
    if (existing) {
      existing.reason += ` ${reason}`;
      existing.basis += `,${basis}`;
      if (SEVERITY_RANK[severity]! > SEVERITY_RANK[existing.severity]!) existing.severity = severity;
      return;
    }
    spofs.set(node, {
      id: stableId('risk', 'spof', g.nodes[node]!.arn),
      kind: 'spof',
      basis,
      title,
      severity,
      reason,
      resources: [node],
      finding_ids: [],
    });
  };

  // ---- configuration SPOFs ----
  g.nodes.forEach((n, i) => {
    const f = n.facts;
    if (!f) return;
    const name = label(n);
    if (n.type === 'aws_rds_db_instance' && f.multi_az === false)
      configSpof(
        i,
        'high',
        `Single-AZ database ${name}`,
        `${name} runs in ${n.availability_zone ?? 'one AZ'} only (multi_az = false): losing that AZ loses the database.`,
        'single_az_database',
      );
    if (n.type === 'aws_ec2_autoscaling_group') {
      const azs = Array.isArray(f.availability_zones) ? f.availability_zones.length : 0;
      const desired = Number(f.desired_capacity);
      const max = Number(f.max_size);
      if (desired <= 1 || max <= 1)
        configSpof(
          i,
          'high',
          `Capacity-1 group ${name}`,
          `${name} runs ${desired} instance (desired ${desired}, max ${max}): one instance failing stops the service.`,
          'capacity_one_group',
        );
      if (azs === 1)
        configSpof(
          i,
          'medium',
          `Single-AZ group ${name}`,
          `${name} places instances in one AZ (${String((f.availability_zones as unknown[])[0])}).`,
          'single_az_group',
        );
    }
    if (n.type === 'aws_ec2_application_load_balancer' && arr(f.availability_zones).length < 2)
      configSpof(
        i,
        'medium',
        `Single-AZ load balancer ${name}`,
        `${name} is enabled in fewer than two AZs.`,
        'single_az_load_balancer',
      );
    if (n.type === 'aws_elasticache_replication_group' && f.automatic_failover !== 'enabled')
      configSpof(
        i,
        'medium',
        `Cache without failover ${name}`,
        `${name} has automatic failover ${String(f.automatic_failover)}: its primary is a single point of failure.`,
        'cache_no_failover',
      );
    if (n.type === 'aws_vpc_nat_gateway') {
      const subnets = natServedSubnets(g, i);
      const azs = [...new Set(subnets.map((s) => g.nodes[s]!.availability_zone).filter(Boolean))].sort();
      const others = azs.filter((az) => az !== n.availability_zone);
      if (others.length > 0 && azs.length > 1) {
        configSpof(
          i,
          'high',
          `One NAT gateway ${name} serves ${azs.length} AZs`,
          `The private subnets of ${azs.join(', ')} route 0.0.0.0/0 through ${name} in ${n.availability_zone ?? '?'}: losing it (or its AZ) cuts egress for all of them.`,
          'nat_many_azs',
        );
        spofs.get(i)!.resources.push(...subnets);
      }
    }
  });

  // ---- graph SPOFs of every service path ----
  const entriesBySpof = new Map<number, Array<{ entry: number; via: string[] }>>();
  for (const entry of serviceEntries(g))
    for (const s of spofsOfEntry(g, entry)) {
      const list = entriesBySpof.get(s.node) ?? [];
      list.push({ entry, via: s.via });
      entriesBySpof.set(s.node, list);
    }
  for (const [node, entries] of entriesBySpof) {
    const n = g.nodes[node]!;
    const names = entries.map((e) => label(g.nodes[e.entry]!));
    const reason = `If ${label(n)} fails, ${names.slice(0, 5).join(', ')}${names.length > 5 ? ` and ${names.length - 5} more` : ''} lose${names.length === 1 ? 's' : ''} every working path (through ${[...new Set(entries[0]!.via)].join(', ')}).`;
    const severity: Severity =
      n.type === 'aws_rds_db_instance' || n.type === 'aws_elasticache_replication_group' || entries.length > 1
        ? 'critical'
        : 'high';
    const existing = spofs.get(node);
    if (existing) {
      existing.reason += ` ${reason}`;
      existing.basis = `graph,${existing.basis}`;
      if (SEVERITY_RANK[severity]! > SEVERITY_RANK[existing.severity]!) existing.severity = severity;
      existing.resources.push(...entries.map((e) => e.entry));
    } else {
      spofs.set(node, {
        id: stableId('risk', 'spof', n.arn),
        kind: 'spof',
        basis: 'graph',
        title: `${label(n)} is a single point of failure for ${names.length === 1 ? names[0] : `${names.length} services`}`,
        severity,
        reason,
        resources: [node, ...entries.map((e) => e.entry)],
        finding_ids: [],
      });
    }
  }
  const risks: Risk[] = [...spofs.values()];
  for (const r of risks) {
    r.resources = [...new Set(r.resources)];
    r.finding_ids = findingIds([r.resources[0]!]);
  }

  // ---- cross-domain toxic combinations ----
  const exposed = exposedInstances(g);
  const reachedBy = new Map<number, { instances: Set<number>; via: Set<number> }>();
  const reach = (store: number, inst: number, via: number[]) => {
    const r = reachedBy.get(store) ?? { instances: new Set<number>(), via: new Set<number>() };
    r.instances.add(inst);
    for (const v of via) r.via.add(v);
    reachedBy.set(store, r);
  };
  const exposedSgs = new Map<number, number[]>();
  for (const inst of exposed) {
    exposedSgs.set(inst, openSecurityGroups(g, inst));
    // what it needs (its role's grants included)
    for (const r of dependenciesOf(g, inst, 3))
      if (DATA_TYPES.has(g.nodes[r.node]!.type)) reach(r.node, inst, r.path.slice(1, -1));
  }
  // what it can open a connection to: databases whose security groups admit the world or its groups
  g.nodes.forEach((n, db) => {
    if (n.type !== 'aws_rds_db_instance') return;
    for (const sgRef of arr(n.facts?.vpc_security_groups)) {
      const sg = g.byNativeId.get(String(sgRef.vpc_security_group_id));
      if (sg === undefined) continue;
      for (const rule of arr(g.nodes[sg]!.facts?.rules)) {
        if ((rule.type ?? 'ingress') !== 'ingress') continue;
        for (const inst of exposed) {
          const instSgs = arr(g.nodes[inst]!.facts?.security_groups).map((x) => String(x.group_id));
          const sameVpc = g.nodes[inst]!.facts?.vpc_id === g.nodes[sg]!.facts?.vpc_id;
          // A rule open to the world admits an instance from anywhere only if the database has a public
          // endpoint; otherwise only from inside its VPC.
          const open = isOpenIngress(rule) && (n.facts?.publicly_accessible === true || sameVpc);
          if (open || (sameVpc && instSgs.includes(String(rule.referenced_group_id)))) reach(db, inst, [sg]);
        }
      }
    }
  });
  for (const [store, r] of reachedBy) {
    const s = g.nodes[store]!;
    const own = byArn.get(s.arn) ?? [];
    const domains = [...new Set(own.map((f) => f.domain))].sort();
    const sensitive = s.classification?.toLowerCase() === 'sensitive';
    if (!sensitive && domains.length < 2) continue;
    const instances = [...r.instances].sort((a, b) => a - b);
    const sgs = [...new Set(instances.flatMap((i) => exposedSgs.get(i) ?? []))];
    const resources = [...new Set([store, ...instances, ...sgs, ...r.via])];
    const problems = own.map((f) => f.title);
    risks.push({
      id: stableId('risk', 'toxic', s.arn),
      kind: 'toxic_combination',
      basis: sensitive ? 'exposed_instance_sensitive_data' : 'exposed_instance_unprotected_data',
      title: `Internet-exposed ${instances.map((i) => label(g.nodes[i]!)).join(', ')} reach${instances.length === 1 ? 'es' : ''} ${label(s)}`,
      severity: 'critical',
      reason:
        `${instances.map((i) => label(g.nodes[i]!)).join(', ')} ${instances.length === 1 ? 'has' : 'have'} a public address behind ${sgs.map((i) => label(g.nodes[i]!)).join(', ')} (open to the Internet) and can reach ${label(s)}` +
        (sensitive ? `, classified ${s.classification}` : '') +
        (problems.length
          ? `, which has ${problems.length} open finding${problems.length === 1 ? '' : 's'} across ${domains.join(' + ')}: ${problems.join('; ')}.`
          : '.'),
      resources,
      finding_ids: findingIds(resources),
    });
  }
  return risks.sort(
    (a, b) =>
      SEVERITY_RANK[b.severity]! - SEVERITY_RANK[a.severity]! ||
      (a.kind === b.kind ? 0 : a.kind === 'toxic_combination' ? -1 : 1) ||
      a.title.localeCompare(b.title),
  );
}
