import { type Detector } from '../detector';
import { unreadFor } from '../unread';
import {
  byEnv,
  dependentsOf,
  dependentsSentence,
  envNote,
  envOf,
  isProd,
  jsonArray,
  str,
  strings,
  usualAlarmAction,
} from './common';

interface Watch {
  kind: string;
  namespace: string;
  dimension: string;
  /** What is worth alarming on for the type. */
  metrics: string;
  /** The one alarm the example command creates. */
  metric: string;
  statistic: string;
  comparison: string;
  threshold: (row: Record<string, unknown>) => string;
  note?: string;
}

/** What to watch on each critical type, and the CloudWatch dimension that names the resource. */
const WATCH: Record<string, Watch> = {
  aws_rds_db_instance: {
    kind: 'RDS instance',
    namespace: 'AWS/RDS',
    dimension: 'DBInstanceIdentifier',
    metrics: 'CPUUtilization, FreeStorageSpace and DatabaseConnections',
    metric: 'CPUUtilization',
    statistic: 'Average',
    comparison: 'GreaterThanThreshold',
    threshold: () => '80',
  },
  aws_ec2_application_load_balancer: {
    kind: 'load balancer',
    namespace: 'AWS/ApplicationELB',
    dimension: 'LoadBalancer',
    metrics: 'HTTPCode_ELB_5XX_Count, TargetResponseTime and UnHealthyHostCount',
    metric: 'HTTPCode_ELB_5XX_Count',
    statistic: 'Sum',
    comparison: 'GreaterThanThreshold',
    threshold: () => '10',
  },
  aws_ec2_autoscaling_group: {
    kind: 'Auto Scaling group',
    namespace: 'AWS/AutoScaling',
    dimension: 'AutoScalingGroupName',
    metrics: 'GroupInServiceInstances below the minimum, and the group CPUUtilization',
    metric: 'GroupInServiceInstances',
    statistic: 'Minimum',
    comparison: 'LessThanThreshold',
    threshold: (row) => String(row.min_size ?? 1),
    note: ' (group metrics need aws autoscaling enable-metrics-collection first)',
  },
  aws_vpc_nat_gateway: {
    kind: 'NAT gateway',
    namespace: 'AWS/NATGateway',
    dimension: 'NatGatewayId',
    metrics: 'ErrorPortAllocation and PacketsDropCount',
    metric: 'ErrorPortAllocation',
    statistic: 'Sum',
    comparison: 'GreaterThanThreshold',
    threshold: () => '0',
  },
};

const OTHER: Watch = {
  kind: 'resource',
  namespace: '<namespace>',
  dimension: '<dimension>',
  metrics: 'its health metrics',
  metric: '<metric>',
  statistic: 'Average',
  comparison: 'GreaterThanThreshold',
  threshold: () => '<threshold>',
};

/**
 * R4′ — a critical resource with no alarm at all: an RDS instance, a load balancer that serves target
 * groups, an Auto Scaling group or a NAT gateway whose id or name appears in no live alarm's dimensions
 * (nor is the target of a live alarm's `monitors` edge, which the connector also derives from
 * metric-math alarms). Alarms count only in the resource's own account and region, where CloudWatch
 * evaluates them. An ALB's dimension value is `app/<name>/<id>`, the tail of its ARN. One finding per
 * resource. No public tool has this check (domain-notes §2.4 R4′, "where we can do better" 8); AWS
 * Resilience Hub recommends alarms on exactly these resources.
 */
export const resourceNoAlarm: Detector = {
  id: 'sre.resource_no_alarm',
  domain: 'sre',
  title: 'Critical resources with no CloudWatch alarm',
  sql: `
    with alarm_dimensions as (
      select distinct a.account_id, a.region, d->>'value' as value
      from resources a, jsonb_array_elements(${jsonArray("a.attributes->'dimensions'")}) d
      where a.type = 'aws_cloudwatch_alarm' and a.deleted_at is null
    ),
    monitored as (
      select distinct e.to_arn as arn
      from resource_edges e
      join resources a on a.arn = e.from_arn and a.type = 'aws_cloudwatch_alarm' and a.deleted_at is null
      where e.kind = 'monitors'
    ),
    served_load_balancers as (
      select distinct lb.arn
      from resources tg, jsonb_array_elements_text(${jsonArray("tg.attributes->'load_balancer_arns'")}) lb(arn)
      where tg.type = 'aws_ec2_target_group' and tg.deleted_at is null
    ),
    critical as (
      select r.* from resources r
      where r.deleted_at is null
        and (r.type in ('aws_rds_db_instance', 'aws_ec2_autoscaling_group')
          or (r.type = 'aws_vpc_nat_gateway'
              and coalesce(r.attributes->>'state', 'available') not in ('deleting', 'deleted', 'failed'))
          or (r.type = 'aws_ec2_application_load_balancer'
              and (jsonb_array_length(${jsonArray("r.attributes->'target_group_arns'")}) > 0
                or r.arn in (select arn from served_load_balancers))))
    )
    select c.arn, c.type, c.native_id, c.name, c.account_id, c.region,
           ${envOf('c')} as env,
           (c.attributes->>'min_size')::int as min_size,
           substring(c.arn from ':loadbalancer/(.+)$') as dimension_value,
           ${usualAlarmAction('c')} as usual_action,
           ${dependentsOf('c')} as dependents
    from critical c
    where not ${unreadFor('c.account_id', 'aws_cloudwatch_alarm', 'c.region')}
      and not exists (
            select 1 from alarm_dimensions ad
            where ad.account_id = c.account_id and ad.region = c.region
              and ad.value in (c.native_id, c.name, c.arn, substring(c.arn from ':loadbalancer/(.+)$')))
      and c.arn not in (select arn from monitored)
    order by c.arn`,
  findings(rows) {
    return rows.map((row) => {
      const watch = WATCH[str(row.type)] ?? OTHER;
      const name = str(row.name) || str(row.native_id);
      const dimensionValue = str(row.dimension_value) || str(row.native_id);
      const dependents = strings(row.dependents);
      const topic = str(row.usual_action);
      const severity = byEnv(row.env, 'medium', 'low');
      return {
        rootKey: row.arn,
        title: `Nothing alarms on ${watch.kind} ${name}: no CloudWatch alarm names it`,
        severity,
        narrative: `${watch.kind[0]!.toUpperCase()}${watch.kind.slice(1)} ${name}${envNote(row.env)} is named in no CloudWatch alarm of account ${str(row.account_id)} in ${str(row.region)}: if it fails, saturates or starts erroring, nothing in AWS pages anyone and the first signal is a user's complaint.${dependentsSentence(dependents, 'it')}`,
        confidence: 0.9,
        resources: [{ arn: row.arn, actionType: 'add-alarm', savings: 0 }],
        recommendation: {
          rationale: `Alarm on ${watch.metrics}${topic ? `, notifying ${topic} like the account's other alarms` : ''}; a standard alarm costs $0.10 a month. For example: aws cloudwatch put-metric-alarm --alarm-name ${name}-${watch.metric.toLowerCase()} --namespace ${watch.namespace} --metric-name ${watch.metric} --dimensions Name=${watch.dimension},Value=${dimensionValue} --statistic ${watch.statistic} --period 300 --evaluation-periods 3 --threshold ${watch.threshold(row)} --comparison-operator ${watch.comparison} --alarm-actions ${topic || '<sns-topic-arn>'}${watch.note ?? ''}`,
          actionType: 'add-alarm',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `No live alarm in ${str(row.account_id)}/${str(row.region)} has a dimension value equal to ${name}'s id, name, ARN or ARN tail (${dimensionValue}), and no alarm has a monitors edge to it. Critical type: ${watch.kind}${row.type === 'aws_ec2_application_load_balancer' ? ' serving target groups' : ''}. Confidence 0.9: an alarm in another tool (or a composite alarm on metrics of other resources) could still cover it. Savings 0.`,
      };
    });
  },
};
