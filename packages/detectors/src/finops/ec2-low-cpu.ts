import { money, round2, type Detector } from '../detector';
import {
  CLOCK_CTE,
  HOURS_PER_MONTH,
  MONTH_OF_HOURS,
  label,
  num,
  priceSql,
  priorityFor,
  severityFor,
  text,
  unitPrice,
  metricWindowSql,
} from './common';

/** Days of metrics the check reads, and how many daily datapoints it needs to judge. */
export const CPU_WINDOW_DAYS = 30;
/** thrifty `ec2_instance_avg_cpu_utilization_low`: below it, alarm. */
export const CPU_LOW_PERCENT = 20;

/**
 * F7 — running EC2 instances with low CPU: over the last 30 days of daily CPUUtilization (all 30 daily
 * datapoints present), max(daily average) < 20 % ⇒ alarm. The cheaper fix than stopping a service is to
 * rightsize one size down within the family (m5.xlarge → m5.large): savings = (hourly price now −
 * hourly price one size down) × 730, from the price table of the instance's region, only when both
 * prices exist. (thrifty `instances_with_low_utilization`)
 */
export const ec2LowCpu: Detector = {
  id: 'finops.ec2_low_cpu',
  domain: 'finops',
  title: 'EC2 instances with low CPU (30 days)',
  sql: `
    with ${CLOCK_CTE},
    cpu as (
      select m.arn, count(*)::int as datapoints, min(m.day)::text as first_day, max(m.day)::text as last_day,
             max(m.avg) as max_daily_avg, round(avg(m.avg)::numeric, 2) as mean_daily_avg, max(m.max) as peak
      from metrics_daily m cross join clock
      where m.metric = 'CPUUtilization'
        and ${metricWindowSql(CPU_WINDOW_DAYS)}
      group by m.arn
    ),
    sizes(size, rank) as (
      values ('nano', 1), ('micro', 2), ('small', 3), ('medium', 4), ('large', 5), ('xlarge', 6),
             ('2xlarge', 7), ('4xlarge', 8), ('8xlarge', 9), ('12xlarge', 10), ('16xlarge', 11),
             ('24xlarge', 12), ('48xlarge', 13)
    )
    select i.arn, i.native_id, i.name, i.region,
           i.attributes->>'instance_type' as instance_type,
           down.instance_type as target_type,
           c.datapoints, c.first_day, c.last_day, c.max_daily_avg, c.mean_daily_avg, c.peak,
           pr.current_hourly, pr.target_hourly,
           round((pr.current_hourly - pr.target_hourly) * ${HOURS_PER_MONTH}, 2) as savings
    from resources i
    join cpu c on c.arn = i.arn
    left join sizes cur on cur.size = split_part(i.attributes->>'instance_type', '.', 2)
    left join sizes lower_size on lower_size.rank = cur.rank - 1
    cross join lateral (
      select split_part(i.attributes->>'instance_type', '.', 1) || '.' || lower_size.size as instance_type
    ) down
    cross join lateral (
      select ${priceSql(`'ec2:' || (i.attributes->>'instance_type') || ':hour'`, 'i.region')} as current_hourly,
             ${priceSql(`'ec2:' || down.instance_type || ':hour'`, 'i.region')} as target_hourly
    ) pr
    where i.type = 'aws_ec2_instance' and i.deleted_at is null
      and i.attributes->>'instance_state' = 'running'
      and c.datapoints >= ${CPU_WINDOW_DAYS}
      and c.max_daily_avg < ${CPU_LOW_PERCENT}
    order by i.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const type = String(row.instance_type);
      const target = text(row.target_type);
      const priced = row.current_hourly !== null && row.target_hourly !== null && target !== null;
      const maxAvg = num(row.max_daily_avg);
      const fix = priced
        ? `Rightsizing it one size down to ${target} saves ${money(savings)} a month`
        : target
          ? `One size down is ${target}, but the price table has no price for ${row.current_hourly === null ? type : target}, so no savings are claimed`
          : `${type} has no smaller size in its family, so no rightsizing savings are claimed (consider a smaller family or stopping it)`;
      return {
        rootKey: row.arn,
        title: `Instance ${label(row)} peaks at ${maxAvg}% average CPU: ${type} is oversized`,
        severity: severityFor(savings, 'low'),
        narrative: `EC2 instance ${label(row)}, type ${type} in ${String(row.region)}, never averaged more than ${maxAvg}% CPU on any day of the last ${CPU_WINDOW_DAYS} (mean ${num(row.mean_daily_avg)}%, highest daily maximum ${num(row.peak)}%), below the 20% low-utilisation threshold. ${fix}.`,
        confidence: 0.8,
        resources: [
          { arn: row.arn, actionType: 'rightsize', savings, measured: MONTH_OF_HOURS('instance-hours') },
        ],
        recommendation: {
          rationale: priced
            ? `This ${type} at under ${CPU_LOW_PERCENT}% daily average CPU pays for capacity it does not use; ${target} (one size down, ${unitPrice(row.target_hourly)}/h against ${unitPrice(row.current_hourly)}/h) fits the observed load. Check memory before resizing (a stop/start is needed).`
            : `Low CPU for ${CPU_WINDOW_DAYS} days: review whether a smaller instance or stopping it fits; no priced alternative is claimed.`,
          actionType: 'rightsize',
          savings,
          effort: 'medium',
          priority: priorityFor(savings, 'medium'),
        },
        reasoning: `${num(row.datapoints)} daily CPUUtilization datapoints from ${String(row.first_day)} to ${String(row.last_day)} (the check needs all ${CPU_WINDOW_DAYS}); max(daily avg) = ${maxAvg}% < ${CPU_LOW_PERCENT}% ⇒ low utilisation. ${priced ? `Rightsize ${type} → ${target}: (${unitPrice(row.current_hourly)} − ${unitPrice(row.target_hourly)})/h × ${HOURS_PER_MONTH} h = ${money(savings)}/month.` : `${fix}.`} Metric-based, so confidence 0.8.`,
      };
    });
  },
};
