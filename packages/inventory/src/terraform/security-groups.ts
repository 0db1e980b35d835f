// Security groups and their rules, one row per source as AWS describes them.
import { arnOf, idOf, type Draft, type Registry, type TfRow } from './registry';
import { blocks, bool, num, str, strs, type Values } from './values';

/** One row per source (CIDR, IPv6 CIDR, prefix list, group), as AWS describes security group rules. */
export interface SgRule {
  type: 'ingress' | 'egress';
  ip_protocol: string;
  from_port: number | null;
  to_port: number | null;
  cidr_ipv4: string | null;
  cidr_ipv6: string | null;
  referenced_group_id: string | null;
  prefix_list_id: string | null;
  description: string | null;
  security_group_rule_id: string | null;
}

const PROTOCOL_NAMES: Record<string, string> = {
  all: '-1',
  '6': 'tcp',
  '17': 'udp',
  '1': 'icmp',
  '58': 'icmpv6',
};

export function normalizeProtocol(p: unknown): string {
  const s = (str(p) ?? '-1').toLowerCase();
  return PROTOCOL_NAMES[s] ?? s;
}

type RuleSource = Pick<SgRule, 'cidr_ipv4' | 'cidr_ipv6' | 'referenced_group_id' | 'prefix_list_id'>;

const NO_SOURCE: RuleSource = {
  cidr_ipv4: null,
  cidr_ipv6: null,
  referenced_group_id: null,
  prefix_list_id: null,
};

/** A rule for each source, fields in the order AWS lists them. */
function rulesFor(
  type: SgRule['type'],
  v: Values,
  protocolKey: string,
  ruleId: string | null,
  sources: Partial<RuleSource>[],
): SgRule[] {
  const ip_protocol = normalizeProtocol(v[protocolKey]);
  // AWS reports no ports for "all traffic"; Terraform writes 0/0 there.
  const all = ip_protocol === '-1';
  return sources.map((source) => ({
    type,
    ip_protocol,
    from_port: all ? null : num(v.from_port),
    to_port: all ? null : num(v.to_port),
    ...NO_SOURCE,
    ...source,
    description: str(v.description),
    security_group_rule_id: ruleId,
  }));
}

/** Expands an inline `ingress`/`egress` block or an `aws_security_group_rule` into one row per source. */
export function expandLegacyRule(
  type: SgRule['type'],
  v: Values,
  ownGroupId: string,
  ruleId: string | null = null,
): SgRule[] {
  const groups = [...strs(v.security_groups), ...strs(v.source_security_group_id)];
  if (bool(v.self)) groups.push(ownGroupId);
  return rulesFor(type, v, 'protocol', ruleId, [
    ...strs(v.cidr_blocks).map((cidr_ipv4) => ({ cidr_ipv4 })),
    ...strs(v.ipv6_cidr_blocks).map((cidr_ipv6) => ({ cidr_ipv6 })),
    ...strs(v.prefix_list_ids).map((prefix_list_id) => ({ prefix_list_id })),
    ...groups.map((referenced_group_id) => ({ referenced_group_id })),
  ]);
}

/** An `aws_vpc_security_group_ingress_rule`/`egress_rule`: already one source per rule. */
export function expandVpcRule(type: SgRule['type'], v: Values): SgRule[] {
  return rulesFor(type, v, 'ip_protocol', str(v.security_group_rule_id) ?? str(v.id), [
    {
      cidr_ipv4: str(v.cidr_ipv4),
      cidr_ipv6: str(v.cidr_ipv6),
      referenced_group_id: str(v.referenced_security_group_id),
      prefix_list_id: str(v.prefix_list_id),
    },
  ]);
}

const ruleKey = (r: SgRule) =>
  [
    r.type,
    r.ip_protocol,
    r.from_port,
    r.to_port,
    r.cidr_ipv4,
    r.cidr_ipv6,
    r.referenced_group_id,
    r.prefix_list_id,
  ].join('|');

/**
 * Adds rules to a group, once each: after a refresh the group's own ingress/egress lists also hold
 * the rules managed by separate rule resources.
 */
export function addRules(sg: Draft, rules: SgRule[]): void {
  const list = sg.attributes.rules as SgRule[];
  for (const r of rules) {
    const same = list.find((x) => ruleKey(x) === ruleKey(r));
    if (!same) list.push(r);
    else {
      same.security_group_rule_id ??= r.security_group_rule_id;
      same.description ??= r.description;
    }
  }
}

function mapSecurityGroup(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const sg = reg.add(row, 'aws_vpc_security_group', {
    nativeId: id,
    naturalName: str(v.name),
    buildArn: arnOf('ec2', `security-group/${id}`),
    attributes: {
      group_id: id,
      group_name: str(v.name) ?? (row.type === 'aws_default_security_group' ? 'default' : null),
      description: str(v.description),
      vpc_id: str(v.vpc_id),
      owner_id: str(v.owner_id),
      rules: [],
    },
  });
  addRules(sg, [
    ...blocks(v.ingress).flatMap((b) => expandLegacyRule('ingress', b, id)),
    ...blocks(v.egress).flatMap((b) => expandLegacyRule('egress', b, id)),
  ]);
  reg.link(sg, 'member-of', { type: 'aws_vpc', id: str(v.vpc_id) ?? '' });
  reg.placeBy(sg, { type: 'aws_vpc', id: str(v.vpc_id) ?? '' }, false);
}

export const SECURITY_GROUP_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_security_group: mapSecurityGroup,
  aws_default_security_group: mapSecurityGroup,
};
