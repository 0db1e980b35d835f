import { money, round2, type Detector } from '../detector';
import {
  CLOCK_CTE,
  HOURS_PER_MONTH,
  label,
  ONE_ADDRESS,
  num,
  priceSql,
  priorityFor,
  severityFor,
  unitPrice,
} from './common';

/**
 * F6 — Elastic IPs associated with nothing: `association_id is null`. Every public IPv4 address is
 * billed by the hour ($0.005/h × 730 = $3.65/month at list price), so releasing an idle one saves its
 * hourly price × 730. (thrifty `unattached_eips`; Prowler `ec2_elastic_ip_unassigned`; CloudQuery
 * `unused_ec2_eips`)
 */
export const eipUnassociated: Detector = {
  id: 'finops.eip_unassociated',
  domain: 'finops',
  title: 'Unassociated Elastic IPs',
  sql: `
    with ${CLOCK_CTE}
    select e.arn, e.native_id, e.name, e.region,
           e.attributes->>'public_ip' as public_ip,
           e.attributes->>'allocation_time' as allocation_time,
           floor(extract(epoch from (clock.now - (e.attributes->>'allocation_time')::timestamptz)) / 86400)::int
             as idle_days,
           ${priceSql(`'ec2:public_ipv4:hour'`, 'e.region')} as hourly,
           round(${priceSql(`'ec2:public_ipv4:hour'`, 'e.region')} * ${HOURS_PER_MONTH}, 2) as savings
    from resources e
    cross join clock
    where e.type = 'aws_vpc_eip' and e.deleted_at is null
      and e.attributes->>'association_id' is null
    order by e.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const days = row.idle_days === null ? null : num(row.idle_days);
      const ip = `${label(row)}${row.public_ip ? `, ${String(row.public_ip)}` : ''}`;
      return {
        rootKey: row.arn,
        title: `Elastic IP ${ip} is associated with nothing`,
        severity: severityFor(savings),
        narrative: `Elastic IP ${ip} in ${String(row.region)} is not associated with any instance or network interface${days !== null ? ` (allocated ${days === 1 ? '1 day' : `${days} days`} ago)` : ''}. Since February 2024 AWS bills every public IPv4 address, used or not: this one costs ${money(savings)} a month for nothing. Release it unless something (an allowlist, a DNS record) depends on the address itself.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'release', savings, measured: ONE_ADDRESS }],
        recommendation: {
          rationale: `An unassociated address serves no traffic but is billed ${unitPrice(row.hourly)}/hour; releasing it saves ${money(savings)}/month. If a partner allowlists it, reassociate it instead.`,
          actionType: 'release',
          savings,
          effort: 'low',
          priority: priorityFor(savings),
        },
        reasoning: `association_id is null for ${String(row.native_id)}. Public IPv4 price ${unitPrice(row.hourly)}/hour × ${HOURS_PER_MONTH} h = ${money(savings)}/month${days !== null ? `; allocated ${String(row.allocation_time)} (${days === 1 ? '1 day' : `${days} days`} ago), so up to ${money(num(row.hourly) * 24 * days)} billed since, if it was never associated` : ''}.`,
      };
    });
  },
};
