import { money, round2, type Detector, type FindingDraft } from '../detector';
import {
  CLOCK_CTE,
  HOURS_PER_MONTH,
  ONE_ADDRESS,
  groupBy,
  label,
  num,
  plural,
  priceSql,
  priorityFor,
  severityFor,
  volumeCostSql,
} from './common';

/** Prowler `max_ec2_instance_stopped_days`. */
export const STOPPED_MAX_DAYS = 30;

/**
 * F8 — instances stopped for more than 30 days: `instance_state = 'stopped'` and the stop
 * (state_transition_time) more than 30 days before the inventory's clock. Compute is free while
 * stopped; what is still billed is the EBS volumes attached to it (size × $/GB-month of their type,
 * plus IOPS extras) and any Elastic IP associated with it ($/hour × 730). Terminating saves exactly that.
 * One finding per instance; its rows are the instance (savings 0), its volumes and its Elastic IPs.
 * (Prowler `ec2_instance_stopped_older_than_specific_days`)
 */
export const ec2StoppedLong: Detector = {
  id: 'finops.ec2_stopped_long',
  domain: 'finops',
  title: 'EC2 instances stopped for more than 30 days',
  sql: `
    with ${CLOCK_CTE},
    stopped as (
      select i.arn, i.native_id, i.name, i.region, i.account_id,
             i.attributes->>'instance_type' as instance_type,
             i.attributes->>'state_transition_time' as stopped_since,
             floor(extract(epoch from (clock.now - (i.attributes->>'state_transition_time')::timestamptz)) / 86400)::int
               as stopped_days
      from resources i cross join clock
      where i.type = 'aws_ec2_instance' and i.deleted_at is null
        and i.attributes->>'instance_state' = 'stopped'
        and (i.attributes->>'state_transition_time')::timestamptz < clock.now - interval '${STOPPED_MAX_DAYS} days'
    )
    select s.arn, 'instance' as part, s.arn as instance_arn, s.native_id as instance_id, s.name as instance_name,
           s.region, s.instance_type, s.stopped_since, s.stopped_days, s.native_id, s.name,
           null::text as volume_type, null::int as size_gb, 0::numeric as monthly_cost
    from stopped s
    union all
    select v.arn, 'volume', s.arn, s.native_id, s.name, s.region, s.instance_type, s.stopped_since, s.stopped_days,
           v.native_id, v.name, v.attributes->>'volume_type', (v.attributes->>'size')::int, ${volumeCostSql('v')}
    from stopped s
    join resources v
      on v.type = 'aws_ebs_volume' and v.deleted_at is null
     and v.account_id = s.account_id and v.region = s.region
     and exists (select 1 from jsonb_array_elements(coalesce(v.attributes->'attachments', '[]'::jsonb)) a
                 where a->>'instance_id' = s.native_id)
    union all
    select e.arn, 'eip', s.arn, s.native_id, s.name, s.region, s.instance_type, s.stopped_since, s.stopped_days,
           e.native_id, e.name, null, null,
           round(${priceSql(`'ec2:public_ipv4:hour'`, 'e.region')} * ${HOURS_PER_MONTH}, 2)
    from stopped s
    join resources e
      on e.type = 'aws_vpc_eip' and e.deleted_at is null
     and e.account_id = s.account_id and e.region = s.region
     and e.attributes->>'instance_id' = s.native_id
    order by instance_arn, arn`,
  findings(rows) {
    const drafts: FindingDraft[] = [];
    for (const [instanceArn, group] of groupBy(rows, (r) => String(r.instance_arn))) {
      const inst = group.find((r) => r.part === 'instance') ?? group[0]!;
      const volumes = group.filter((r) => r.part === 'volume');
      const eips = group.filter((r) => r.part === 'eip');
      const volumeCost = round2(volumes.reduce((s, r) => s + num(r.monthly_cost), 0));
      const eipCost = round2(eips.reduce((s, r) => s + num(r.monthly_cost), 0));
      const total = round2(volumeCost + eipCost);
      const days = num(inst.stopped_days);
      const name = label(inst, 'instance_id', 'instance_name');
      const volumeText = volumes
        .map(
          (v) =>
            `${label(v)} ${v.size_gb} GiB ${String(v.volume_type)} ${money(round2(num(v.monthly_cost)))}`,
        )
        .join(', ');
      const eipText = eips.map((e) => `${label(e)} ${money(round2(num(e.monthly_cost)))}`).join(', ');
      const billed = [
        volumes.length ? `${plural(volumes.length, 'EBS volume')} (${volumeText})` : '',
        eips.length ? `${plural(eips.length, 'Elastic IP')} (${eipText})` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      drafts.push({
        rootKey: instanceArn,
        title: `Instance ${name} has been stopped for ${days} days`,
        severity: severityFor(total, 'low'),
        narrative: `EC2 instance ${name}, type ${String(inst.instance_type)} in ${String(inst.region)}, was stopped ${days} days ago (${String(inst.stopped_since)}), past the ${STOPPED_MAX_DAYS}-day mark. Its compute costs nothing while stopped, but ${billed || 'nothing attached to it'} ${billed ? `${volumes.length + eips.length > 1 ? 'are' : 'is'} still billed: ${money(total)} a month` : 'is billed'}. If nobody has needed it in ${days} days, snapshot what must be kept and terminate it.`,
        confidence: 0.95,
        resources: [
          // A stopped instance bills no instance-hours; its volumes (GiB) and addresses still bill.
          {
            arn: inst.arn,
            actionType: 'terminate',
            savings: 0,
            measured: { value: 0, unit: 'instance-hours' },
          },
          ...volumes.map((v) => ({
            arn: v.arn,
            actionType: 'terminate',
            savings: round2(num(v.monthly_cost)),
          })),
          ...eips.map((e) => ({
            arn: e.arn,
            actionType: 'release',
            savings: round2(num(e.monthly_cost)),
            measured: ONE_ADDRESS,
          })),
        ],
        recommendation: {
          rationale: `A long-stopped instance is usually forgotten, while what is attached to it keeps costing ${money(total)}/month. Terminating it (after a snapshot or AMI if in doubt) removes that cost; the instance itself saves nothing more, being stopped.`,
          actionType: 'terminate',
          savings: total,
          effort: 'low',
          priority: priorityFor(total),
        },
        reasoning: `instance_state = 'stopped' since ${String(inst.stopped_since)}: ${days} days before the inventory's clock (> ${STOPPED_MAX_DAYS}). Compute while stopped: $0.00. Still billed: ${billed ? `${volumes.length ? `EBS ${money(volumeCost)} (each volume's size × its type's $/GB-month from the price table)` : ''}${volumes.length && eips.length ? ' + ' : ''}${eips.length ? `public IPv4 ${money(eipCost)} ($/hour × ${HOURS_PER_MONTH})` : ''}` : 'nothing attached'} = ${money(total)}/month, the savings of terminating.`,
      });
    }
    return drafts;
  },
};
