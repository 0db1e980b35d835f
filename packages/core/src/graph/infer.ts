import { asDependency } from './dependency';
import type { GraphEdge, GraphNodeData } from './model';

type Facts = Record<string, unknown>;
const arr = (v: unknown): Array<Record<string, unknown>> =>
  Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Array<Record<string, unknown>>) : [];
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Dependencies the describe APIs imply but no connector states as an edge, read from the attributes:
 * instance → subnet → route table → NAT/Internet gateway, target group → targets, load balancer → target
 * groups, DNS record → load balancer, instance → role (through its instance profile), and app → database
 * where the database's security group admits the app's security group. Each is a typed edge (so the one
 * rule table reads it like a stated one) with `source: 'inferred:<how>'`, a confidence and its evidence.
 * An inference that a stored edge already states (the same dependent and dependency) is left out.
 */
export function inferEdges(nodes: GraphNodeData[], stored: GraphEdge[]): GraphEdge[] {
  const known = new Set<string>();
  for (const e of stored) {
    const d = asDependency({
      kind: e.kind,
      from: e.from,
      to: e.to,
      fromType: nodes[e.from]!.type,
      toType: nodes[e.to]!.type,
    });
    if (d) known.add(`${d.dependent}|${d.dependency}`);
  }
  // Native ids are unique per account (and region) in AWS; key them so.
  const byNative = new Map<string, number>();
  const byArn = new Map<string, number>();
  const lbByDns = new Map<string, number>();
  const profileByArn = new Map<string, number>();
  const instancesBySg = new Map<string, number[]>();
  nodes.forEach((n, i) => {
    byNative.set(`${n.account_id}|${n.native_id}`, i);
    byArn.set(n.arn, i);
    const f = n.facts;
    if (!f) return;
    if (n.type === 'aws_ec2_application_load_balancer' && str(f.dns_name))
      lbByDns.set(String(f.dns_name).toLowerCase().replace(/\.$/, ''), i);
    if (n.type === 'aws_iam_instance_profile') profileByArn.set(n.arn, i);
    if (n.type === 'aws_ec2_instance')
      for (const sg of arr(f.security_groups)) {
        const g = str(sg.group_id);
        if (!g) continue;
        const list = instancesBySg.get(`${n.account_id}|${g}`) ?? [];
        list.push(i);
        instancesBySg.set(`${n.account_id}|${g}`, list);
      }
  });
  const out: GraphEdge[] = [];
  const add = (
    from: number | undefined,
    to: number | undefined,
    kind: string,
    how: string,
    confidence: number,
    evidence: string,
  ) => {
    if (from === undefined || to === undefined || from === to) return;
    const d = asDependency({ kind, from, to, fromType: nodes[from]!.type, toType: nodes[to]!.type });
    if (!d) return;
    const key = `${d.dependent}|${d.dependency}`;
    if (known.has(key)) return;
    known.add(key);
    out.push({
      from,
      to,
      kind,
      source: `inferred:${how}`,
      confidence,
      inferred: true,
      derived: true,
      evidence,
    });
  };
  const native = (n: GraphNodeData, id: unknown) =>
    str(id) ? byNative.get(`${n.account_id}|${String(id)}`) : undefined;

  nodes.forEach((n, i) => {
    const f: Facts | null = n.facts;
    if (!f) return;
    switch (n.type) {
      case 'aws_ec2_instance': {
        add(i, native(n, f.subnet_id), 'member-of', 'subnet-id', 0.95, `subnet_id = ${String(f.subnet_id)}`);
        const profile = str(f.iam_instance_profile_arn);
        const p = profile ? profileByArn.get(profile) : undefined;
        if (p !== undefined)
          for (const roleArn of (nodes[p]!.facts?.roles as unknown[] | undefined) ?? [])
            add(
              i,
              byArn.get(String(roleArn)),
              'uses-role',
              'instance-profile',
              0.95,
              `iam_instance_profile_arn = ${profile}`,
            );
        break;
      }
      case 'aws_vpc_route_table': {
        for (const a of arr(f.associations))
          add(
            native(n, a.subnet_id),
            i,
            'depends-on',
            'route-table-association',
            0.95,
            `route table ${n.native_id} associated with ${String(a.subnet_id)}`,
          );
        for (const r of arr(f.routes)) {
          if (r.destination_cidr_block !== '0.0.0.0/0') continue;
          const target = str(r.nat_gateway_id) ?? (r.gateway_id !== 'local' ? str(r.gateway_id) : null);
          add(i, native(n, target), 'routes-to', 'default-route', 0.95, `route 0.0.0.0/0 → ${target}`);
        }
        break;
      }
      case 'aws_ec2_target_group': {
        for (const t of arr(f.target_health_descriptions)) {
          const target = (t.target as Record<string, unknown> | undefined)?.id;
          add(i, native(n, target), 'targets', 'target-health', 0.95, `registered target ${String(target)}`);
        }
        for (const lb of (f.load_balancer_arns as unknown[] | undefined) ?? [])
          add(
            byArn.get(String(lb)),
            i,
            'routes-to',
            'load-balancer-arns',
            0.95,
            `target group lists load balancer ${String(lb)}`,
          );
        break;
      }
      case 'aws_ec2_application_load_balancer':
        for (const tg of (f.target_group_arns as unknown[] | undefined) ?? [])
          add(
            i,
            byArn.get(String(tg)),
            'routes-to',
            'target-group-arns',
            0.95,
            `load balancer forwards to ${String(tg)}`,
          );
        break;
      case 'aws_route53_record': {
        const dns = str((f.alias_target as Record<string, unknown> | undefined)?.dns_name);
        if (dns)
          add(
            i,
            lbByDns.get(dns.toLowerCase().replace(/\.$/, '')),
            'resolves-to',
            'alias-target',
            0.9,
            `alias target ${dns}`,
          );
        break;
      }
      case 'aws_rds_db_instance':
        // app → database: instances in a security group the database's security group admits.
        for (const g of arr(f.vpc_security_groups)) {
          const sg = native(n, g.vpc_security_group_id);
          if (sg === undefined) continue;
          for (const rule of arr(nodes[sg]!.facts?.rules)) {
            const from = str(rule.referenced_group_id);
            if ((rule.type ?? 'ingress') !== 'ingress' || !from) continue;
            const port =
              rule.from_port === rule.to_port
                ? `${String(rule.from_port)}`
                : `${String(rule.from_port)}-${String(rule.to_port)}`;
            for (const inst of instancesBySg.get(`${n.account_id}|${from}`) ?? [])
              add(
                inst,
                i,
                'depends-on',
                'security-group-rule',
                0.8,
                `${nodes[sg]!.native_id} admits ${String(rule.ip_protocol)} ${port} from ${from}`,
              );
          }
        }
        break;
    }
  });
  return out;
}
