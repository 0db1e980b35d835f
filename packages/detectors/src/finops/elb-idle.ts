import { money, round2, type Detector } from '../detector';
import {
  CLOCK_CTE,
  HOURS_PER_MONTH,
  MONTH_OF_HOURS,
  num,
  priceSql,
  priorityFor,
  severityFor,
  text,
  unitPrice,
  metricWindowSql,
} from './common';

/**
 * F9 — idle load balancers (ALB/NLB/GWLB): no target group references the load balancer (neither the
 * balancer's `target_group_arns` nor any target group's `load_balancer_arns`), or every target group it
 * has is in the inventory, its targets read (not denied), and none has a healthy target. Deleting it saves its hourly price × 730
 * (ALB/NLB $0.0225/h = $16.43/month, LCUs aside). (thrifty `ec2_application_lb_unused`,
 * `ec2_network_lb_unused`, `ec2_gateway_lb_unused`; CloudQuery `unused_load_balancers.sql`)
 */
export const elbIdle: Detector = {
  id: 'finops.elb_idle',
  domain: 'finops',
  title: 'Idle load balancers',
  sql: `
    with ${CLOCK_CTE},
    lbs as (
      select lb.arn, lb.native_id, lb.name, lb.region, lb.attributes
      from resources lb
      where lb.type = 'aws_ec2_application_load_balancer' and lb.deleted_at is null
    ),
    tgs as (
      select t.arn, t.attributes
      from resources t
      where t.type = 'aws_ec2_target_group' and t.deleted_at is null
    ),
    refs as (
      select lbs.arn as lb_arn, r.tg_arn
      from lbs cross join lateral jsonb_array_elements_text(coalesce(lbs.attributes->'target_group_arns', '[]'::jsonb)) r(tg_arn)
      union
      select r.lb_arn, tgs.arn
      from tgs cross join lateral jsonb_array_elements_text(coalesce(tgs.attributes->'load_balancer_arns', '[]'::jsonb)) r(lb_arn)
    ),
    per_lb as (
      select refs.lb_arn,
             count(*)::int as target_groups,
             -- A target group whose health could not be read (null) is not known to be empty.
             count(tgs.arn) filter (where jsonb_typeof(tgs.attributes->'target_health_descriptions') is distinct from 'null')::int
               as known_target_groups,
             coalesce(sum(jsonb_array_length((case jsonb_typeof(tgs.attributes->'target_health_descriptions') when 'array' then tgs.attributes->'target_health_descriptions' else '[]'::jsonb end))), 0)::int
               as targets,
             coalesce(sum((select count(*) from jsonb_array_elements(
                               (case jsonb_typeof(tgs.attributes->'target_health_descriptions') when 'array' then tgs.attributes->'target_health_descriptions' else '[]'::jsonb end)) d
                           where d->'target_health'->>'state' = 'healthy')), 0)::int as healthy_targets
      from refs
      left join tgs on tgs.arn = refs.tg_arn
      group by refs.lb_arn
    ),
    requests as (
      select m.arn, sum(m.sum) as requests_30d
      from metrics_daily m cross join clock
      where m.metric = 'RequestCount'
        and ${metricWindowSql(30)}
      group by m.arn
    )
    select lbs.arn, lbs.native_id, lbs.name, lbs.region,
           coalesce(lbs.attributes->>'type', 'application') as lb_type,
           lbs.attributes->>'scheme' as scheme,
           coalesce(p.target_groups, 0) as target_groups,
           coalesce(p.known_target_groups, 0) as known_target_groups,
           coalesce(p.targets, 0) as targets,
           coalesce(p.healthy_targets, 0) as healthy_targets,
           q.requests_30d,
           ${priceSql(`'elb:' || coalesce(lbs.attributes->>'type', 'application') || ':hour'`, 'lbs.region')} as hourly,
           round(${priceSql(`'elb:' || coalesce(lbs.attributes->>'type', 'application') || ':hour'`, 'lbs.region')}
                 * ${HOURS_PER_MONTH}, 2) as savings
    from lbs
    left join per_lb p on p.lb_arn = lbs.arn
    left join requests q on q.arn = lbs.arn
    where p.lb_arn is null or (p.known_target_groups = p.target_groups and p.healthy_targets = 0)
    order by lbs.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const kind = String(row.lb_type);
      const short = kind === 'network' ? 'NLB' : kind === 'gateway' ? 'GWLB' : 'ALB';
      const groups = num(row.target_groups);
      const lbName = text(row.name) ?? String(row.native_id);
      const why =
        groups === 0
          ? 'has no target group: it can route traffic nowhere'
          : `has ${groups} target group(s) with ${num(row.targets)} target(s), none healthy`;
      const requests =
        row.requests_30d === null ? '' : ` It served ${num(row.requests_30d)} requests in the last 30 days.`;
      return {
        rootKey: row.arn,
        title: `${short} ${lbName} ${groups === 0 ? 'has no target groups' : 'has no healthy targets'}`,
        severity: severityFor(savings),
        narrative: `${kind === 'application' ? 'Application' : kind === 'network' ? 'Network' : 'Gateway'} load balancer ${lbName} (${String(row.scheme ?? 'unknown scheme')}, ${String(row.region)}, ${String(row.native_id)}) ${why}.${requests} It is still billed by the hour: ${money(savings)} a month before any LCU charges. Delete it, after checking no DNS record still points at it.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'delete', savings, measured: MONTH_OF_HOURS('hours') }],
        recommendation: {
          rationale: `A load balancer with nothing behind it serves no one but costs ${unitPrice(row.hourly)}/hour; deleting it saves ${money(savings)}/month. Remove DNS aliases to it first.`,
          actionType: 'delete',
          savings,
          effort: 'low',
          priority: priorityFor(savings),
        },
        reasoning: `Target groups referencing ${String(row.native_id)} (its target_group_arns ∪ target groups whose load_balancer_arns name it): ${groups}${groups ? `, all in the inventory, with ${num(row.targets)} registered target(s) and ${num(row.healthy_targets)} healthy` : ''} ⇒ idle.${requests} ${short} price ${unitPrice(row.hourly)}/hour × ${HOURS_PER_MONTH} h = ${money(savings)}/month (LCU charges not counted).`,
      };
    });
  },
};
