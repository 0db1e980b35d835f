import { type Detector } from '../detector';
import { byEnv, envNote, envOf, isProd, jsonArray, num, str, strings } from './common';

/**
 * R6 — load balancers in fewer than two AZs: ELBv2 `availability_zones` with under 2 distinct zones
 * (an ALB needs two by AWS's own rule; an NLB can be created in one). If that zone fails, the load
 * balancer has no node left to take traffic.
 * (Prowler `elbv2_is_in_multiple_az`; steampipe-mod-aws-compliance
 * `elb_classic_lb_cross_zone_load_balancing_enabled` for the classic variant)
 */
export const lbSingleAz: Detector = {
  id: 'sre.lb_single_az',
  domain: 'sre',
  title: 'Load balancers in fewer than two AZs',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           coalesce(r.attributes->>'type', 'application') as lb_type,
           r.attributes->>'scheme' as scheme,
           z.zones, z.zone_count,
           ${envOf('r')} as env
    from resources r
    cross join lateral (
      select coalesce(array_agg(distinct coalesce(e->>'zone_name', e #>> '{}')), '{}') as zones,
             count(distinct coalesce(e->>'zone_name', e #>> '{}'))::int as zone_count
      from jsonb_array_elements(${jsonArray("r.attributes->'availability_zones'")}) e
    ) z
    where r.type = 'aws_ec2_application_load_balancer' and r.deleted_at is null
      and z.zone_count < 2
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const name = str(row.name) || str(row.native_id);
      const zones = strings(row.zones);
      const kind = str(row.lb_type);
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `Load balancer ${name} in ${zones.length ? `only ${zones[0]}` : 'no AZ'}`,
        severity,
        narrative: `${kind[0]!.toUpperCase()}${kind.slice(1)} load balancer ${name}${envNote(row.env)}${row.scheme ? `, ${str(row.scheme)},` : ''} is enabled in ${num(row.zone_count)} Availability Zone${zones.length ? ` (${zones.join(', ')})` : 's'}: if that zone fails, no load balancer node is left to receive traffic, whatever the targets behind it.`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'add-subnets', savings: 0 }],
        recommendation: {
          rationale: `Enable the load balancer in subnets of at least two AZs (and keep targets in each). An ALB is billed per hour and per LCU, not per AZ. Run: aws elbv2 set-subnets --load-balancer-arn ${row.arn} --subnets <subnet-in-az-1> <subnet-in-az-2>`,
          actionType: 'add-subnets',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `availability_zones lists ${num(row.zone_count)} distinct zone(s) (< 2) for ${name}. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0.`,
      };
    });
  },
};
