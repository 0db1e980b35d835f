import { money, round2, type Detector } from '../detector';
import { byEnv, envNote, envOf, isProd, jsonArray, num, str, strings } from './common';

/**
 * R5′ — Auto Scaling groups of capacity 1: `max_size = 1` or `desired_capacity = 1`. One instance is a
 * single point of failure: a host failure, a bad deploy or a health-check replacement is an outage
 * until the group launches and boots a new one. No public tool has this check (domain-notes §2.4 R5′,
 * "where we can do better" 8; the closest is thrifty `ecs_service_without_autoscaling`). The query
 * reads the running instance's type and monthly cost, the price of a second one.
 */
export const asgCapacityOne: Detector = {
  id: 'sre.asg_capacity_one',
  domain: 'sre',
  title: 'Auto Scaling groups of capacity 1',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           (r.attributes->>'min_size')::int as min_size,
           (r.attributes->>'max_size')::int as max_size,
           (r.attributes->>'desired_capacity')::int as desired_capacity,
           r.attributes->'availability_zones' as availability_zones,
           ${envOf('r')} as env,
           (select jsonb_build_object('instance_type', i.attributes->>'instance_type', 'monthly_cost', i.monthly_cost::float8)
              from resources i
             where i.type = 'aws_ec2_instance' and i.deleted_at is null
               and i.account_id = r.account_id and i.region = r.region
               and i.native_id in (select x->>'instance_id' from jsonb_array_elements(${jsonArray("r.attributes->'instances'")}) x)
             order by i.native_id limit 1) as instance
    from resources r
    where r.type = 'aws_ec2_autoscaling_group' and r.deleted_at is null
      and ((r.attributes->>'max_size')::int = 1 or (r.attributes->>'desired_capacity')::int = 1)
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const name = str(row.native_id);
      const instance = (row.instance ?? null) as { instance_type?: string; monthly_cost?: number } | null;
      const extra = round2(Number(instance?.monthly_cost ?? 0));
      const zones = strings(row.availability_zones);
      const max = num(row.max_size);
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `One instance is all ${name} ${max === 1 ? 'can run (max 1)' : 'runs (desired 1)'}: single point of failure`,
        severity,
        narrative: `Auto Scaling group ${name}${envNote(row.env)} runs a single instance${instance?.instance_type ? ` (${instance.instance_type})` : ''}: min ${num(row.min_size)} / desired ${num(row.desired_capacity)} / max ${max}${zones.length ? `, in ${zones.join(', ')}` : ''}. That instance is a single point of failure: a host failure, a failed health check or a deploy is an outage until a replacement launches and boots, typically several minutes.${max === 1 ? ' With max 1 it cannot scale out under load either.' : ''}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'raise-capacity', savings: 0 }],
        recommendation: {
          rationale: `Run at least two instances in two AZs so one can fail or be replaced while the other serves${extra > 0 ? `; a second ${instance?.instance_type ?? 'instance'} costs about ${money(extra)}/month at list price` : ''}. If the workload must run once (a scheduler, a singleton consumer), keep one active but add leader election or a warm standby instead. Run: aws autoscaling update-auto-scaling-group --auto-scaling-group-name ${name} --min-size 2 --max-size ${Math.max(max, 4)} --desired-capacity 2`,
          actionType: 'raise-capacity',
          savings: 0,
          effort: 'medium',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `max_size = ${max}, desired_capacity = ${num(row.desired_capacity)} for ${name}: ${max === 1 ? 'max_size = 1' : 'desired_capacity = 1'} holds. Extra cost of a second instance from the running instance's monthly cost: ${money(extra)}. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0: the fix adds cost.`,
      };
    });
  },
};
