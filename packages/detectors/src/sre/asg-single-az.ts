import { type Detector } from '../detector';
import {
  byEnv,
  envNote,
  envOf,
  isProd,
  jsonArray,
  num,
  plural,
  records,
  sentenceList,
  str,
  strings,
} from './common';

/** The subnets an Auto Scaling group launches into: VPCZoneIdentifier (comma-separated) or subnet_ids. */
export const asgSubnetIds = (alias: string) => `array(
      select distinct trim(x) from unnest(string_to_array(coalesce(${alias}.attributes->>'vpc_zone_identifier', ''), ',')) x
      where trim(x) <> ''
      union
      select x from jsonb_array_elements_text(${jsonArray(`${alias}.attributes->'subnet_ids'`)}) x)`;

/**
 * R5 — Auto Scaling groups in a single AZ: `jsonb_array_length(availability_zones) <= 1`. If that AZ
 * fails, the group cannot replace its instances anywhere else. The query also finds, in the group's
 * VPC, subnets of the same kind (private or public) in the other AZs, so the fix names real subnets.
 * (steampipe-mod-aws-compliance `autoscaling.pp` `autoscaling_group_multiple_az_configured`; Prowler
 * `autoscaling_group_multiple_az`)
 */
export const asgSingleAz: Detector = {
  id: 'sre.asg_single_az',
  domain: 'sre',
  title: 'Auto Scaling groups in a single AZ',
  sql: `
    with groups as (
      select r.*, ${asgSubnetIds('r')} as subnet_ids
      from resources r
      where r.type = 'aws_ec2_autoscaling_group' and r.deleted_at is null
        and jsonb_array_length(${jsonArray("r.attributes->'availability_zones'")}) <= 1
    )
    select g.arn, g.native_id, g.name, g.account_id, g.region,
           g.attributes->'availability_zones' as availability_zones,
           (g.attributes->>'min_size')::int as min_size,
           (g.attributes->>'max_size')::int as max_size,
           (g.attributes->>'desired_capacity')::int as desired_capacity,
           jsonb_array_length(${jsonArray("g.attributes->'instances'")}) as instance_count,
           g.subnet_ids,
           ${envOf('g')} as env,
           (select jsonb_agg(o order by o->>'az', o->>'id') from (
              select distinct jsonb_build_object('id', s2.native_id, 'name', s2.name,
                       'az', coalesce(s2.availability_zone, s2.attributes->>'availability_zone')) as o
              from resources s1
              join resources s2 on s2.type = 'aws_vpc_subnet' and s2.deleted_at is null
                and s2.account_id = s1.account_id and s2.region = s1.region
                and s2.attributes->>'vpc_id' = s1.attributes->>'vpc_id'
                and coalesce(s2.availability_zone, s2.attributes->>'availability_zone')
                    <> coalesce(s1.availability_zone, s1.attributes->>'availability_zone')
                and coalesce((s2.attributes->>'map_public_ip_on_launch')::boolean, false)
                    = coalesce((s1.attributes->>'map_public_ip_on_launch')::boolean, false)
              where s1.type = 'aws_vpc_subnet' and s1.deleted_at is null
                and s1.account_id = g.account_id and s1.region = g.region
                and s1.native_id = any(g.subnet_ids)) candidates) as other_az_subnets
    from groups g
    order by g.arn`,
  findings(rows) {
    return rows.map((row) => {
      const name = str(row.native_id);
      const zones = strings(row.availability_zones);
      const az = zones[0] ?? 'one AZ';
      const subnets = strings(row.subnet_ids);
      const candidates = records<{ id: string; name: string | null; az: string }>(row.other_az_subnets);
      // One subnet per other AZ is enough to spread the group.
      const perAz = [...new Map(candidates.map((c) => [c.az, c])).values()];
      const target = [...subnets, ...perAz.map((c) => c.id)];
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `Auto Scaling group ${name} launches only in ${az}`,
        severity,
        narrative: `Auto Scaling group ${name}${envNote(row.env)} launches only into ${az} (subnet${subnets.length === 1 ? '' : 's'} ${sentenceList(subnets) || 'unknown'}): ${plural(num(row.instance_count), 'instance')} now, min ${num(row.min_size)} / desired ${num(row.desired_capacity)} / max ${num(row.max_size)}. If ${az} fails, every instance goes with it and the group cannot launch replacements in another AZ until someone edits it.${perAz.length ? ` Its VPC has matching subnets in ${sentenceList(perAz.map((c) => c.az))}: ${sentenceList(perAz.map((c) => (c.name ? `${c.name} (${c.id})` : c.id)))}.` : ''}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'spread-across-azs', savings: 0 }],
        recommendation: {
          rationale: `Give the group subnets in at least two AZs; it then rebalances and replaces instances across them, and keeps launching when one AZ is down. No cost change by itself (the same number of instances). Run: aws autoscaling update-auto-scaling-group --auto-scaling-group-name ${name} --vpc-zone-identifier ${perAz.length ? target.join(',') : '<subnet-a>,<subnet-b>'}${num(row.max_size) <= 1 ? ' (and raise its capacity: with one instance, spreading only shortens the outage)' : ''}`,
          actionType: 'spread-across-azs',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `availability_zones = ${JSON.stringify(zones)} (length ${zones.length} <= 1) for ${name}. Candidate subnets: same VPC, same public/private kind, other AZs (${perAz.length} found). Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0.`,
      };
    });
  },
};
