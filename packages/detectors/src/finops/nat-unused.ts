import { money, round2, type Detector, type Measured } from '../detector';
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

/** GB (10^9 bytes, as AWS bills data processing) sent through the gateway over the window. */
function gbProcessed(bytes: unknown): Measured {
  return {
    value: bytes === null ? 0 : Math.round(num(bytes) / 1e6) / 1000,
    unit: `GB processed in ${NAT_WINDOW_DAYS} d`,
  };
}

/** Days of BytesOutToDestination the check sums. */
export const NAT_WINDOW_DAYS = 30;

/**
 * F10 — unused NAT gateways: `state <> 'available'` OR sum(BytesOutToDestination) over the last 30
 * days = 0. Deleting an available one saves its hourly price × 730 ($0.045/h = $32.85/month, before
 * per-GB processing, which is zero here anyway); one that is not available is not billed hourly, so
 * it saves nothing but clutter. (thrifty `vpc_nat_gateway_unused`)
 */
export const natUnused: Detector = {
  id: 'finops.nat_unused',
  domain: 'finops',
  title: 'Unused NAT gateways',
  sql: `
    with ${CLOCK_CTE},
    traffic as (
      select m.arn, count(*)::int as datapoints, sum(m.sum) as bytes_out,
             min(m.day)::text as first_day, max(m.day)::text as last_day
      from metrics_daily m cross join clock
      where m.metric = 'BytesOutToDestination'
        and ${metricWindowSql(NAT_WINDOW_DAYS)}
      group by m.arn
    )
    select n.arn, n.native_id, n.name, n.region,
           n.attributes->>'state' as state,
           n.attributes->>'subnet_id' as subnet_id,
           n.attributes->>'vpc_id' as vpc_id,
           t.datapoints, t.bytes_out, t.first_day, t.last_day,
           ${priceSql(`'vpc:nat_gateway:hour'`, 'n.region')} as hourly,
           case when n.attributes->>'state' = 'available'
                then round(${priceSql(`'vpc:nat_gateway:hour'`, 'n.region')} * ${HOURS_PER_MONTH}, 2)
                else 0 end as savings
    from resources n
    left join traffic t on t.arn = n.arn
    where n.type = 'aws_vpc_nat_gateway' and n.deleted_at is null
      and (n.attributes->>'state' <> 'available' or t.bytes_out = 0)
    order by n.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const available = row.state === 'available';
      const idle = row.bytes_out !== null && num(row.bytes_out) === 0;
      const why = idle
        ? `sent 0 bytes to destinations over the last ${num(row.datapoints)} days of metrics (${String(row.first_day)} to ${String(row.last_day)})`
        : `is in state '${String(row.state)}'`;
      return {
        rootKey: row.arn,
        title: `NAT gateway ${label(row)} ${idle ? 'carried no traffic in 30 days' : `is ${String(row.state)}`}`,
        severity: severityFor(savings),
        narrative: `NAT gateway ${label(row)} in ${String(row.region)} (VPC ${String(row.vpc_id)}) ${why}${idle && !available ? ` and is in state '${String(row.state)}'` : ''}. ${available ? `It is billed ${money(savings)} a month for the hours alone. If no route still needs it, delete it (and release its Elastic IP).` : 'It is not billed hourly in that state; delete it to keep the network readable.'}`,
        confidence: idle ? 0.8 : 0.95,
        // Billed per GB processed (and per hour): the GB it processed in the window, 0 without datapoints.
        resources: [{ arn: row.arn, actionType: 'delete', savings, measured: gbProcessed(row.bytes_out) }],
        recommendation: {
          rationale: available
            ? `No traffic went through it in ${NAT_WINDOW_DAYS} days, so the private subnets routed to it do not need Internet egress (or use another path); deleting it saves ${unitPrice(row.hourly)}/hour, ${money(savings)}/month. Remove the routes that point at it first.`
            : `A NAT gateway that is not available carries no traffic; deleting it tidies the VPC (no hourly charge to save).`,
          actionType: 'delete',
          savings,
          effort: 'low',
          priority: priorityFor(savings),
        },
        reasoning: `state = '${String(row.state)}'; sum(BytesOutToDestination) over ${row.datapoints === null ? 'no datapoints' : `${num(row.datapoints)} daily datapoints`} of the last ${NAT_WINDOW_DAYS} days = ${row.bytes_out === null ? 'unknown' : num(row.bytes_out)} ⇒ unused (${available ? '' : "state <> 'available'"}${available ? 'no traffic' : idle ? ' and no traffic' : ''}). ${available ? `NAT price ${unitPrice(row.hourly)}/hour × ${HOURS_PER_MONTH} h = ${money(savings)}/month (per-GB processing: 0 bytes, $0).` : 'Not available ⇒ no hourly charge; savings $0.00.'}`,
      };
    });
  },
};
