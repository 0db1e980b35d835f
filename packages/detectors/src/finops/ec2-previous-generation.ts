import { money, round2, type Detector } from '../detector';
import {
  HOURS_PER_MONTH,
  label,
  MONTH_OF_HOURS,
  num,
  priceSql,
  priorityFor,
  severityFor,
  unitPrice,
} from './common';

/**
 * F11 — previous-generation instance types: EC2 `t2.*`, `m3.*`, `m4.*`, `c4.*`, `r4.*`, and RDS classes
 * `db.t2.*`, `db.m3.*`, `db.m4.*`, `db.r3.*`, `db.r4.*`. The current generation of the same family and
 * size (t2 → t3, m3/m4 → m5, c4 → c5, r3/r4 → r5) is faster and usually cheaper: savings =
 * (price now − price of the successor) × 730 when both prices exist in the region and the resource is
 * running (a stopped instance bills no compute). (thrifty `ec2_instance_older_generation`,
 * `latest_rds_instance_types`)
 */
export const ec2PreviousGeneration: Detector = {
  id: 'finops.ec2_previous_generation',
  domain: 'finops',
  title: 'Previous-generation instance types',
  sql: `
    with families(service, old, new) as (
      values ('ec2', 't2', 't3'), ('ec2', 'm3', 'm5'), ('ec2', 'm4', 'm5'), ('ec2', 'c4', 'c5'), ('ec2', 'r4', 'r5'),
             ('rds', 'db.t2', 'db.t3'), ('rds', 'db.m3', 'db.m5'), ('rds', 'db.m4', 'db.m5'),
             ('rds', 'db.r3', 'db.r5'), ('rds', 'db.r4', 'db.r5')
    ),
    candidates as (
      select r.arn, r.native_id, r.name, r.region, 'ec2' as service,
             r.attributes->>'instance_type' as current_type,
             f.new || '.' || split_part(r.attributes->>'instance_type', '.', 2) as successor_type,
             r.attributes->>'instance_state' as state,
             r.attributes->>'instance_state' = 'running' as billed,
             'ec2:' as sku_prefix, ':hour' as sku_suffix
      from resources r
      join families f on f.service = 'ec2' and f.old = split_part(r.attributes->>'instance_type', '.', 1)
      where r.type = 'aws_ec2_instance' and r.deleted_at is null
      union all
      select r.arn, r.native_id, r.name, r.region, 'rds',
             r.attributes->>'class',
             f.new || '.' || split_part(r.attributes->>'class', '.', 3),
             r.attributes->>'status',
             coalesce(r.attributes->>'status', 'available') <> 'stopped',
             'rds:' || (r.attributes->>'engine') || ':',
             case when (r.attributes->>'multi_az')::boolean then ':multi:hour' else ':single:hour' end
      from resources r
      join families f on f.service = 'rds' and f.old = 'db.' || split_part(r.attributes->>'class', '.', 2)
      where r.type = 'aws_rds_db_instance' and r.deleted_at is null
    )
    select c.arn, c.native_id, c.name, c.region, c.service, c.current_type, c.successor_type, c.state, c.billed,
           pr.current_hourly, pr.successor_hourly,
           case when c.billed then round((pr.current_hourly - pr.successor_hourly) * ${HOURS_PER_MONTH}, 2) else 0 end
             as savings
    from candidates c
    cross join lateral (
      select ${priceSql('c.sku_prefix || c.current_type || c.sku_suffix', 'c.region')} as current_hourly,
             ${priceSql('c.sku_prefix || c.successor_type || c.sku_suffix', 'c.region')} as successor_hourly
    ) pr
    order by c.arn`,
  findings(rows) {
    return rows.map((row) => {
      const priced = row.current_hourly !== null && row.successor_hourly !== null;
      const savings = priced ? Math.max(0, round2(num(row.savings))) : 0;
      const what = row.service === 'rds' ? 'RDS instance' : 'EC2 instance';
      const from = String(row.current_type);
      const to = String(row.successor_type);
      const money_ = priced
        ? row.billed
          ? `${to} lists at ${unitPrice(row.successor_hourly)}/h against ${unitPrice(row.current_hourly)}/h: ${money(savings)} a month less`
          : `it is ${String(row.state)}, so no compute is billed now and no savings are claimed`
        : `the price table has no price for ${row.current_hourly === null ? from : to} in ${String(row.region)}, so no savings are claimed`;
      return {
        rootKey: row.arn,
        title: `${what} ${label(row)} runs previous-generation ${from}`,
        severity: severityFor(savings, 'low'),
        narrative: `${what} ${label(row)} in ${String(row.region)} is a ${from}, a previous-generation type. Its current-generation successor ${to} has the same size with newer processors and networking; ${money_}.`,
        confidence: 0.95,
        // Compute is billed by the hour while it runs: a month of instance-hours, none while stopped.
        resources: [
          {
            arn: row.arn,
            actionType: 'modernize',
            savings,
            measured: row.billed ? MONTH_OF_HOURS('instance-hours') : { value: 0, unit: 'instance-hours' },
          },
        ],
        recommendation: {
          rationale: `Previous generations cost as much or more for less performance and are retired first. Change the type to ${to} at the next maintenance window (a stop/start${row.service === 'rds' ? ' or a Multi-AZ failover' : ''})${savings ? `: ${money(savings)}/month` : ''}.`,
          actionType: 'modernize',
          savings,
          effort: 'medium',
          priority: priorityFor(savings, 'medium'),
        },
        reasoning: `${row.service === 'rds' ? 'class' : 'instance_type'} = '${from}' matches the previous-generation families; successor ${to}. ${priced ? (row.billed ? `(${unitPrice(row.current_hourly)} − ${unitPrice(row.successor_hourly)})/h × ${HOURS_PER_MONTH} h = ${money(savings)}/month.` : `State ${String(row.state)}: nothing billed for compute, savings $0.00.`) : `No price for ${row.current_hourly === null ? from : to}: savings $0.00.`}`,
      };
    });
  },
};
