import type { Detector, FindingDraft } from '../detector';
import {
  coversAllPorts,
  describeRule,
  IN_USE_SQL,
  internetIngress,
  label,
  list,
  listOf,
  num,
  plural,
  str,
  where,
  type SgRule,
} from './shared';

interface AttachedInstance {
  arn: string;
  instance_id: string;
  name: string | null;
  public_ip: string | null;
}

export interface SgOpenCheck {
  id: string;
  title: string;
  /** What is open, for titles and narratives: "SSH (tcp/22)", "every port". */
  what: string;
  /** The SQL condition on `rule` (besides Internet ingress) that makes a rule offending. */
  match: string;
  /** In words, for the reasoning step. */
  matchText: string;
  /** Skip groups the all-ports check already reports (Prowler's ssh/rdp checks do the same). */
  skipAllPorts: boolean;
  risk: string;
  fix: string;
}

/**
 * The query of a security-group exposure check: in-use groups (attached to at least one live instance)
 * with at least one ingress rule from 0.0.0.0/0 or ::/0 matching the check, one row per group with its
 * offending rules and its instances.
 */
export function sgOpenSql(check: Pick<SgOpenCheck, 'match' | 'skipAllPorts'>): string {
  const skip = check.skipAllPorts
    ? `
      and not exists (
        select 1 from jsonb_array_elements(coalesce(sg.attributes->'rules', '[]'::jsonb)) as rule
        where ${internetIngress()} and ${coversAllPorts()})`
    : '';
  return `
    with in_use as (${IN_USE_SQL}
    ),
    open_groups as (
      select sg.arn, sg.native_id, sg.name, sg.account_id, sg.region, sg.attributes->>'vpc_id' as vpc_id,
             (select jsonb_agg(rule order by ord)
                from jsonb_array_elements(coalesce(sg.attributes->'rules', '[]'::jsonb)) with ordinality as x(rule, ord)
                where ${internetIngress()} and ${check.match}) as open_rules
      from resources sg
      where sg.type = 'aws_vpc_security_group' and sg.deleted_at is null${skip}
    )
    select o.arn, o.native_id, o.name, o.account_id, o.region, o.vpc_id, o.open_rules,
           count(*)::int as instance_count,
           count(u.public_ip)::int as public_instance_count,
           jsonb_agg(jsonb_build_object('arn', u.arn, 'instance_id', u.native_id, 'name', u.name,
                                        'instance_state', u.instance_state, 'public_ip', u.public_ip)
                     order by u.arn) as instances
    from open_groups o
    join in_use u on u.group_id = o.native_id and u.account_id = o.account_id and u.region = o.region
    where o.open_rules is not null
    group by o.arn, o.native_id, o.name, o.account_id, o.region, o.vpc_id, o.open_rules
    order by o.arn`;
}

/** A security-group exposure detector: one finding per group, about the group and its instances. */
export function sgOpenDetector(check: SgOpenCheck): Detector {
  return {
    id: check.id,
    domain: 'security',
    title: check.title,
    sql: sgOpenSql(check),
    findings(rows) {
      return rows.map((row): FindingDraft => {
        const rules = list<SgRule>(row.open_rules).map(describeRule);
        const instances = list<AttachedInstance>(row.instances);
        const count = num(row.instance_count);
        const exposed = instances.filter((i) => i.public_ip);
        const sg = label(row);
        const names = instances.map((i) => (i.name ? `${i.name} (${i.instance_id})` : i.instance_id));
        const reach = exposed.length
          ? `${plural(exposed.length, 'of them has', 'of them have')} a public IP (${listOf(
              exposed.map((i) => `${i.name ?? i.instance_id} ${i.public_ip}`),
            )}), so ${check.what} on ${exposed.length === 1 ? 'it' : 'them'} is reachable from anywhere right now`
          : `none has a public IPv4 address today, but any one that gets one (or an IPv6 address, or a load balancer in front) is exposed at once`;
        return {
          rootKey: row.arn,
          title: `${check.what.charAt(0).toUpperCase()}${check.what.slice(1)} open to the Internet on security group ${sg}, used by ${plural(count, 'instance')}`,
          severity: exposed.length ? 'critical' : 'high',
          narrative: `Security group ${sg} — VPC ${str(row.vpc_id)}, ${where(row)} — admits ${check.what} from the whole Internet: ${rules.join('; ')}. It is attached to ${plural(count, 'live instance')} — ${listOf(names, 5)}; ${reach}. ${check.risk} One fix on the group closes it for every instance.`,
          confidence: 0.95,
          resources: [
            { arn: row.arn, actionType: 'restrict-ingress', savings: 0 },
            ...instances.map((i) => ({ arn: i.arn, actionType: 'restrict-ingress', savings: 0 })),
          ],
          recommendation: {
            rationale: `${check.fix} The change is made once on ${sg} and applies to all ${plural(count, 'instance')}; nothing is lost but the open path.`,
            actionType: 'restrict-ingress',
            savings: 0,
            effort: 'low',
            priority: exposed.length ? 1 : 2,
          },
          reasoning: `Ingress ${rules.length === 1 ? 'rule' : 'rules'} ${rules.join('; ')} on ${str(row.native_id)}: source 0.0.0.0/0 or ::/0 and ${check.matchText}. The group is in use: security_groups of ${plural(count, 'live instance')} (${listOf(names, 5)}) name it; ${exposed.length} with a public IP, hence severity ${exposed.length ? 'critical (reachable now)' : 'high (not directly reachable today)'}.${check.skipAllPorts ? ' The group has no all-ports rule from the Internet (that check reports it instead).' : ''}`,
        };
      });
    },
  };
}
