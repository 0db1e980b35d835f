import { money, round2, type Detector } from '../detector';
import { CLOCK_CTE, label, num, priceSql, priorityFor, severityFor, volumeCostSql } from './common';

/**
 * F2 — EBS volumes attached only to stopped instances: the volume has attachments, and every instance
 * it is attached to is in the inventory and `instance_state = 'stopped'` (none running). A stopped
 * instance costs nothing for compute, but its volumes are billed in full. Snapshotting then deleting
 * saves the volume's monthly cost (size × $/GB-month of its type, plus provisioned IOPS), less the
 * snapshot kept, which we state apart. (thrifty `ebs_volumes_on_stopped_instances`)
 */
export const ebsOnStoppedInstances: Detector = {
  id: 'finops.ebs_on_stopped_instances',
  domain: 'finops',
  title: 'EBS volumes attached only to stopped instances',
  sql: `
    with ${CLOCK_CTE},
    attached as (
      select v.arn as volume_arn, v.account_id, v.region, a->>'instance_id' as instance_id
      from resources v
      cross join lateral jsonb_array_elements(coalesce(v.attributes->'attachments', '[]'::jsonb)) a
      where v.type = 'aws_ebs_volume' and v.deleted_at is null
    ),
    per_volume as (
      select t.volume_arn,
             count(*)::int as attached,
             count(i.arn) filter (where i.attributes->>'instance_state' = 'stopped')::int as stopped,
             string_agg(t.instance_id, ', ' order by t.instance_id) as instance_ids,
             string_agg(coalesce(i.name, t.instance_id), ', ' order by t.instance_id) as instance_names,
             max(i.attributes->>'state_transition_time') as stopped_since
      from attached t
      left join resources i
        on i.native_id = t.instance_id and i.type = 'aws_ec2_instance' and i.deleted_at is null
       and i.account_id = t.account_id and i.region = t.region
      group by t.volume_arn
    )
    select v.arn, v.native_id, v.name, v.region,
           v.attributes->>'volume_type' as volume_type,
           (v.attributes->>'size')::int as size_gb,
           (v.attributes->>'iops')::int as iops,
           s.attached, s.stopped, s.instance_ids, s.instance_names, s.stopped_since,
           floor(extract(epoch from (clock.now - s.stopped_since::timestamptz)) / 86400)::int as stopped_days,
           ${volumeCostSql('v')} as monthly_cost,
           round((v.attributes->>'size')::numeric * ${priceSql(`'ebs:snapshot:gb_month'`, 'v.region')}, 2)
             as snapshot_monthly_cost
    from per_volume s
    join resources v on v.arn = s.volume_arn and v.type = 'aws_ebs_volume' and v.deleted_at is null
    cross join clock
    where s.attached > 0 and s.stopped = s.attached
    order by v.arn`,
  findings(rows) {
    return rows.map((row) => {
      const cost = round2(num(row.monthly_cost));
      const snapshot = round2(num(row.snapshot_monthly_cost));
      const vol = label(row);
      const instances = String(row.instance_names);
      const since = row.stopped_days === null ? '' : ` for ${num(row.stopped_days)} days`;
      return {
        rootKey: row.arn,
        title: `EBS volume ${vol} is paid for while ${instances} stays stopped`,
        severity: severityFor(cost),
        narrative: `EBS volume ${vol} in ${String(row.region)} is attached only to stopped instance${num(row.attached) > 1 ? 's' : ''} ${instances} (${String(row.instance_ids)}), stopped${since}. A stopped instance costs nothing for compute, but this ${row.size_gb} GiB ${String(row.volume_type)} volume is still billed ${money(cost)} a month. If the data matters, keep a snapshot (at most ${money(snapshot)}/month: snapshots are incremental), then delete the volume.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'snapshot-and-delete', savings: cost }],
        recommendation: {
          rationale: `Nothing runs on ${instances}, so the volume serves no one while it costs ${money(cost)}/month. A snapshot keeps the data restorable for at most ${money(snapshot)}/month; deleting the volume saves ${money(cost)}/month.`,
          actionType: 'snapshot-and-delete',
          savings: cost,
          effort: 'low',
          priority: priorityFor(cost),
        },
        reasoning: `${String(row.native_id)} has ${row.attached} attachment(s); ${row.stopped} of them on instances in state 'stopped' (${String(row.instance_ids)}), none running${since ? `; stopped since ${String(row.stopped_since)}${since}` : ''}. Monthly cost from the price table: ${row.size_gb} GiB × ${String(row.volume_type)} $/GB-month${row.iops && row.volume_type !== 'gp2' ? ` (+ IOPS extras)` : ''} = ${money(cost)}; savings of snapshot-and-delete = the whole volume cost, ${money(cost)}. A snapshot of it would cost at most ${row.size_gb} GiB × snapshot $/GB-month = ${money(snapshot)} (an upper bound, not subtracted).`,
      };
    });
  },
};
