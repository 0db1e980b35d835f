import { money, round2, type Detector } from '../detector';
import {
  CLOCK_CTE,
  HOURS_PER_MONTH,
  label,
  num,
  priceSql,
  priorityFor,
  severityFor,
  unitPrice,
  metricWindowSql,
} from './common';

/** Days of DatabaseConnections the check reads (all of them must be there). */
export const RDS_WINDOW_DAYS = 30;

/**
 * F12 — idle RDS instances: over the last 30 days (all 30 daily datapoints present), the maximum of
 * DatabaseConnections is 0 ⇒ alarm. Deleting it (after a final snapshot) saves its whole monthly cost:
 * instance hours × 730 (Multi-AZ at the Multi-AZ price, twice the single-AZ one when only that is
 * listed) + allocated storage × $/GB-month of its storage type and deployment, from the price table of
 * its region. (thrifty `rds_db_low_connection_count`; Custodian `rdsdeleteunused`)
 */
export const rdsIdle: Detector = {
  id: 'finops.rds_idle',
  domain: 'finops',
  title: 'Idle RDS instances (no connections in 30 days)',
  sql: `
    with ${CLOCK_CTE},
    connections as (
      select m.arn, count(*)::int as datapoints, max(m.max) as max_connections,
             min(m.day)::text as first_day, max(m.day)::text as last_day
      from metrics_daily m cross join clock
      where m.metric = 'DatabaseConnections'
        and ${metricWindowSql(RDS_WINDOW_DAYS)}
      group by m.arn
    )
    select d.arn, d.native_id, d.name, d.region,
           d.attributes->>'engine' as engine,
           d.attributes->>'class' as db_class,
           (d.attributes->>'multi_az')::boolean as multi_az,
           d.attributes->>'status' as status,
           d.attributes->>'storage_type' as storage_type,
           (d.attributes->>'allocated_storage')::int as allocated_gb,
           (d.attributes->>'deletion_protection')::boolean as deletion_protection,
           c.datapoints, c.max_connections, c.first_day, c.last_day,
           pr.single_hourly, pr.multi_hourly, pr.storage_gb_month,
           case when (d.attributes->>'multi_az')::boolean then coalesce(pr.multi_hourly, 2 * pr.single_hourly)
                else pr.single_hourly end as hourly,
           case when d.attributes->>'status' = 'stopped' then 0
                else round(case when (d.attributes->>'multi_az')::boolean
                                then coalesce(pr.multi_hourly, 2 * pr.single_hourly)
                                else pr.single_hourly end * ${HOURS_PER_MONTH}, 2) end as instance_monthly,
           round((d.attributes->>'allocated_storage')::numeric * pr.storage_gb_month, 2) as storage_monthly
    from resources d
    join connections c on c.arn = d.arn
    cross join lateral (
      select ${priceSql(`'rds:' || (d.attributes->>'engine') || ':' || (d.attributes->>'class') || ':single:hour'`, 'd.region')}
               as single_hourly,
             ${priceSql(`'rds:' || (d.attributes->>'engine') || ':' || (d.attributes->>'class') || ':multi:hour'`, 'd.region')}
               as multi_hourly,
             ${priceSql(
               `'rds:storage:' || (d.attributes->>'storage_type') || ':'
                || case when (d.attributes->>'multi_az')::boolean then 'multi' else 'single' end || ':gb_month'`,
               'd.region',
             )} as storage_gb_month
    ) pr
    where d.type = 'aws_rds_db_instance' and d.deleted_at is null
      and c.datapoints >= ${RDS_WINDOW_DAYS}
      and c.max_connections = 0
    order by d.arn`,
  findings(rows) {
    return rows.map((row) => {
      const instance = row.instance_monthly === null ? null : round2(num(row.instance_monthly));
      const storage = row.storage_monthly === null ? null : round2(num(row.storage_monthly));
      const priced = instance !== null && storage !== null;
      const savings = priced ? round2(instance + storage) : 0;
      const multi = row.multi_az === true;
      const deployment = multi ? 'Multi-AZ' : 'Single-AZ';
      const gb = num(row.allocated_gb);
      return {
        rootKey: row.arn,
        title: `RDS instance ${label(row)} had no connections in ${RDS_WINDOW_DAYS} days`,
        severity: severityFor(savings, 'low'),
        narrative: `RDS ${String(row.engine)} instance ${label(row)} (${String(row.db_class)}, ${deployment}, ${gb} GiB ${String(row.storage_type)}, ${String(row.region)}) had no connection at all on any day from ${String(row.first_day)} to ${String(row.last_day)} (daily maximum 0): nothing uses it. ${priced ? `It costs ${money(savings)} a month (${money(instance)} instance hours + ${money(storage)} storage).` : 'The price table has no price for its class or storage, so no savings are claimed.'} Take a final snapshot and delete it${row.deletion_protection === true ? ' (deletion protection is on: turn it off first)' : ''}.`,
        confidence: 0.8,
        resources: [{ arn: row.arn, actionType: 'delete', savings }],
        recommendation: {
          rationale: `A database no client connected to for ${RDS_WINDOW_DAYS} days is not serving anyone. A final snapshot keeps the data restorable (snapshot storage is billed separately, at a fraction of the cost); deleting the instance saves ${money(savings)}/month.`,
          actionType: 'delete',
          savings,
          effort: 'medium',
          priority: priorityFor(savings, 'medium'),
        },
        reasoning: `${num(row.datapoints)} daily DatabaseConnections datapoints from ${String(row.first_day)} to ${String(row.last_day)} (the check needs all ${RDS_WINDOW_DAYS}); max = ${num(row.max_connections)} ⇒ idle. ${priced ? `Instance: ${unitPrice(row.hourly)}/h${multi ? (row.multi_hourly === null ? ` (2 × single-AZ ${unitPrice(row.single_hourly)}, Multi-AZ)` : ' (Multi-AZ price)') : ''} × ${HOURS_PER_MONTH} h = ${money(instance)}; storage: ${gb} GiB × ${unitPrice(row.storage_gb_month)}/GB-month (${deployment}) = ${money(storage)}; total ${money(savings)}/month.` : 'No price for the class or storage: savings $0.00.'} Metric-based, so confidence 0.8.`,
      };
    });
  },
};
