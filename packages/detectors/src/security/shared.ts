import type { DetectorRow } from '../detector';

/**
 * SQL fragments and row helpers shared by the security detectors. Each fragment expands into the
 * detector's own query text at load time, so the query stored in a finding's trail is complete and
 * re-runs as is.
 */

/** Protocol names AWS returns for a rule, with the numbers a rule may be written with. */
const PROTOCOLS = { tcp: ['tcp', '6'], udp: ['udp', '17'] } as const;
export type PortProtocol = keyof typeof PROTOCOLS;

function protocolIn(rule: string, protocols: PortProtocol[]): string {
  const names = protocols.flatMap((p) => PROTOCOLS[p]).map((n) => `'${n}'`);
  return `${rule}->>'ip_protocol' in (${names.join(', ')})`;
}

/** An ingress rule whose source is the whole Internet: 0.0.0.0/0 or ::/0 (prefix lists and groups are not). */
export function internetIngress(rule = 'rule'): string {
  return `${rule}->>'type' = 'ingress' and (${rule}->>'cidr_ipv4' = '0.0.0.0/0' or ${rule}->>'cidr_ipv6' = '::/0')`;
}

/**
 * A rule that admits `port`: all traffic (protocol -1, whose ports are null), or one of `protocols`
 * with a range that CONTAINS the port (from_port <= port <= to_port), not one that merely starts or
 * ends on it (the CloudQuery NACL pitfall, domain notes §2.3 S1′). `port` is a number or an SQL
 * expression.
 */
export function coversPort(port: number | string, protocols: PortProtocol[], rule = 'rule'): string {
  return `(${rule}->>'ip_protocol' = '-1' or (${protocolIn(rule, protocols)} and (${rule}->>'from_port')::int <= ${port} and (${rule}->>'to_port')::int >= ${port}))`;
}

/** A rule that admits every port: protocol -1, or TCP/UDP over the full 0–65535 range (Prowler's 65,536 ports). */
export function coversAllPorts(rule = 'rule'): string {
  return `(${rule}->>'ip_protocol' = '-1' or (${protocolIn(rule, ['tcp', 'udp'])} and (${rule}->>'from_port')::int <= 0 and (${rule}->>'to_port')::int >= 65535))`;
}

/**
 * Live instances per security group they use (one row per instance and group): not deleted, and not
 * terminated or shutting down (a stopped instance keeps its network interface, so its groups stay in
 * use, as Prowler counts them).
 */
export const IN_USE_SQL = `
      select i.account_id, i.region, g->>'group_id' as group_id, i.arn, i.native_id, i.name,
             i.attributes->>'instance_state' as instance_state,
             i.attributes->>'public_ip_address' as public_ip
      from resources i, jsonb_array_elements(coalesce(i.attributes->'security_groups', '[]'::jsonb)) as g
      where i.type = 'aws_ec2_instance' and i.deleted_at is null
        and coalesce(i.attributes->>'instance_state', 'running') not in ('terminated', 'shutting-down')`;

/** A JSON value that may be one item or a list of them (IAM Action, Resource, Statement), as a list. */
export function asArray(expr: string): string {
  return `(case when ${expr} is null or jsonb_typeof(${expr}) = 'null' then '[]'::jsonb when jsonb_typeof(${expr}) = 'array' then ${expr} else jsonb_build_array(${expr}) end)`;
}

/** An IAM pattern (`*` any run, `?` one character) as a case-insensitive LIKE pattern. */
export function iamLike(expr: string): string {
  return `replace(replace(lower(${expr}), '*', '%'), '?', '_')`;
}

// ---------- row helpers ----------

export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
export const num = (v: unknown): number => Number(v ?? 0);
export function list<T = Record<string, unknown>>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/** "sg-0abc (sg-bastion)", or the id alone when the name is missing or the same. */
export function label(row: DetectorRow, id = 'native_id'): string {
  const native = str(row[id]);
  const name = str(row.name);
  return name && name !== native ? `${name} (${native})` : native;
}

/** "account 111122223333, us-east-1", for narratives. */
export function where(row: DetectorRow): string {
  const region = str(row.region);
  return `account ${str(row.account_id)}${region && region !== 'global' ? `, ${region}` : ''}`;
}

export interface SgRule {
  type?: string;
  ip_protocol?: string | null;
  from_port?: number | null;
  to_port?: number | null;
  cidr_ipv4?: string | null;
  cidr_ipv6?: string | null;
}

/** "tcp 22 from 0.0.0.0/0", "tcp 0–65535 from 0.0.0.0/0", "all traffic from ::/0". */
export function describeRule(rule: SgRule): string {
  const source = [rule.cidr_ipv4, rule.cidr_ipv6].filter(Boolean).join(' and ');
  if (rule.ip_protocol === '-1') return `all traffic from ${source}`;
  const ports = rule.from_port === rule.to_port ? `${rule.from_port}` : `${rule.from_port}–${rule.to_port}`;
  return `${str(rule.ip_protocol)} ${ports} from ${source}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "a, b, c and 11 more". */
export function listOf(items: string[], max = 3): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}
